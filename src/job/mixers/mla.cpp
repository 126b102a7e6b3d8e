// Multi-head latent attention (MixerKind::mla; DeepSeek-V2 report arXiv
// 2405.04434 sec. 2.1, eq. 9-19; HF modeling_deepseek_v3.py): queries through
// a low-rank latent (or projected straight), keys and values up-projected
// from a shared latent plus one rotary key. Parameters q: h*a*d or
// h*rq + rq + rq*a*d; kv: h*(rkv + dr) + rkv + rkv*a*(d - dr + dv); out:
// a*dv*h; core 2*a*(d + dv) per key (keys and values up-projected, as
// trained). On a GPU (Megatron-Core's MLASelfAttention): the down projections
// and latent norms duplicated on every TP rank, the up and output projections
// split over heads; saved: the latents and their norm inputs (duplicated), Q,
// K, V and the output (split). Megatron-Core keeps its norm a module of its
// own and recomputes the up projections as mla_up_proj
// (transformer_config.py recompute_modules, multi_latent_attention.py).
#include <fmt/format.h>

#include "job/mixers/mixer_parts.h"

namespace lostflops {

namespace {

MixerCount count(const LayerKind& k, double h) {
    const Attention& a = k.attention;
    MixerCount c;
    const double heads = a.heads, dqk = static_cast<double>(a.head_dim), dv = static_cast<double>(a.v_head_dim);
    const double rq = static_cast<double>(a.q_lora_rank), rkv = static_cast<double>(a.kv_lora_rank);
    const double rope = static_cast<double>(a.qk_rope_head_dim);
    c.gemm = a.q_lora_rank > 0 ? h * rq + rq * heads * dqk : h * heads * dqk;  // q (down, up) or q
    c.gemm += h * (rkv + rope) + rkv * heads * (dqk - rope + dv);              // kv down (+ shared rope key), up
    c.gemm += heads * dv * h;                                                  // output
    c.other = (a.q_lora_rank > 0 ? rq : 0.0) + rkv;                            // q and kv latent norms
    return c;
}

void on_rank(const LayerKind& k, const MixerRank& r, MixerOnRank& o) {
    const Attention& at = k.attention;
    const auto [t, c, tokens, h, el, a, d, dv, heads_local] = mixers::softmax_shape(k, r);
    const double rq = static_cast<double>(at.q_lora_rank), rkv = static_cast<double>(at.kv_lora_rank);
    const double rope = static_cast<double>(at.qk_rope_head_dim);
    const bool q_latent = at.q_lora_rank > 0;
    if (q_latent) {
        o.add(rq, h);                  // q down (duplicated over TP)
        o.add(heads_local * d, rq);    // q up
    } else {
        o.add(heads_local * d, h);     // q
    }
    o.add(rkv + rope, h);                        // kv down and the shared rotary key (duplicated)
    o.add(heads_local * (d - rope + dv), rkv);   // k (no rope part) and v up
    o.add(h, heads_local * dv);                  // output projection
    // Duplicated over TP: the down projections and latent norms; the rest split.
    const double duplicated = (q_latent ? h * rq + rq : 0.0) + h * (rkv + rope) + rkv;
    const MixerCount all = count(k, h);
    o.params = duplicated + ((all.gemm + all.other) - duplicated) / t;
    o.rope_elems = (a / t + 1) * rope;
    o.core_kernels = 1;
    o.saved_replicated = 2 * tokens * (2 * rq + 2 * rkv + rope);
    o.saved_split = 2 * tokens * a * (2 * d + 2 * dv);
    o.fp8_split_less = tokens * a * dv;  // the output projection's input
    o.cp_ring_bytes = (c - 1) * tokens * heads_local * (d + dv) * el;
    o.cp_qkv_bytes = tokens * heads_local * (2 * d + dv) * el;
    o.cp_out_bytes = tokens * heads_local * dv * el;
    // mla_up_proj: the q and kv up projections (or q's own projection
    // without a q latent); Q, K and V dropped.
    o.up_proj_gemms = (1u << (q_latent ? 1 : 0)) | (1u << (q_latent ? 3 : 2));
    o.up_proj_bytes = el * tokens * a * (2 * d + dv) / t;
}

KindProblem problem(const LayerKind& k) {
    const Attention& a = k.attention;
    if (a.heads <= 0) return {"model.num_attention_heads", "missing"};
    if (a.kv_lora_rank <= 0) return {"model.kv_lora_rank", "missing"};
    if (a.qk_rope_head_dim <= 0 || a.head_dim <= a.qk_rope_head_dim)
        return {"model.qk_nope_head_dim", "missing (multi-latent attention needs qk_nope_head_dim and qk_rope_head_dim)"};
    if (a.v_head_dim <= 0) return {"model.v_head_dim", "missing"};
    return {};
}

std::string tp_problem(const LayerKind& k, int64_t tp) {
    return mixers::tp_divides(k.attention.heads, tp, "num_attention_heads");
}

std::string shape_text(const LayerKind& k) {
    const Attention& a = k.attention;
    return fmt::format("({} heads, q rank {}, kv rank {}, qk {} (rope {}), v {})", a.heads, a.q_lora_rank,
                       a.kv_lora_rank, a.head_dim, a.qk_rope_head_dim, a.v_head_dim);
}

}  // namespace

const MixerFns kMlaMixer{count, mixers::softmax_core_flops, on_rank, problem, tp_problem, shape_text};

}  // namespace lostflops
