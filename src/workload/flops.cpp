// Parameter and FLOP counting of a layer stack; conventions in flops.h, the
// formula of each layer kind in job/layer_kinds.h and its file in
// job/mixers/ (with its sources), and
// Megatron-LM's num_floating_point_operations (megatron/training/training.py),
// which counts GQA, gated MLPs, MLA, MoE and Mamba layers the same way.
#include "workload/flops.h"

#include <algorithm>
#include <cmath>

namespace lostflops {

namespace {

double matrices(MlpKind k) { return k == MlpKind::gated ? 3.0 : k == MlpKind::dense ? 2.0 : 0.0; }

// Weights of an MLP of width f (GEMMs only) and its biases.
double mlp_gemm(const Mlp& m, double h) { return matrices(m.kind) * h * static_cast<double>(m.ffn); }
double mlp_bias(const Mlp& m, double h) {
    if (!m.bias || m.kind == MlpKind::none) return 0;
    return (m.kind == MlpKind::gated ? 2.0 : 1.0) * static_cast<double>(m.ffn) + h;
}

MixerCount mixer_count(const LayerKind& k, double h) { return mixer_fns(k.mixer).count(k, h); }

}  // namespace

double norm_params(NormKind n, int64_t hidden) {
    const double h = static_cast<double>(hidden);
    return n == NormKind::rms ? h : n == NormKind::layer_bias ? 2 * h : 0.0;
}

double mixer_params(const LayerKind& k, int64_t hidden) {
    const MixerCount c = mixer_count(k, static_cast<double>(hidden));
    return c.gemm + c.other;
}

KindCounts kind_counts(const LayerKind& k, int64_t hidden, NormKind norm) {
    const double h = static_cast<double>(hidden);
    const MixerCount mix = mixer_count(k, h);
    KindCounts c;
    double mlp_total = 0, mlp_active = 0, mlp_gemm_active = 0;
    if (k.is_moe()) {
        const Moe& m = k.moe;
        const double expert = mlp_gemm(m.expert, h) + mlp_bias(m.expert, h);
        const double router = h * m.experts + (m.router_bias ? m.experts : 0.0) + (m.score_bias ? m.experts : 0.0);
        Mlp shared = m.expert;
        shared.ffn = m.shared_ffn;
        shared.bias = false;
        const double shared_gemm = m.shared_ffn > 0 ? mlp_gemm(shared, h) + (m.shared_gate ? h : 0.0) : 0.0;
        c.expert_params = m.experts * expert;
        mlp_total = m.experts * mlp_gemm(m.expert, h) + h * m.experts;
        mlp_active = m.top_k * mlp_gemm(m.expert, h) + h * m.experts;
        mlp_gemm_active = mlp_active + shared_gemm;
        // Biases of the experts and router; the shared experts' GEMMs.
        mlp_total += (c.expert_params - m.experts * mlp_gemm(m.expert, h)) + (router - h * m.experts) + shared_gemm;
        mlp_active += m.top_k * mlp_bias(m.expert, h) + (router - h * m.experts) + shared_gemm;
    } else {
        mlp_total = mlp_active = mlp_gemm_active = mlp_gemm(k.mlp, h);
        const double bias = mlp_bias(k.mlp, h);
        mlp_total += bias;
        mlp_active += bias;
    }
    const double norms = k.norms * norm_params(norm, hidden);
    c.params = mix.gemm + mlp_total + norms;
    c.params_active = mix.gemm + mlp_active + norms;
    if (mix.other > 0) {
        c.params += mix.other;
        c.params_active += mix.other;
    }
    c.gemm_active = mix.gemm + mlp_gemm_active;
    return c;
}

LayerForwardFlops layer_forward_flops(const LayerKind& k, int64_t hidden, int64_t seq, bool causal) {
    LayerForwardFlops f;
    f.weight_gemms = 2.0 * kind_counts(k, hidden, NormKind::none).gemm_active;
    f.attention_core = mixer_fns(k.mixer).core_flops(k, seq, causal);  // its kind's file (job/mixers/)
    return f;
}

FlopsPerToken flops_per_token(const Model& m, const Training& t, Recompute r, double recomputed_share,
                              double routed_share) {
    // The routed experts' forward GEMMs a dropped share of tokens skips.
    const auto dropped = [&](const LayerKind& k) {
        return k.is_moe() ? (1 - routed_share) * 2.0 * k.moe.top_k * mlp_gemm(k.moe.expert, static_cast<double>(m.hidden))
                          : 0.0;
    };
    double layers_fwd = 0, core_fwd = 0, recomputed = 0;
    for (size_t k = 0; k < m.kinds().size(); ++k) {
        LayerForwardFlops layer = layer_forward_flops(m.kinds()[k], m.hidden, t.seq_length, t.causal_flops);
        layer.weight_gemms -= dropped(m.kinds()[k]);
        const double n = m.kind_count(static_cast<int>(k));
        layers_fwd += n * (layer.weight_gemms + layer.attention_core);
        if (m.kinds()[k].has_attention()) core_fwd += n * layer.attention_core;  // what selective recompute redoes
        recomputed += recomputed_share * n * (layer.weight_gemms + layer.attention_core);
    }
    const double logits = 2.0 * static_cast<double>(m.embed_width()) * static_cast<double>(m.vocab);
    // OPT's project_in and project_out (Model::embed_dim): two e x h GEMMs.
    const double projections = m.embed_width() != m.hidden ? 2 * 2.0 * m.embed_width() * m.hidden : 0.0;
    double fwd = layers_fwd + logits + projections;
    if (m.mtp_layers > 0) {
        // Each MTP module: a layer of the last layer's kind, its 2h x h
        // projection and its own logits (Megatron-LM counts them the same way:
        // the MTP layers as layers, logits x (1 + mtp_num_layers)).
        LayerForwardFlops last = layer_forward_flops(m.layer(m.layers - 1), m.hidden, t.seq_length, t.causal_flops);
        last.weight_gemms -= dropped(m.layer(m.layers - 1));
        const double h = static_cast<double>(m.hidden);
        fwd += m.mtp_layers * (last.weight_gemms + last.attention_core + 2.0 * 2 * h * h + logits);
    }
    FlopsPerToken out;
    out.model = 3.0 * fwd;
    out.hardware = out.model;
    if (r == Recompute::full) out.hardware += recomputed;
    if (r == Recompute::selective) out.hardware += core_fwd;
    return out;
}

ParamCount count_params(const Model& m) {
    ParamCount p;
    const double h = static_cast<double>(m.hidden);
    // The input side: the token embedding (V x e), learned positions (P x h)
    // and OPT's project_in (e x h); the output side: the output layer (V x e,
    // unless tied) and project_out (h x e). Model::embed_dim, Model::positions.
    const double e = static_cast<double>(m.embed_width());
    const double projection = m.embed_width() != m.hidden ? e * h : 0.0;
    p.embedding = static_cast<double>(m.vocab) * e + static_cast<double>(m.positions) * h + projection;
    p.output = (m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * e) + projection;
    double layers_total = 0, layers_active = 0;
    for (size_t k = 0; k < m.kinds().size(); ++k) {
        const KindCounts c = kind_counts(m.kinds()[k], m.hidden, m.norm);
        const double n = m.kind_count(static_cast<int>(k));
        layers_total += n * c.params;
        layers_active += n * c.params_active;
    }
    const double final_norm = norm_params(m.norm, m.hidden);
    p.total = layers_total + p.embedding + p.output + final_norm;
    p.active = layers_active + p.embedding + p.output + final_norm;
    if (m.mtp_layers > 0) {
        // Each module: a layer of the last layer's kind, the projection of
        // [norm(h_i); norm(emb)] (2h x h), those two norms and the output norm.
        const KindCounts last = kind_counts(m.layer(m.layers - 1), m.hidden, m.norm);
        const double extra = 2 * h * h + 3 * norm_params(m.norm, m.hidden);
        p.mtp = m.mtp_layers * (last.params + extra);
        p.mtp_active = m.mtp_layers * (last.params_active + extra);
    }
    return p;
}

}  // namespace lostflops
