// Gated DeltaNet (MixerKind::gated_deltanet; Yang et al. 2024, arXiv
// 2412.06464; Qwen3-Next, HF modeling_qwen3_next.py). Parameters
// h*(2*gN + 2*Hd) + h*2H (in_proj_qkvz, in_proj_ba) + (2*gN + Hd)*kernel
// (conv) + 2H (dt_bias, A_log) + d (norm) + Hd*h (out_proj); core per token
// 4*H*N*d (state readout and update) + 2*kernel*(2*gN + Hd) (the
// convolution), Megatron-Bridge flop_utils.py gdn_layer_flops. On a GPU
// (Megatron-Core's GatedDeltaNet): projections split over heads; the
// convolution over q, k and v.
#include <fmt/format.h>

#include "job/mixers/mixer_parts.h"

namespace lostflops {

namespace {

MixerCount count(const LayerKind& k, double h) {
    const LinearMixer& l = k.linear;
    MixerCount c;
    const double kd = l.groups * static_cast<double>(l.state_dim), vd = static_cast<double>(l.inner());
    c.gemm = h * (2 * kd + 2 * vd) + h * 2.0 * l.heads + vd * h;  // in_proj_qkvz, in_proj_ba, out_proj
    c.other = (2 * kd + vd) * l.conv_kernel + 2.0 * l.heads + static_cast<double>(l.head_dim);  // conv, dt_bias, A_log, norm
    return c;
}

double core_flops(const LayerKind& k, int64_t, bool) {
    const LinearMixer& l = k.linear;
    const double kd = l.groups * static_cast<double>(l.state_dim), vd = static_cast<double>(l.inner());
    return 4.0 * l.heads * static_cast<double>(l.state_dim) * static_cast<double>(l.head_dim) +
           2.0 * l.conv_kernel * (2 * kd + vd);
}

void on_rank(const LayerKind& k, const MixerRank& r, MixerOnRank& o) {
    const LinearMixer& lm = k.linear;
    const double t = r.t, h = r.h;
    const double kd = lm.groups * static_cast<double>(lm.state_dim), vd = static_cast<double>(lm.inner());
    o.add((2 * kd + 2 * vd + 2.0 * lm.heads) / t, h);  // in_proj_qkvz and in_proj_ba
    o.add(h, vd / t);                                   // out_proj
    const double di_local = vd / t, gn_local = kd / t;
    mixers::linear_on_rank(k, r, 2 * gn_local + di_local, 2 * kd + vd, 2 * kd + 2 * vd + 2.0 * lm.heads, o);
}

KindProblem problem(const LayerKind& k) {
    const LinearMixer& l = k.linear;
    if (KindProblem p = mixers::linear_problem(k); !p.key.empty()) return p;
    if (l.heads % l.groups != 0)
        return {"model.linear_num_value_heads",
                fmt::format("{} is not divisible by linear_num_key_heads {}", l.heads, l.groups)};
    return {};
}

}  // namespace

const MixerFns kGatedDeltaNetMixer{count, core_flops, on_rank,
                                   problem, mixers::heads_and_groups_tp_problem, mixers::linear_shape_text};

}  // namespace lostflops
