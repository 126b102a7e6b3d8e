// The moments of a rank's step and the verdict's terms (estimate/memory.h):
// which moment holds the peak (the first backward, the end of the backward,
// the optimizer step; lostflops/estimate.h MemoryMoment), what the
// framework's allocator hands out and holds there, and what it can take on
// the GPU.
//
// Moments: first backward = state + the gradients alive then + the passes in
// flight's activations + the loss's buffers + the 16-bit weight copies; end
// of backward = state + every gradient + one layer's working set; optimizer
// step = state + every gradient + the optimizer's temporary (torch's foreach
// AdamW: torch._foreach_sqrt(exp_avg_sqs), the size of the fp32 parameters,
// torch/optim/adam.py _multi_tensor_adam). Gradients grow as activations are
// freed through the backward, both linearly in the layers done, so the
// largest sum is at an end of it.
// Reserved = allocated + the caching allocator's reserve over the memory it
// churns (memory_usable_fraction) + FSDP2's freed sharded gradients, cached in
// its reduce-scatter stream's pool at the first backward + torchtitan's freed
// 16-bit logits, a block no 32-bit logit tensor of the loss's backward fits
// (workload/head_work.cpp; its logits are then itemized, not churned).
// Usable = what the driver reports (Gpu::memory_total_bytes, cited in
// data/catalog/gpus.yaml; else 0.99 of the datasheet's: H100 79.11 / 80,
// A100 79.25 / 80, H200 139.80 / 141 = 0.989-0.992) less what lives outside
// the allocator: the CUDA context (cuda_context_bytes, measured on the H200)
// and, on a multi-GPU job, NCCL's buffers (memory_reserved_bytes, assumed).
#include <algorithm>

#include "estimate/memory.h"
#include "lostflops/accelerator.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops {

const char* to_string(MemoryMoment m) {
    switch (m) {
        case MemoryMoment::first_backward: return "first_backward";
        case MemoryMoment::end_of_backward: return "end_of_backward";
        case MemoryMoment::optimizer_step: return "optimizer_step";
    }
    return "?";
}

double device_total_bytes(const Gpu& gpu) {
    // Without a measured figure: 0.99 of the datasheet's (H100 79.11 / 80,
    // A100 79.25 / 80, H200 139.80 / 141: 0.989-0.992; data/catalog/gpus.yaml).
    return gpu.memory_total_bytes > 0 ? static_cast<double>(gpu.memory_total_bytes)
                                      : 0.99 * static_cast<double>(gpu.memory_bytes);
}

double headroom_bytes(const Cluster& c, double usable) {
    // At most `usable`: a headroom of the whole memory or more is refused
    // (job/validate.cpp), so only one between the usable and the whole
    // memory (the CUDA context's and NCCL's share, about 1 GiB) is cut down.
    return std::clamp(c.memory_headroom_bytes + c.memory_headroom_fraction * usable, 0.0, std::max(0.0, usable));
}

bool caching_allocator(const Job& job) {
    const AcceleratorTraits* t = find_accelerator(job.cluster.gpu.arch);
    return t == nullptr || t->vendor != Vendor::google;
}

DeviceTerms device_terms(const Job& job, const Calibration& cal) {
    DeviceTerms d;
    if (!caching_allocator(job)) {  // a TPU's XLA runtime: the fraction of the whole HBM
        d.usable = static_cast<double>(job.cluster.gpu.memory_bytes) * cal.memory_usable_fraction;
        return d;
    }
    d.outside = job.cluster.num_gpus > 1 ? cal.memory_reserved_bytes : cal.cuda_context_bytes;
    d.usable = std::max(0.0, device_total_bytes(job.cluster.gpu) - d.outside);
    d.churn_reserve_fraction = 1.0 / cal.memory_usable_fraction - 1.0;
    return d;
}


double fragmentation_bytes(const Memory& state, double activations_bytes, double logits_bytes) {
    return state.churn_reserve_fraction * (activations_bytes + logits_bytes + state.zero_live_bytes);
}

// The end of the backward is priced for the eager stacks only (Megatron's
// first backward already counts the recomputed layer's working set):
// rank_moments in estimate/memory.h.
Memory memory_total(const RankState& state, const ActParts& parts, const Memory& act) {
    Memory mem = state.mem;
    const MomentBytes mb = rank_moments(state, parts);
    mem.moment = mb.peak;
    mem.fragmentation_bytes = fragmentation_bytes(state.mem, parts.activations, churned_logits(parts));
    mem.warmup_passes = act.warmup_passes;
    mem.inflight_microbatches = act.inflight_microbatches;
    mem.worst_stage = act.worst_stage;
    switch (mb.peak) {
        case MemoryMoment::first_backward:
            mem.gradients_bytes = state.first_backward_grads;
            mem.activations_bytes = act.activations_bytes;
            mem.logits_bytes = act.logits_bytes;
            mem.weight_copies_bytes = (state.autocast_copies ? parts.layer_copies : 0.0) + parts.head_copy;
            break;
        case MemoryMoment::end_of_backward:
            mem.activations_bytes = parts.working;
            mem.logits_bytes = parts.held;  // a held output's logits (ActParts::held)
            break;
        case MemoryMoment::optimizer_step:
            mem.temporary_bytes = state.optimizer_temp;
            mem.logits_bytes = parts.held;
            break;
    }
    // The most allocated over the step (torch.cuda.max_memory_allocated),
    // which need not be at the moment of the most reserved.
    mem.allocated_bytes = std::max({mb.allocated[0], mb.allocated[1], mb.allocated[2]});
    const double pool = mb.peak == MemoryMoment::first_backward ? state.side_stream_pool + parts.logits_cached : 0.0;
    mem.buffers_bytes = state.mem.buffers_bytes + mem.fragmentation_bytes + pool;
    mem.reserved_bytes = mb.reserved[static_cast<int>(mb.peak)];  // as rank_reserved_bytes, the search's
    mem.peak_bytes = mem.reserved_bytes;
    mem.usable_bytes = mem.capacity_bytes + mem.headroom_bytes;
    mem.margin_bytes = mem.capacity_bytes - mem.reserved_bytes;
    mem.fits = mem.reserved_bytes <= mem.capacity_bytes;
    return mem;
}

void name_moment(const Job& job, Memory& mem) {
    const ParallelPlan& p = job.plan;
    // The first backward of a pipeline rank is micro-batch 0's, on its last
    // chunk (Megatron-LM's schedules run the deepest chunk first); a
    // PyTorch step's largest is its last micro-batch's, when the gradients
    // of the others are alive too.
    const int64_t m = p.micro_batches(job.training);
    const bool grads_grow =
        (job.training.framework == Framework::hf || job.training.framework == Framework::fsdp) && m > 1;
    // MaxText's scan (a TPU) differentiates its last iteration first: micro-batch m - 1.
    const bool last_first = grads_grow || maxtext_scan(job);
    mem.moment_micro_batch = mem.moment == MemoryMoment::first_backward ? (last_first ? static_cast<int>(m - 1) : 0)
                                                                        : static_cast<int>(m - 1);
    mem.moment_chunk = mem.moment == MemoryMoment::first_backward ? rank_chunks(p) - 1 : 0;
}

}  // namespace lostflops
