// Parameter and FLOP counting of a layer stack; conventions in flops.h, the
// formula of each layer kind in job/layer_kinds.h (with its sources), and
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

struct MixerCount {
    double gemm = 0;   // weights of its GEMMs
    double other = 0;  // biases, norms, convolution, per-head vectors
};

MixerCount mixer_count(const LayerKind& k, double h) {
    MixerCount c;
    const Attention& a = k.attention;
    const LinearMixer& l = k.linear;
    switch (k.mixer) {
        case MixerKind::attention: {
            const double d = static_cast<double>(a.head_dim);
            c.gemm = h * d * (2.0 * a.heads + 2.0 * a.kv_heads);
            if (a.output_gate) c.gemm += h * a.heads * d;
            if (a.qkv_bias) c.other += d * (a.heads + 2.0 * a.kv_heads);
            if (a.out_bias) c.other += h;
            if (a.sinks) c.other += a.heads;
            if (a.qk_norm) c.other += 2 * d;
            break;
        }
        case MixerKind::mla: {
            const double heads = a.heads, dqk = static_cast<double>(a.head_dim), dv = static_cast<double>(a.v_head_dim);
            const double rq = static_cast<double>(a.q_lora_rank), rkv = static_cast<double>(a.kv_lora_rank);
            const double rope = static_cast<double>(a.qk_rope_head_dim);
            c.gemm = a.q_lora_rank > 0 ? h * rq + rq * heads * dqk : h * heads * dqk;  // q (down, up) or q
            c.gemm += h * (rkv + rope) + rkv * heads * (dqk - rope + dv);              // kv down (+ shared rope key), up
            c.gemm += heads * dv * h;                                                  // output
            c.other = (a.q_lora_rank > 0 ? rq : 0.0) + rkv;                            // q and kv latent norms
            break;
        }
        case MixerKind::mamba2: {
            const double di = static_cast<double>(l.inner()), gn = l.groups * static_cast<double>(l.state_dim);
            const double conv = di + 2 * gn;  // x, B, C channels through the convolution
            c.gemm = h * (2 * di + 2 * gn + l.heads) + di * h;                         // in_proj (z, x, B, C, dt), out_proj
            c.other = conv * l.conv_kernel + (l.conv_bias ? conv : 0.0) + 3.0 * l.heads + di;  // conv, dt_bias, A_log, D, norm
            if (l.proj_bias) c.other += 2 * di + 2 * gn + l.heads + h;
            break;
        }
        case MixerKind::mamba1: {
            const double di = static_cast<double>(l.inner()), n = static_cast<double>(l.state_dim);
            const double r = static_cast<double>(l.dt_rank);
            c.gemm = h * 2 * di + di * (r + 2 * n) + r * di + di * h;  // in_proj (x, z), x_proj (dt, B, C), dt_proj, out_proj
            c.other = di * l.conv_kernel + (l.conv_bias ? di : 0.0) + di + di * n + di;  // conv, dt_proj bias, A_log, D
            if (l.proj_bias) c.other += 2 * di + h;
            if (l.inner_norms) c.other += r + 2 * n;  // Jamba's dt, B, C RMSNorm weights
            break;
        }
        case MixerKind::gated_deltanet: {
            const double kd = l.groups * static_cast<double>(l.state_dim), vd = static_cast<double>(l.inner());
            c.gemm = h * (2 * kd + 2 * vd) + h * 2.0 * l.heads + vd * h;  // in_proj_qkvz, in_proj_ba, out_proj
            c.other = (2 * kd + vd) * l.conv_kernel + 2.0 * l.heads + static_cast<double>(l.head_dim);  // conv, dt_bias, A_log, norm
            break;
        }
        case MixerKind::lightning: {
            const double ad = static_cast<double>(l.inner());
            c.gemm = h * 3 * ad + h * ad + ad * h;  // qkv, output gate, output
            c.other = ad;                           // norm over heads x head_dim
            break;
        }
        case MixerKind::none: break;
    }
    return c;
}

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

double attention_keys(int64_t seq, int64_t window, int64_t chunk, bool causal) {
    const double s = static_cast<double>(seq);
    double area = s * s / 2;  // causal: the lower triangle
    if (chunk > 0 && chunk < seq) {
        const double c = static_cast<double>(chunk), full = std::floor(s / c), rest = s - full * c;
        area = full * c * c / 2 + rest * rest / 2;
    }
    if (window > 0 && window < seq) {
        const double w = static_cast<double>(window);
        area = std::min(area, s * w - w * w / 2);  // the band of the last w keys
    }
    const double causal_keys = area / s;
    return causal ? causal_keys : 2 * causal_keys;
}

LayerForwardFlops layer_forward_flops(const LayerKind& k, int64_t hidden, int64_t seq, bool causal) {
    LayerForwardFlops f;
    f.weight_gemms = 2.0 * kind_counts(k, hidden, NormKind::none).gemm_active;
    const Attention& a = k.attention;
    const LinearMixer& l = k.linear;
    switch (k.mixer) {
        case MixerKind::attention:
        case MixerKind::mla: {
            const double keys = attention_keys(seq, a.window, a.chunk, causal);
            f.attention_core = 2.0 * a.heads * static_cast<double>(a.head_dim + a.v_head_dim) * keys;
            break;
        }
        case MixerKind::mamba2:  // Megatron-LM mamba_layer_flops: scan 7 * d_inner * d_state
        case MixerKind::mamba1:  // the same recurrence per channel and state (Gu & Dao 2023 alg. 2), counted alike
            f.attention_core = 7.0 * static_cast<double>(l.inner()) * static_cast<double>(l.state_dim);
            break;
        case MixerKind::gated_deltanet: {  // Megatron-Bridge gdn_layer_flops
            const double kd = l.groups * static_cast<double>(l.state_dim), vd = static_cast<double>(l.inner());
            f.attention_core = 4.0 * l.heads * static_cast<double>(l.state_dim) * static_cast<double>(l.head_dim) +
                               2.0 * l.conv_kernel * (2 * kd + vd);
            break;
        }
        case MixerKind::lightning: {  // intra-block attention + inter-block state (modeling_minimax.py)
            const double d = static_cast<double>(l.head_dim);
            const double block_keys = attention_keys(std::min(seq, l.chunk), 0, 0, causal);
            f.attention_core = l.heads * (4.0 * d * d + 4.0 * d * block_keys);
            break;
        }
        case MixerKind::none: break;
    }
    return f;
}

FlopsPerToken flops_per_token(const Model& m, const Training& t, Recompute r, double recomputed_share) {
    double layers_fwd = 0, core_fwd = 0, recomputed = 0;
    for (size_t k = 0; k < m.kinds().size(); ++k) {
        const LayerForwardFlops layer = layer_forward_flops(m.kinds()[k], m.hidden, t.seq_length, t.causal_flops);
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
        const LayerForwardFlops last = layer_forward_flops(m.layer(m.layers - 1), m.hidden, t.seq_length, t.causal_flops);
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
