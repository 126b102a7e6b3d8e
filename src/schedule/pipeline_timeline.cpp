// Timeline of one step's pipeline phase: the discrete-event simulation of
// pipeline_simulate.cpp (Megatron-LM's per-rank order of passes, Narayanan et
// al. 2021 sec. 2.2) run with a record of each pass's start and end, listed
// rank by rank in execution order. O(p * v * m).
#include "lostflops/pipeline_timeline.h"

#include <stdexcept>

#include "schedule/pipeline_detail.h"

namespace lostflops {

PipelineTimeline pipeline_timeline(const PipelineInput& in) {
    schedule_detail::check_pipeline_input(in);
    if (1LL * in.stages * in.chunks * in.micro_batches > kMaxTimelinePasses)
        throw std::invalid_argument("pipeline_timeline: stages * chunks * micro_batches > kMaxTimelinePasses");
    std::vector<std::vector<TimelinePass>> per_rank;
    PipelineTimeline t;
    t.result = schedule_detail::pipeline_simulate_recorded(in, &per_rank);
    for (const auto& passes : per_rank) t.passes.insert(t.passes.end(), passes.begin(), passes.end());
    return t;
}

}  // namespace lostflops
