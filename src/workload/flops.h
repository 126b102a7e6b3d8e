// Model and hardware FLOPs of a dense or mixture-of-experts decoder.
//
// Per token, forward, counting 2*m*n*k per GEMM:
//   per layer  2*h*(a+2*kv)*d  (QKV)  + 2*h*h (output projection)
//            + 2*c*h*f         (MLP, c = 2 matrices for GeLU, 3 for gated)
//            + 4*s*h           (attention scores QK^T and values PV, full s)
//   logits     2*h*V
// Backward = 2x forward, so model FLOPs per token = 3x the forward sum.
// For a GPT with f = 4h this is 72*l*h^2*(1 + s/(6h) + V/(12*l*h)) per token
// (Narayanan et al. 2021, eq. 3 without recomputation) and 6N + 12*l*h*s with
// N the non-embedding parameters (PaLM, Chowdhery et al. 2022, appendix B).
#pragma once

#include "lostflops/spec.h"

namespace lostflops {

struct FlopsPerToken {
    double model = 0;     // forward + backward, no recomputation
    double hardware = 0;  // model + recomputed forward work
};

// Forward FLOPs per token of one transformer layer, split into the GEMMs with
// weights (dense or active experts) and the attention core (scores + values).
struct LayerForwardFlops {
    double weight_gemms = 0;
    double attention_core = 0;
};

LayerForwardFlops layer_forward_flops(const Model& m, int64_t seq, bool causal);
// `recomputed_share`: share of the layers that full recompute redoes (1 when
// every layer is recomputed; parallel.recompute_layers makes it less).
FlopsPerToken flops_per_token(const Model& m, const Training& t, Recompute r, double recomputed_share = 1.0);

// Parameter counts. `total` counts every expert; `active` the experts a token
// uses. Embedding and output layer (once if tied) included.
struct ParamCount {
    double total = 0;
    double active = 0;
    double embedding = 0;  // V*h, counted once more in total when untied
};
ParamCount count_params(const Model& m);

}  // namespace lostflops
