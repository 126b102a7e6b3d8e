// The search's space of layouts (the first stage of search_plans): every
// valid layout of a job in enumeration order, with the number of plans of
// the valid layouts and of the rejected candidates, the shapes (tp, cp, pp)
// split across worker threads as the evaluation is. Internal to search.
#pragma once

#include <cstdint>
#include <vector>

#include "lostflops/search.h"
#include "search/enumerate.h"

namespace lostflops::search {

// Plans of a layout (knob_set(with_layout(job, l), fix).count()) without a
// Job copy per layout: the knobs depend on tp, cp, pp, dp and vpp, and
// through the launch rules on ep and etp (torchtitan's expert region and
// Megatron-LM's ZeRO 3 look at ep: lostflops/framework_rules.h), not on the
// micro-batch, so the counts of the current shape are kept per (ep, etp,
// a2a overlap, schedule twin) and vpp (as running sums, for runs of
// rejected candidates); a stage variant, one vpp's own, is counted apart.
class PlanCounter {
public:
    PlanCounter(const Job& job, const PlanFix& fix)
        : job_(job), fix_(fix), base_schedule_(job.plan.schedule), base_schedule_given_(job.plan.schedule_given),
          base_first_(job.plan.first_stage_layers), base_last_(job.plan.last_stage_layers) {}
    int64_t operator()(const Layout& l) { return range(l, l.vpp); }
    // The plans of `l` for every vpp from l.vpp to vpp_last.
    int64_t range(const Layout& l, int vpp_last);
    // The plans a run of rejected candidates stands for.
    int64_t operator()(const RejectedRun& r) { return r.times * range(r.layout, r.vpp_last); }

private:
    Job job_;
    const PlanFix& fix_;
    PipelineSchedule base_schedule_;
    bool base_schedule_given_;
    int base_first_, base_last_;  // the job's stage layers (a stage variant's are its own)
    int tp_ = 0, cp_ = 0, pp_ = 0;
    // Per (ep, etp, a2a overlap, schedule twin) of the current shape: sum[v],
    // the plans of vpp 1 .. v.
    struct Sums {
        int ep = 1, etp = 1;
        bool a2a = false;
        PipelineSchedule schedule{};
        std::vector<int64_t> sum;
    };
    std::vector<Sums> sums_;
};

struct LayoutSpace {
    std::vector<Layout> layouts;   // the valid layouts, in enumeration order
    int64_t plans = 0;             // plans of those layouts
    int64_t rejected_plans = 0;    // plans of the candidates the rules reject
};

// threads: workers (at least 1); the result does not depend on it.
LayoutSpace layout_space(const Job& job, const PlanFix& fix, const LayoutFix& layout_fix, unsigned threads);

}  // namespace lostflops::search
