// Enumeration of the parallel layouts of a job (the first stage of `lostflops
// search`, issue 8): every way to cut the job's GPUs and global batch into
// tp x cp x pp x dp groups, virtual stages, expert groups and micro-batches
// that the plan checks of job/validate.cpp accept — no more, no fewer (tests
// hold the two against each other on hand-countable jobs).
//
// Preconditions: the job's model, cluster and training came from load_job
// (model-level checks such as hidden % heads passed); its `plan` is ignored.
// No allocation per layout; the order is fixed (tp, cp, pp, micro-batch,
// vpp, ep ascending), so the same job gives the same sequence.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "lostflops/search.h"
#include "lostflops/spec.h"

namespace lostflops::search {

using Layout = SearchLayout;

// Layout settings the user fixed (0: free). A candidate that disagrees with
// one is not a candidate: it is neither visited nor counted.
struct LayoutFix {
    int tp = 0, cp = 0, pp = 0, dp = 0, vpp = 0, ep = 0;
    int64_t micro_batch = 0;
    int etp = 0;
    int dispatcher = -1;  // a MoeDispatcher; -1: free
    int a2a_overlap = -1; // moe_a2a_overlap 0 or 1; -1: free
    // A LaunchStack whose layout rules (lostflops/framework_rules.h, those
    // that do not depend on zero) a layout must meet; -1: none.
    int launch = -1;
};

struct LayoutCounts {
    int64_t candidates = 0;  // every combination walked (see enumerate_layouts)
    int64_t valid = 0;       // layouts passed to visit
};

// Candidates the rules reject, in runs: `layout` (its vpp the first of the
// run) for every vpp from layout.vpp to vpp_last, each `times` over (the
// micro-batches and the (ep, etp) values of the run; layout.micro_batch,
// layout.ep and layout.etp are the first of them). Everything a run stands for has the
// layout's tp, cp, pp and dp.
struct RejectedRun {
    Layout layout;
    int vpp_last = 1;
    int64_t times = 1;
};

// The outer loops of the enumeration: tp, cp, pp over divisors of num_gpus
// (dp follows), those that agree with `fix`, in order.
struct Shape {
    int tp = 1, cp = 1, pp = 1, dp = 1;
};
std::vector<Shape> enumerate_shapes(const Job& job, const LayoutFix& fix = {});

// The candidates of one shape — micro-batch over divisors of the global
// batch, vpp from 1 to layers/pp (1 without a pipeline), ep over divisors of
// the experts (1 for a dense model) with etp 1 or tp (MoE models), the
// dispatcher as fixed (else alltoall, for search_plans to choose), and where
// Megatron-Core can overlap the expert all-to-all each such layout without
// and with it (enumerate.cpp) — calling visit(layout) for every valid
// one and rejected(run) for the others, in a fixed order.
LayoutCounts enumerate_shape(const Job& job, const Shape& shape, const std::function<void(const Layout&)>& visit,
                             const std::function<void(const RejectedRun&)>& rejected = {}, const LayoutFix& fix = {});

// Every shape's candidates in turn (enumerate_shapes, enumerate_shape): every
// valid layout, in a fixed order (tp, cp, pp, micro-batch, vpp, ep
// ascending).
LayoutCounts enumerate_layouts(const Job& job, const std::function<void(const Layout&)>& visit,
                               const std::function<void(const RejectedRun&)>& rejected = {},
                               const LayoutFix& fix = {});

// `job` with its plan cut as `layout` and the micro-batch size set; every
// other plan setting (zero, recompute, overlap, ...) kept.
Job with_layout(const Job& job, const Layout& layout);
// `p` cut as `layout` (tp, cp, pp, dp, vpp, ep; the micro-batch lives in Training).
void apply_layout(ParallelPlan& p, const Layout& layout);

// Groups of alike layouts, for what the search derives once per group (the
// MoE dispatcher, the step floor): within each run of equal tp, cp, pp and
// micro-batch, which the enumeration keeps together (vpp, ep and the rest
// vary inside), the layouts `same(a, b)` holds alike share the group of the
// first of them. Returns each layout's group; `firsts` gets each group's
// first layout. O(layouts x groups in a run).
template <class Same>
std::vector<uint32_t> group_in_runs(const std::vector<Layout>& layouts, Same same, std::vector<size_t>& firsts) {
    std::vector<uint32_t> group(layouts.size());
    size_t run_first_group = firsts.size();
    for (size_t i = 0; i < layouts.size(); ++i) {
        const Layout& l = layouts[i];
        if (i > 0) {
            const Layout& q = layouts[i - 1];
            if (l.tp != q.tp || l.cp != q.cp || l.pp != q.pp || l.micro_batch != q.micro_batch)
                run_first_group = firsts.size();
        }
        size_t g = run_first_group;
        while (g < firsts.size() && !same(layouts[firsts[g]], l)) ++g;
        if (g == firsts.size()) firsts.push_back(i);
        group[i] = static_cast<uint32_t>(g);
    }
    return group;
}

}  // namespace lostflops::search
