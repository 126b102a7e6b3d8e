// The tensors a Hugging Face transformers model in eager PyTorch keeps for
// backward (training.framework hf), one entry per tensor class, in bytes per
// token of the micro-batch on this GPU. Internal to workload.
//
// Two regimes (ParallelPlan::zero): autocast over fp32 weights (zero 0: the
// residual stream is fp32, every GEMM casts its own input to bf16, autocast
// caches the bf16 copy of each fp32 weight) and FSDP2 with bf16 compute
// (zero 3: MixedPrecisionPolicy(param_dtype=bf16), everything bf16 but the
// norms' fp32 upcasts). The tensors are those autograd saves (derivatives.yaml
// saves an operand only when the other needs its gradient), checked tensor by
// tensor against the allocator events of
// shared/traces/h200/h200-llama3.2-1b-s4096-b2-autocast-memory.json.gz (one
// Llama-3.2-1B layer: 129,152 bytes per token, exact) and the FSDP2 trace of
// Llama-3.2-3B (workload/eager_ledger.cpp says which op saves what).
#pragma once

#include <array>

#include "lostflops/model.h"
#include "lostflops/spec.h"

namespace lostflops {

struct LedgerEntry {
    const char* what = "";         // "attention: SDPA's query, key, value, output"
    double bytes_per_token = 0;    // on this GPU, per token of the micro-batch
};

// One decoder layer's saved tensors.
struct EagerLayerLedger {
    std::array<LedgerEntry, 16> entries{};
    int count = 0;
    double input_bytes_per_token = 0;  // the layer's input: what a gradient checkpoint keeps
    double weight_copy_bytes = 0;      // autocast's cached bf16 weights (per layer, zero 0; else 0)
    double total() const;
    void add(const char* what, double bytes_per_token);
};

// The final norm, the output layer and the loss.
struct EagerHeadLedger {
    double saved_bytes_per_token = 0;   // the final norm's and the output layer's saved inputs
    // Alive at the loss's backward (aten::_log_softmax_backward_data): the
    // fp32 log-softmax output it saved, the fp32 gradient nll_loss_backward
    // wrote, and the fp32 gradient it writes: 3 x 4 bytes per vocabulary
    // entry (transformers' ForCausalLMLoss upcasts the logits to fp32).
    double loss_bytes_per_token = 0;
    double weight_copy_bytes = 0;       // the output layer's bf16 copy (autocast) or gathered weight (FSDP2)
};

// Precondition: t.framework == Framework::hf (tp, cp and ep 1).
EagerLayerLedger eager_layer_ledger(const Model& m, const LayerKind& k, const Training& t, const ParallelPlan& p);
EagerHeadLedger eager_head_ledger(const Model& m, const Training& t, const ParallelPlan& p);

// The fp32 weights under bf16 autocast (framework hf, zero below 3): the
// residual stream and the norms run in fp32.
bool eager_autocast(const Training& t, const ParallelPlan& p);
// FSDP2 with bf16 parameters (framework hf, zero 3, not fp32, not compiled):
// the model runs in bf16 but its norms' fp32 upcasts.
bool eager_fsdp2_bf16(const Training& t, const ParallelPlan& p);
// An attention layer that updates transformers' KV cache in the forward
// (training.use_cache; not compiled; not under gradient checkpointing, whose
// GradientCheckpointingLayer.__call__ passes the layer past_key_values=None).
bool hf_layer_caches_kv(const LayerKind& k, const Training& t, const ParallelPlan& p);
// FSDP2 on one rank (framework hf, zero 3, dp x cp 1, not XLA), eager or
// compiled, any precision: the unshard's and reduce's copies of the layers
// (eager_traffic.cpp add_fsdp2_traffic) and of the root (head_work.cpp).
bool fsdp2_one_rank(const Training& t, const ParallelPlan& p);

}  // namespace lostflops
