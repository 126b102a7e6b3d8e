// Which assumption decides a memory verdict. When a plan does not fit, or its
// peak is within 10 % of the usable memory, the verdict rests on the parts the
// model has to assume rather than count: the activations of the micro-batches
// in flight (Megatron-LM's 1F1B / interleaved warm-up, MaxText's whole forward
// on a TPU, or the zero-bubble and DualPipe rules of
// lostflops/pipeline_schedules.h; estimate/inflight.cpp)
// and, with ZeRO-3, the gathered parameters alive at once (current + prefetched
// units, or DeepSpeed's stage3_max_live_parameters; estimate/zero3_time.cpp).
// The larger one is named first; the other too when it is over 10 % of the peak.
// When weights, gradients and optimizer state alone exceed the memory, no
// assumption decides, and the text says so.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "estimate/inflight.h"
#include "estimate/zero3_time.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/report.h"

namespace lostflops {

namespace {

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024)); }

std::string activations_reason(const Job& job, const Memory& m) {
    const ParallelPlan& p = job.plan;
    const int64_t micro = p.micro_batches(job.training);
    std::string why;
    const PipelineSchedule sched = effective_schedule(p);
    if (p.pp == 1) {
        why = "no pipeline: one micro-batch at a time";
    } else if (schedule_info(sched).order != ScheduleOrder::megatron_1f1b) {
        // Their in-flight rule is the schedule table's (ScheduleInfo::inflight,
        // lostflops/pipeline_schedules.h; estimate/inflight.cpp).
        why = fmt::format("{}: rank {} holds {} chunk passes alive over its {} chunk{}", schedule_info(sched).name,
                          m.worst_stage, m.warmup_passes, rank_chunks(p), rank_chunks(p) == 1 ? "" : "s");
    } else if (maxtext_scan(job)) {
        // MaxText's scan runs the whole forward before its autodiff backward
        // (estimate/inflight.cpp).
        why = fmt::format("MaxText's pipeline scan: all {} micro-batches x {} chunk{} = {} chunk passes of rank {} "
                          "alive at the first backward, which follows the whole forward",
                          micro, p.vpp, p.vpp == 1 ? "" : "s", m.warmup_passes, m.worst_stage);
    } else if (p.vpp == 1) {
        why = fmt::format("1F1B: rank {} runs {} warm-up forwards, min(pp - rank, m) = {:.3g} alive", m.worst_stage,
                          m.warmup_passes, m.inflight_microbatches);
    } else if (m.warmup_passes >= micro * p.vpp) {
        why = fmt::format("interleaved 1F1B: all {} chunk forwards of rank {} run before its first backward",
                          m.warmup_passes, m.worst_stage);
    } else {
        why = fmt::format("interleaved 1F1B warm-up on rank {}: 2(pp-rank-1) + (vpp-1)pp = {} chunk passes + 1, "
                          "over {} chunks",
                          m.worst_stage, m.warmup_passes, p.vpp);
    }
    return fmt::format("activations of {:.3g} in-flight micro-batch{} ({}; recompute {}) = {}",
                       m.inflight_microbatches, m.inflight_microbatches == 1 ? "" : "es", why,
                       to_string(p.recompute), gib(m.activations_bytes));
}

std::string zero3_reason(const Job& job, const Memory& m) {
    std::string how;
    if (m.zero_live_capped) {
        how = "capped by parallel.zero_max_live_params";
    } else if (job.training.xla) {
        how = "XLA: the current and the next weight matrix, 16-bit (estimate/memory_xla.cpp)";
    } else if (zero3_engine(job).max_live_params > 0) {
        how = "the whole stage, under the live cap";
    } else {
        how = "current + prefetched layers and the root unit";
    }
    return fmt::format("ZeRO-3 live parameters {:.3g} B gathered ({}) + gradient buffer = {}",
                       m.zero_live_params / 1e9, how, gib(m.zero_live_bytes));
}

}  // namespace

std::string memory_assumption(const Job& job, const Memory& m) {
    if (m.fits && m.peak_bytes < 0.9 * m.capacity_bytes) return "";
    const double states = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes;
    if (states > m.capacity_bytes)
        return fmt::format("deciding: weights, gradients and optimizer state alone ({}, zero = {}) exceed the "
                           "usable memory; no activation or gather-buffer assumption changes that",
                           gib(states), job.plan.zero);
    // Past the first backward the activations are gone: the gradients and
    // the state decide, with the optimizer's temporary or one layer's
    // backward (estimate/memory_moments.cpp).
    if (m.moment == MemoryMoment::optimizer_step)
        return fmt::format("deciding: the optimizer step, when every gradient ({}) and the foreach optimizer's "
                           "temporary ({}) are alive beside the state (training.optimizer_kernel fused has no "
                           "temporary)",
                           gib(m.gradients_bytes), gib(m.temporary_bytes));
    if (m.moment == MemoryMoment::end_of_backward)
        return fmt::format("deciding: the end of the backward, when every gradient ({}) is alive with one layer's "
                           "backward ({})",
                           gib(m.gradients_bytes), gib(m.activations_bytes));
    struct Part {
        double bytes;
        std::string text;
    };
    std::vector<Part> parts;
    parts.push_back({m.activations_bytes, activations_reason(job, m)});
    if (job.plan.zero >= 3) parts.push_back({m.zero_live_bytes, zero3_reason(job, m)});
    if (parts.size() == 2 && parts[1].bytes > parts[0].bytes) std::swap(parts[0], parts[1]);
    std::string out = "deciding assumption: " + parts[0].text;
    if (parts.size() == 2 && parts[1].bytes > 0.1 * m.peak_bytes) out += "; then " + parts[1].text;
    return out;
}

}  // namespace lostflops
