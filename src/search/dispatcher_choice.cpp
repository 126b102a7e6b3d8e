// Fastest dispatcher of a layout: expert_dispatch_s (cost/expert_dispatch.cpp)
// for each of alltoall, allgather, deepep on the layout's folded groups; the
// first of the fastest in that order wins a tie. A layout that overlaps the
// all-to-all (moe_a2a_overlap) takes alltoall or deepep: Megatron-Core runs
// the overlap with those alone (lostflops/framework_rules.h a2a_overlap_setup);
// a search held to a stack's rules (PlanFix::launch) takes one that stack
// runs (its rules on parallel.moe_dispatcher: torchtitan has no all-gather).
#include "search/dispatcher_choice.h"

#include <algorithm>

#include "cost/expert_dispatch.h"
#include "lostflops/framework_rules.h"
#include "search/enumerate.h"

namespace lostflops::search {

MoeDispatcher fastest_dispatcher(const Job& job, const Calibration& cal, const SearchLayout& l,
                                 std::optional<LaunchStack> launch) {
    if (!job.model.is_moe() || l.ep <= 1) return MoeDispatcher::alltoall;
    ParallelPlan p = job.plan;
    p.tp = l.tp;
    p.cp = l.cp;
    p.pp = l.pp;
    p.dp = l.dp;
    p.ep = l.ep;
    p.etp = l.etp;
    p.vpp = l.vpp;
    p.moe_a2a_overlap = l.a2a_overlap;
    const ExpertGroups g = place_expert_groups(p, topology_of(job.cluster));
    const CommModel cm = make_comm_model(job.cluster, cal);
    int top_k = 0;
    for (const LayerKind& k : job.model.kinds())
        if (k.is_moe()) top_k = std::max(top_k, k.moe.top_k);
    const double tokens = static_cast<double>(l.micro_batch) * job.training.seq_length / (static_cast<double>(l.cp) * l.tp);
    const double bytes = 2.0 * static_cast<double>(job.model.hidden);
    const bool fp8 = job.training.precision == Precision::fp8 && p.moe_fp8_dispatch;  // as stage_time.cpp
    // Whether `launch` refuses the dispatcher of `p`.
    const auto refused = [&] {
        return launch && breaks_rule_on(job.model, launch_plan(p), *launch, "parallel.moe_dispatcher", false);
    };
    MoeDispatcher best = MoeDispatcher::alltoall;
    double best_s = 0;
    bool found = false;
    for (MoeDispatcher d : {MoeDispatcher::alltoall, MoeDispatcher::allgather, MoeDispatcher::deepep}) {
        if (l.a2a_overlap && d == MoeDispatcher::allgather) continue;
        p.moe_dispatcher = d;
        if (refused()) continue;
        const double s = expert_dispatch_s(cm, g, p, tokens, top_k, bytes, fp8) +
                         expert_dispatch_s(cm, g, p, tokens, top_k, bytes, false);
        if (!found || s < best_s) {
            found = true;
            best = d;
            best_s = s;
        }
    }
    return best;
}

void choose_dispatchers(const Job& job, const Calibration& cal, std::vector<SearchLayout>& layouts,
                        std::optional<LaunchStack> launch) {
    std::vector<size_t> firsts;
    const std::vector<uint32_t> group = group_in_runs(
        layouts,
        [](const SearchLayout& a, const SearchLayout& b) {
            return a.ep == b.ep && a.etp == b.etp && a.a2a_overlap == b.a2a_overlap;
        },
        firsts);
    for (const size_t i : firsts) layouts[i].dispatcher = fastest_dispatcher(job, cal, layouts[i], launch);
    for (size_t i = 0; i < layouts.size(); ++i) layouts[i].dispatcher = layouts[firsts[group[i]]].dispatcher;
}

}  // namespace lostflops::search
