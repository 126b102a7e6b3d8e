// torchtitan's per-op selective activation checkpointing: what one layer keeps
// for backward and what its backward redoes. Internal to workload/.
//
// `recompute: selective` under `framework: fsdp` is this policy
// (torchtitan [activation_checkpoint] mode "selective", selective_ac_option
// "op", the default of its Llama configs; src/interop/torchtitan_import.cpp
// maps it here). Under the other frameworks `selective` is Megatron-LM's
// (Korthikanti et al. 2022: the attention core is recomputed).
#pragma once

#include "lostflops/model.h"
#include "lostflops/spec.h"

namespace lostflops {

struct LayerWork;

struct OpCheckpoint {
    double stored_bytes = 0;        // per layer per micro-batch on one GPU
    double recompute_gemm_share = 0;  // of the layer's forward GEMM FLOPs redone in backward
};

// True when the plan's selective recompute is torchtitan's per-op policy.
inline bool op_checkpointing(const Training& t, const ParallelPlan& p) {
    return p.recompute == Recompute::selective && t.framework == Framework::fsdp;
}

// One layer of kind `k` whose GEMMs `w` lists: `tokens` per GPU per
// micro-batch (b*s/cp).
OpCheckpoint op_checkpoint(const Model& m, const LayerKind& k, const ParallelPlan& p, const LayerWork& w,
                           double tokens);

}  // namespace lostflops
