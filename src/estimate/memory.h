// Memory per GPU of one pipeline rank, by kind. Internal to estimate.
#pragma once

#include <algorithm>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "estimate/inflight.h"
#include "workload/layer_work.h"

namespace lostflops {

struct StageParams {
    double layers = 0;      // transformer layers on this rank (all chunks)
    double params = 0;         // dense parameters held by this rank (before ZeRO sharding)
    double expert_params = 0;  // expert parameters held by this rank (before sharding)
    bool first = false;     // holds the embedding
    bool last = false;      // holds the output layer and loss
};

// Transformer layers on virtual stage (rank, chunk). When pp*vpp does not
// divide the layers, the first and last virtual stages (which also hold the
// embedding and the output layer) get the fewer layers, as Llama 3 405B's 126
// layers on 16 stages did (Llama Team 2024, sec. 3.3.2).
inline int layers_on(int model_layers, int pp, int vpp, int rank, int chunk) {
    const int k = pp * vpp;                     // virtual stages
    const int base = model_layers / k;
    const int rem = model_layers % k;
    if (rem == 0) return base;
    // Virtual stage index in model order: chunk-major (Megatron interleaving).
    const int vs = chunk * pp + rank;
    // Layers missing from an even split of base+1 each: k - rem, taken from the
    // two ends first, then inwards.
    const int missing = k - rem;
    const int from_end = k - 1 - vs;
    const int dist = std::min(vs, from_end);    // 0 for the first and last
    const int rank_from_ends = 2 * dist + (vs <= from_end ? 0 : 1);
    return base + (rank_from_ends < missing ? 0 : 1);
}
inline int layers_on(const Job& job, int rank, int chunk) {
    return layers_on(job.model.layers, job.plan.pp, job.plan.vpp, rank, chunk);
}

// Of a virtual stage's `layers`, the ones that full recompute redoes: all of them, or the first
// parallel.recompute_layers (Megatron-LM's block method); 0 without full recompute.
inline int recomputed_of(const ParallelPlan& p, int layers) {
    if (p.recompute != Recompute::full) return 0;
    return p.recompute_layers < 0 ? layers : std::min(layers, p.recompute_layers);
}

StageParams stage_params(const Job& job, const LayerWork& lw, const HeadWork& hw, int rank);

Memory stage_memory(const Job& job, const Calibration& cal, const LayerWork& lw,
                    const HeadWork& hw, int rank);

// stage_memory in two parts, for the search: what the plan's state takes
// (weights, gradients, optimizer, buffers; depends on zero, grad_fp32 and the
// ZeRO-3 engine, not on recompute or sequence parallelism) and what its
// activations take (recompute, recompute_layers, sequence parallelism; not
// zero). stage_memory == memory_total(memory_state(...), memory_activations(...))
// to the bit.
Memory memory_state(const Job& job, const Calibration& cal, const LayerWork& lw, const StageParams& sp);
Memory memory_activations(const Job& job, const LayerWork& lw, const HeadWork& hw, const StageParams& sp,
                          const InFlight& fl, int rank);
// `state` with the activation fields of `act`; peak, fits and worst_stage set.
Memory memory_total(const Memory& state, const Memory& act);

// Ranks holding a copy of this rank's dense weights (dp*cp) and of its expert
// weights (dp*cp/ep): the groups that reduce their gradients and over which
// ZeRO shards them.
int dense_replicas(const ParallelPlan& p);
int expert_replicas(const ParallelPlan& p);

// Parameters of this rank's optimizer shard.
double optimizer_shard_params(const ParallelPlan& p, const StageParams& s);

// Bytes per parameter of gradients as reduced (fp32 main grads or 16-bit).
double grad_bytes_per_param(const ParallelPlan& p);

}  // namespace lostflops
