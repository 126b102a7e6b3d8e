// Parameters and model FLOPs of a layer stack (lostflops/model.h), per kind
// and for the whole model; the formulas of each kind are the rows of
// job/layer_kinds.h.
//
// Conventions (docs/model.md "Definitions"):
//  - FLOPs count 2 per multiply-add. Per token, forward: 2 x the weights of
//    the GEMMs the token passes through (attention or mixer projections, the
//    router, its top-k routed experts and the shared ones: active parameters
//    for MoE) + the mixer's core + the logits 2*h*V. Backward = 2x forward,
//    so model FLOPs per token = 3x the forward sum (Narayanan et al. 2021
//    eq. 3; PaLM appendix B: 6N + 12*l*h*s for a GPT, N without embeddings).
//  - Attention core: 2*a*(d_qk + d_v) per key a query sees. The count of keys
//    is the attention the mask lets through: causal over s tokens s/2 on
//    average, within a window w the band's w - w^2/(2s), within chunks of c
//    (for s a multiple of c) c/2 (attention_keys). With training.causal_flops
//    false (the default, Megatron-LM's num_floating_point_operations) the
//    count is doubled, which for full attention is the unmasked s.
//  - MLA: scores over the qk head dim (nope + rope), values over v_head_dim.
//  - Mamba-2, Gated DeltaNet and lightning attention: their GEMMs plus the
//    scan in its published FLOP form (job/layer_kinds.h, sources there).
//  - DeepSeek's multi-token prediction modules run in training: each adds a
//    layer of the last layer's kind, its 2h x h projection and its logits.
//  - Biases, norms, convolutions (Mamba-2), sinks and gates' element-wise
//    products are parameters but not FLOPs.
//  - Parameters: every weight, bias and norm vector. `total` counts every
//    routed expert, `active` the top-k a token uses (and everything else,
//    the input embedding included). DeepSeek's multi-token prediction
//    modules are counted apart (`mtp`), as DeepSeek-V3's 671 B excludes them.
#pragma once

#include "lostflops/spec.h"
#include "job/layer_kinds.h"

namespace lostflops {

struct FlopsPerToken {
    double model = 0;     // forward + backward, no recomputation
    double hardware = 0;  // model + recomputed forward work
};

// One layer of a kind, per token.
struct KindCounts {
    double params = 0;         // every parameter (all routed experts)
    double params_active = 0;  // what a token uses (top-k routed experts)
    double expert_params = 0;  // routed experts' parameters (sharded over ep)
    double gemm_active = 0;    // weights of the GEMMs a token passes through
};
KindCounts kind_counts(const LayerKind& k, int64_t hidden, NormKind norm);
// Parameters of the layer's token mixer alone (its projections, biases,
// norms and per-head vectors).
double mixer_params(const LayerKind& k, int64_t hidden);

// attention_keys (keys a query sees on average, the convention above): job/layer_kinds.h.

// Forward FLOPs per token of one layer, split into the GEMMs with weights and
// the mixer's core (attention scores + values, or the scan).
struct LayerForwardFlops {
    double weight_gemms = 0;
    double attention_core = 0;
};
LayerForwardFlops layer_forward_flops(const LayerKind& k, int64_t hidden, int64_t seq, bool causal);

// `recomputed_share`: share of the layers that full recompute redoes (1 when
// every layer is recomputed; parallel.recompute_layers makes it less).
// `routed_share`: share of the routed tokens the experts compute
// (moe_kept_share: below 1 when a capacity under 1 drops tokens); the
// routed experts' GEMMs count that share of top_k per token.
FlopsPerToken flops_per_token(const Model& m, const Training& t, Recompute r, double recomputed_share = 1.0,
                              double routed_share = 1.0);

// Parameter counts of the model. Embedding and output layer (once if tied)
// included in both total and active.
struct ParamCount {
    double total = 0;
    double active = 0;
    double embedding = 0;   // V*e, the input embedding (+ learned positions P*h, OPT's project_in e*h)
    double output = 0;      // V*e when untied, else 0 (+ OPT's project_out h*e); e = Model::embed_width()
    double mtp = 0;         // multi-token prediction modules, not in total
    double mtp_active = 0;
};
ParamCount count_params(const Model& m);

// Parameters of one normalisation over `hidden`.
double norm_params(NormKind n, int64_t hidden);

}  // namespace lostflops
