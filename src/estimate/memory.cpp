// Memory per GPU (Rajbhandari et al. 2020, ZeRO; Korthikanti et al. 2022).
//  weights     2 bytes/param (16-bit), /dp with ZeRO-3
//  gradients   4 (fp32 main grads, Megatron-LM) or 2 bytes/param, /dp with ZeRO-2+
//  optimizer   12 bytes/param (fp32 master, Adam m and v), /dp with ZeRO-1+
// so 18 bytes/param for Megatron without sharding, 6 + 12/N_d with its
// distributed optimizer, 16/N_d with ZeRO-3.
// Activations: per-layer bytes (workload/layer_work.cpp) times the micro-batches
// in flight: with 1F1B rank r holds min(m, p - r); interleaving multiplies the
// first rank's share by 1 + (p-1)/(p*v) (Korthikanti et al. 2022, sec. 4.2.3).
// Full recompute keeps only each layer's input plus one layer's working set.
#include "estimate/memory.h"

#include <algorithm>

namespace lostflops {

double grad_bytes_per_param(const ParallelPlan& p) { return p.grad_fp32 ? 4.0 : 2.0; }

int dense_replicas(const ParallelPlan& p) { return p.dp * p.cp; }
int expert_replicas(const ParallelPlan& p) { return std::max(1, p.dp * p.cp / p.ep); }

double optimizer_shard_params(const ParallelPlan& p, const StageParams& s) {
    if (p.zero == 0) return s.params + s.expert_params;
    return s.params / dense_replicas(p) + s.expert_params / expert_replicas(p);
}

int layers_on(const Job& job, int rank, int chunk) {
    const ParallelPlan& p = job.plan;
    const int k = p.pp * p.vpp;                 // virtual stages
    const int base = job.model.layers / k;
    const int rem = job.model.layers % k;
    if (rem == 0) return base;
    // Virtual stage index in model order: chunk-major (Megatron interleaving).
    const int vs = chunk * p.pp + rank;
    // Layers missing from an even split of base+1 each: k - rem, taken from the
    // two ends first, then inwards.
    const int missing = k - rem;
    const int from_end = k - 1 - vs;
    const int dist = std::min(vs, from_end);    // 0 for the first and last
    const int rank_from_ends = 2 * dist + (vs <= from_end ? 0 : 1);
    return base + (rank_from_ends < missing ? 0 : 1);
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

Memory stage_memory(const Job& job, const Calibration& cal, const LayerWork& lw,
                    const HeadWork& hw, int rank) {
    const ParallelPlan& p = job.plan;
    const StageParams sp = stage_params(job, lw, hw, rank);
    const double nd = dense_replicas(p), ne = expert_replicas(p);
    const auto sharded = [&](double bytes_per_param, int from_stage) {
        return p.zero >= from_stage ? sp.params * bytes_per_param / nd + sp.expert_params * bytes_per_param / ne
                                    : (sp.params + sp.expert_params) * bytes_per_param;
    };
    Memory mem;
    mem.weights_bytes = sharded(2.0, 3);
    mem.gradients_bytes = sharded(grad_bytes_per_param(p), 2);
    mem.optimizer_bytes = sharded(12.0, 1);

    const double m = static_cast<double>(p.micro_batches(job.training));
    // Micro-batches (in units of this rank's whole stage) whose activations
    // are alive at the peak: 1F1B warm-up p - r - 1 plus one; interleaved,
    // Megatron's warm-up 2(p - r - 1) + (v - 1)p chunk passes plus one, over v
    // chunks (rank 0: p(1 + (p-1)/(pv)), Korthikanti et al. 2022).
    const double pp = p.pp, v = p.vpp, r = rank;
    double inflight = v == 1 ? std::min(m, pp - r) : std::min(m * v, 2 * (pp - r - 1) + (v - 1) * pp + 1) / v;
    if (p.recompute == Recompute::full) {
        mem.activations_bytes = inflight * sp.layers * lw.checkpoint_bytes + lw.activation_bytes_full;
    } else {
        mem.activations_bytes = inflight * sp.layers * lw.activation_bytes;
    }
    if (sp.first) mem.activations_bytes += inflight * hw.embed_bytes_fwd;
    if (sp.last) mem.logits_bytes = hw.logits_memory_bytes;

    mem.buffers_bytes = cal.memory_reserved_bytes;
    // FSDP / ZeRO-3 materialises the current and the prefetched layer unsharded.
    if (p.zero >= 3) mem.buffers_bytes += 2.0 * (lw.params + lw.expert_params) * 2.0;
    mem.peak_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                     mem.activations_bytes + mem.logits_bytes + mem.buffers_bytes;
    mem.capacity_bytes = static_cast<double>(job.cluster.gpu.memory_bytes) * cal.memory_usable_fraction;
    mem.worst_stage = rank;
    mem.fits = mem.peak_bytes <= mem.capacity_bytes;
    return mem;
}

}  // namespace lostflops
