// Data-parallel traffic behind the pipeline schedule's passes, per model chunk.
//
// Megatron-Core's interleaved 1F1B (megatron/core/pipeline_parallel/
// schedules.py forward_backward_pipelining_with_interleaving, NVIDIA/Megatron-LM
// d98e8a64) syncs each model chunk on its own: backward_step_helper_postprocess
// calls grad_sync_func[chunk] (the distributed optimizer's bucketed
// reduce-scatter, or DDP's all-reduce) as soon as that chunk's last
// micro-batch has gone backward, and forward_step_helper_preprocess launches
// param_sync_func[chunk + 1] (the parameter all-gather) at the first
// micro-batch of the chunk before it (chunks 0 and 1 at the start). Micro-batches
// go through the chunks in groups of microbatch_group_size_per_vp_stage,
// pipeline-parallel size by default: the last chunk's gradients are final
// (v - 1) g passes of the other chunks before the step's backward ends. One
// stage at once (1F1B, or Megatron-LM before Megatron-Core, whose gradient sync
// waits for the whole pipeline flush) keeps the whole traffic behind the last
// (first) micro-batch's pass, bucket by bucket.
//
// The pieces form a queue with release times r_k = k g p and equal work
// c = C / v: it drains at max_k (r_k + (v - k) c), linear in k, so the end
// (k = v - 1: one piece after the last pass) or the start (k = 0: the whole
// traffic against (v - 1) g p) bounds it; the bucket overlap inside one pass
// adds a p to both.
#include "estimate/dp_overlap.h"

#include "lostflops/pipeline_schedules.h"

#include <algorithm>

namespace lostflops {

DpWindow dp_window(const Job& job, double rank_pass_s, double micro_batches) {
    const ParallelPlan& p = job.plan;
    // (effective_schedule is interleaved only with vpp > 1.)
    const bool per_chunk = job.training.framework == Framework::megatron_core &&
                           schedule_info(effective_schedule(p)).interleaves && p.pp > 1;
    if (!per_chunk) return {1, 1, rank_pass_s};
    const int group = static_cast<int>(std::clamp(micro_batches, 1.0, static_cast<double>(p.pp)));
    return {p.vpp, group, rank_pass_s / p.vpp};
}

DpExposure dp_exposure(double comm_s, const DpWindow& w, double overlap) {
    if (!(comm_s > 0)) return {};
    const double v = std::max(1, w.chunks), g = std::max(1, w.group);
    const double piece = comm_s / v;
    const double tail = piece - std::min(piece, overlap * w.pass_s);
    const double whole = comm_s - std::min(comm_s, overlap * ((v - 1) * g + 1) * w.pass_s);
    const double exposed = std::max(tail, whole);
    return {exposed, comm_s - exposed};
}

}  // namespace lostflops
