// The parts several mixer kinds share (mixers/mixer_parts.h). Keys a query
// sees: the causal triangle s^2/2 over s queries, within chunks of c the
// triangles of the full chunks and the rest, within a window w the band
// s*w - w^2/2 (Beltagy et al. 2020, Longformer; Llama 4's chunked attention);
// doubled when causal is false, Megatron-LM's num_floating_point_operations
// convention. Linear mixers' memory: Megatron-Core's MambaMixer and
// GatedDeltaNet layout (projections split over heads or channels), the
// tensors each saves counted one by one (workload/layer_work.cpp's header).
#include "job/mixers/mixer_parts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace lostflops {

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

namespace mixers {

std::string tp_divides(int64_t n, int64_t tp, const char* what) {
    if (n % tp == 0) return {};
    return fmt::format("{} {} is not divisible by tp {}", what, n, tp);
}

double softmax_core_flops(const LayerKind& k, int64_t seq, bool causal) {
    const Attention& a = k.attention;
    const double keys = attention_keys(seq, a.window, a.chunk, causal);
    return 2.0 * a.heads * static_cast<double>(a.head_dim + a.v_head_dim) * keys;
}

SoftmaxShape softmax_shape(const LayerKind& k, const MixerRank& r) {
    const Attention& at = k.attention;
    const double a = static_cast<double>(at.heads);
    return {.t = r.t, .c = r.c, .tokens = r.tokens, .h = r.h, .el = r.el, .a = a,
            .d = static_cast<double>(at.head_dim), .dv = static_cast<double>(at.v_head_dim), .heads_local = a / r.t};
}

double scan_core_flops(const LayerKind& k, int64_t, bool) {
    return 7.0 * static_cast<double>(k.linear.inner()) * static_cast<double>(k.linear.state_dim);
}

std::string heads_and_groups_tp_problem(const LayerKind& k, int64_t tp) {
    if (std::string why = tp_divides(k.linear.heads, tp, "the linear mixer's heads"); !why.empty()) return why;
    return tp_divides(k.linear.groups, tp, "the linear mixer's groups");
}

KindProblem linear_problem(const LayerKind& k) {
    const LinearMixer& l = k.linear;
    if (l.heads <= 0 || l.head_dim <= 0) return {"model", fmt::format("the {} mixer needs heads and a head dim", to_string(k.mixer))};
    if (l.groups <= 0 || l.state_dim <= 0)
        return {"model", fmt::format("the {} mixer needs groups and a state size", to_string(k.mixer))};
    return {};
}

std::string linear_shape_text(const LayerKind& k) {
    const LinearMixer& l = k.linear;
    return fmt::format("({}x{}, groups {}, state {})", l.heads, l.head_dim, l.groups, l.state_dim);
}

void linear_on_rank(const LayerKind& k, const MixerRank& r, double conv_local, double conv, double proj,
                    MixerOnRank& o) {
    const LinearMixer& lm = k.linear;
    const double t = r.t, tokens = r.tokens;
    const double di_local = static_cast<double>(lm.inner()) / t;
    o.mem_elems = 2 * conv_local + (conv_local + 2.0 * lm.heads / t + di_local) + 3 * di_local;
    o.mem_kernels = 6;
    o.core_kernels = 1;
    const double di = static_cast<double>(lm.inner());
    o.saved_split = 2 * tokens * (proj + conv + 2 * di);
    // fp32 state per head at each chunk boundary: heads x head_dim x state_dim.
    const double chunks = std::max(1.0, tokens / static_cast<double>(std::max<int64_t>(1, lm.chunk)));
    o.saved_on_rank_bytes = chunks * (lm.heads / t) * static_cast<double>(lm.head_dim) * static_cast<double>(lm.state_dim) * 4;
    o.state_fp32 = true;
    const MixerCount c = mixer_fns(k.mixer).count(k, r.h);
    o.params = (c.gemm + c.other) / t;  // every weight split over TP
}

}  // namespace mixers

}  // namespace lostflops
