// Softmax attention (MixerKind::attention): MHA, GQA (kv_heads < heads), MQA;
// windowed or chunked. Parameters h*d*(2a + 2g) (+ the output gate h*a*d,
// qkv biases d*(a + 2g), output bias h, a sinks, 2d qk norm); core
// 2*a*(d + dv) per key a query sees (Vaswani et al. 2017; GQA Ainslie et al.
// 2023; Megatron-LM num_floating_point_operations). On a GPU (Shoeybi et al.
// 2019): the QKV projection split over heads, K and V heads replicated when tp
// exceeds them, the output projection over its input; saved for backward
// (Korthikanti et al. 2022 table 2, counted per tensor): Q, K, V, the output
// projection's input and the gate, 2 bytes each. Context parallelism: a ring
// brings the other ranks' K and V, Ulysses' all-to-alls move Q, K, V and the
// output (cost/cp_attention.h).
#include <algorithm>

#include <fmt/format.h>

#include "job/mixers/mixer_parts.h"

namespace lostflops {

namespace {

MixerCount count(const LayerKind& k, double h) {
    const Attention& a = k.attention;
    MixerCount c;
    const double d = static_cast<double>(a.head_dim);
    c.gemm = h * d * (2.0 * a.heads + 2.0 * a.kv_heads);
    if (a.output_gate) c.gemm += h * a.heads * d;
    if (a.qkv_bias) c.other += d * (a.heads + 2.0 * a.kv_heads);
    if (a.out_bias) c.other += h;
    if (a.sinks) c.other += a.heads;
    if (a.qk_norm) c.other += 2 * d;
    return c;
}

void on_rank(const LayerKind& k, const MixerRank& r, MixerOnRank& o) {
    const Attention& at = k.attention;
    const auto [t, c, tokens, h, el, a, d, dv, heads_local] = mixers::softmax_shape(k, r);
    const double kv_local = std::max(1.0, at.kv_heads / t);  // replicated when tp > kv heads
    o.add((a / t + 2 * kv_local) * d + (at.output_gate ? a / t * d : 0.0), h);  // QKV (+ gate)
    o.add(h, a / t * d);                                                        // output projection
    o.params = h * d * (2.0 * a / t + 2.0 * kv_local);
    if (at.output_gate) o.params += h * d * a / t;
    if (at.qkv_bias) o.params += d * (a / t + 2 * kv_local);
    if (at.out_bias) o.params += h;
    if (at.sinks) o.params += a / t;
    if (at.qk_norm) o.params += 2 * d;
    o.rope_elems = (a / t + kv_local) * d;
    o.core_kernels = 1;
    // Q and out-proj input split over t; K and V hold kv_local heads per rank.
    o.saved_split = 2 * (tokens * (a * d)) + 2 * (tokens * (a * dv));
    if (at.output_gate) o.saved_split += 2 * tokens * (a * d);
    o.saved_on_rank_bytes = 4 * tokens * kv_local * d;
    o.fp8_split_less = tokens * a * dv;  // the output projection's input
    o.cp_ring_bytes = (c - 1) * tokens * 2 * kv_local * d * el;
    o.cp_qkv_bytes = tokens * (heads_local + 2 * kv_local) * d * el;
    o.cp_out_bytes = tokens * heads_local * dv * el;
}

KindProblem problem(const LayerKind& k) {
    const Attention& a = k.attention;
    if (a.heads <= 0) return {"model.num_attention_heads", "missing"};
    if (a.kv_heads <= 0 || a.heads % a.kv_heads != 0)
        return {"model.num_key_value_heads", fmt::format("num_attention_heads {} is not divisible by {}", a.heads, a.kv_heads)};
    if (a.head_dim <= 0) return {"model.head_dim", "missing"};
    if (a.window < 0 || a.chunk < 0) return {"model.sliding_window", "negative"};
    return {};
}

std::string tp_problem(const LayerKind& k, int64_t tp) {
    const Attention& a = k.attention;
    if (std::string why = mixers::tp_divides(a.heads, tp, "num_attention_heads"); !why.empty()) return why;
    if (a.kv_heads % tp != 0 && tp % a.kv_heads != 0)
        return fmt::format("num_key_value_heads {} and tp {}: one must divide the other", a.kv_heads, tp);
    return {};
}

std::string shape_text(const LayerKind& k) {
    const Attention& a = k.attention;
    std::string out = fmt::format("({}x{}, kv {}", a.heads, a.head_dim, a.kv_heads);
    if (a.window > 0) out += fmt::format(", window {}", a.window);
    if (a.chunk > 0) out += fmt::format(", chunk {}", a.chunk);
    if (a.sinks) out += ", sinks";
    if (a.output_gate) out += ", gated";
    out += ")";
    return out;
}

}  // namespace

const MixerFns kAttentionMixer{count, mixers::softmax_core_flops, on_rank, problem, tp_problem, shape_text};

}  // namespace lostflops
