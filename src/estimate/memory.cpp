// Memory per GPU (Rajbhandari et al. 2020, ZeRO; Korthikanti et al. 2022).
//  weights     2 bytes/param (16-bit), /dp with ZeRO-3
//  gradients   4 (fp32 main grads, Megatron-LM) or 2 bytes/param, /dp with ZeRO-2+
//  optimizer   12 bytes/param (fp32 master, Adam m and v), /dp with ZeRO-1+
// so 18 bytes/param for Megatron without sharding, 6 + 12/N_d with its
// distributed optimizer, 16/N_d with ZeRO-3.
// Activations: per-layer bytes (workload/layer_work.cpp) times the micro-batches
// in flight: with 1F1B rank r holds min(m, p - r); interleaved, Megatron-LM's
// warm-up chunk passes plus one (estimate/inflight.cpp). ZeRO-3 gather
// buffers: estimate/zero3_time.cpp.
// Full recompute keeps only each layer's input plus one layer's working set.
#include "estimate/memory.h"

#include "estimate/inflight.h"
#include "estimate/zero3_time.h"

#include <algorithm>

namespace lostflops {

double grad_bytes_per_param(const ParallelPlan& p) { return p.grad_fp32 ? 4.0 : 2.0; }

int dense_replicas(const ParallelPlan& p) { return p.dp * p.cp; }
int expert_replicas(const ParallelPlan& p) { return std::max(1, p.dp * p.cp / p.ep); }

double optimizer_shard_params(const ParallelPlan& p, const StageParams& s) {
    if (p.zero == 0) return s.params + s.expert_params;
    return s.params / dense_replicas(p) + s.expert_params / expert_replicas(p);
}

StageParams stage_params(const Job& job, const LayerWork& lw, const HeadWork& hw, int rank) {
    const ParallelPlan& p = job.plan;
    StageParams s;
    for (int c = 0; c < p.vpp; ++c) s.layers += layers_on(job, rank, c);
    s.first = rank == 0;
    s.last = rank == p.pp - 1;
    s.params = s.layers * lw.params;
    s.expert_params = s.layers * lw.expert_params;
    if (s.first) s.params += hw.embedding_params;
    // Untied: the output layer lives on the last rank. Tied with pp > 1: the
    // last rank keeps its own copy of the embedding (Megatron-LM).
    if (s.last && (!job.model.tied_embeddings || p.pp > 1)) s.params += hw.embedding_params;
    return s;
}

Memory memory_state(const Job& job, const Calibration& cal, const LayerWork& lw, const StageParams& sp) {
    const ParallelPlan& p = job.plan;
    const double nd = dense_replicas(p), ne = expert_replicas(p);
    const auto sharded = [&](double bytes_per_param, int from_stage) {
        return p.zero >= from_stage ? sp.params * bytes_per_param / nd + sp.expert_params * bytes_per_param / ne
                                    : (sp.params + sp.expert_params) * bytes_per_param;
    };
    Memory mem;
    mem.weights_bytes = sharded(2.0, 3);
    mem.gradients_bytes = sharded(grad_bytes_per_param(p), 2);
    mem.optimizer_bytes = sharded(12.0, 1);
    mem.buffers_bytes = cal.memory_reserved_bytes;
    // ZeRO-3 / FSDP: gathered parameters alive and the unreduced gradient
    // (estimate/zero3_time.cpp: current + prefetched units, or the live cap).
    if (p.zero >= 3) {
        const Zero3Live z = zero3_live(job, lw, sp);
        mem.buffers_bytes += z.bytes;
        mem.zero_live_params = z.params;
        mem.zero_live_capped = z.capped;
        mem.zero_live_bytes = z.bytes;
    }
    mem.capacity_bytes = static_cast<double>(job.cluster.gpu.memory_bytes) * cal.memory_usable_fraction;
    return mem;
}

Memory memory_activations(const Job& job, const LayerWork& lw, const HeadWork& hw, const StageParams& sp,
                          const InFlight& fl, int rank) {
    const ParallelPlan& p = job.plan;
    Memory mem;
    // Micro-batches (in units of this rank's whole stage) whose activations
    // are alive at the peak: Megatron-LM's 1F1B / interleaved warm-up plus one
    // (estimate/inflight.cpp).
    const double inflight = fl.stage_units;
    mem.warmup_passes = fl.warmup;
    mem.inflight_microbatches = inflight;
    if (p.recompute == Recompute::full) {
        // Recomputed layers keep their input; the others (recompute_layers
        // below the stage's layers) keep everything; one recomputed layer's
        // working set is live during its backward.
        double recomputed = 0;
        for (int c = 0; c < p.vpp; ++c) recomputed += recomputed_of(p, layers_on(job, rank, c));
        mem.activations_bytes = inflight * (recomputed * lw.checkpoint_bytes +
                                            (sp.layers - recomputed) * lw.activation_bytes_full) +
                                (recomputed > 0 ? lw.activation_bytes_full : 0.0);
    } else {
        mem.activations_bytes = inflight * sp.layers * lw.activation_bytes;
    }
    if (sp.first) mem.activations_bytes += fl.first_chunk * hw.embed_bytes_fwd;
    if (sp.last) mem.logits_bytes = hw.logits_memory_bytes;
    mem.worst_stage = rank;
    return mem;
}

Memory memory_total(const Memory& state, const Memory& act) {
    Memory mem = state;
    mem.activations_bytes = act.activations_bytes;
    mem.logits_bytes = act.logits_bytes;
    mem.warmup_passes = act.warmup_passes;
    mem.inflight_microbatches = act.inflight_microbatches;
    mem.worst_stage = act.worst_stage;
    mem.peak_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                     mem.activations_bytes + mem.logits_bytes + mem.buffers_bytes;
    mem.fits = mem.peak_bytes <= mem.capacity_bytes;
    return mem;
}

Memory stage_memory(const Job& job, const Calibration& cal, const LayerWork& lw,
                    const HeadWork& hw, int rank) {
    const StageParams sp = stage_params(job, lw, hw, rank);
    return memory_total(memory_state(job, cal, lw, sp),
                        memory_activations(job, lw, hw, sp, inflight_passes(job, rank), rank));
}

}  // namespace lostflops
