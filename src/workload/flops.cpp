// FLOP and parameter counting of decoder-only transformers; formulas in
// flops.h (Narayanan et al. 2021 eq. 3; PaLM appendix B; Megatron-LM's
// num_floating_point_operations in megatron/training/training.py, which counts
// GQA and gated MLPs the same way).
#include "workload/flops.h"

namespace lostflops {

namespace {

double mlp_matrices(const Model& m) { return m.mlp == MlpKind::gated ? 3.0 : 2.0; }

// Weights of one layer's attention block: Q and O are h x h, K and V h x kv*d.
double attention_params(const Model& m) {
    const double h = static_cast<double>(m.hidden);
    const double d = static_cast<double>(m.head_dim());
    return h * d * (2.0 * m.heads + 2.0 * m.kv_heads);
}

double mlp_params_active(const Model& m) {
    const double h = static_cast<double>(m.hidden);
    if (!m.is_moe()) return mlp_matrices(m) * h * static_cast<double>(m.ffn);
    return m.experts_per_token * mlp_matrices(m) * h * static_cast<double>(m.moe_ffn) +
           h * m.experts;  // router
}

double mlp_params_total(const Model& m) {
    const double h = static_cast<double>(m.hidden);
    if (!m.is_moe()) return mlp_matrices(m) * h * static_cast<double>(m.ffn);
    return m.experts * mlp_matrices(m) * h * static_cast<double>(m.moe_ffn) + h * m.experts;
}

}  // namespace

LayerForwardFlops layer_forward_flops(const Model& m, int64_t seq, bool causal) {
    LayerForwardFlops f;
    f.weight_gemms = 2.0 * (attention_params(m) + mlp_params_active(m));
    f.attention_core = 4.0 * static_cast<double>(seq) * static_cast<double>(m.hidden) * (causal ? 0.5 : 1.0);
    return f;
}

FlopsPerToken flops_per_token(const Model& m, const Training& t, Recompute r, double recomputed_share) {
    const LayerForwardFlops layer = layer_forward_flops(m, t.seq_length, t.causal_flops);
    const double logits = 2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.vocab);
    const double fwd = m.layers * (layer.weight_gemms + layer.attention_core) + logits;
    FlopsPerToken out;
    out.model = 3.0 * fwd;
    out.hardware = out.model;
    if (r == Recompute::full)
        out.hardware += recomputed_share * m.layers * (layer.weight_gemms + layer.attention_core);
    if (r == Recompute::selective) out.hardware += m.layers * layer.attention_core;
    return out;
}

ParamCount count_params(const Model& m) {
    ParamCount p;
    const double h = static_cast<double>(m.hidden);
    p.embedding = static_cast<double>(m.vocab) * h;
    const double norms = 2.0 * h;
    const double head = m.tied_embeddings ? 0.0 : p.embedding;
    p.total = m.layers * (attention_params(m) + mlp_params_total(m) + norms) + p.embedding + head + h;
    p.active = m.layers * (attention_params(m) + mlp_params_active(m) + norms) + p.embedding + head + h;
    return p;
}

}  // namespace lostflops
