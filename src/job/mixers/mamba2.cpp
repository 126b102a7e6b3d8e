// The Mamba-2 SSD mixer (MixerKind::mamba2; Dao & Gu 2024, arXiv 2405.21060;
// Nemotron-H, HF modeling_nemotron_h.py). Parameters in_proj
// h*(2*di + 2*G*N + H) + conv (di + 2*G*N)*(kernel [+1]) + 3H (dt_bias,
// A_log, D) + di (norm) + di*h (out_proj); core 7*di*N per token, the scan as
// Megatron-LM's mamba_layer_flops counts it (training.py). On a GPU
// (Megatron-Core's MambaMixer): in_proj and out_proj split over heads; the
// convolution runs over x, B and C.
#include <fmt/format.h>

#include "job/mixers/mixer_parts.h"

namespace lostflops {

namespace {

MixerCount count(const LayerKind& k, double h) {
    const LinearMixer& l = k.linear;
    MixerCount c;
    const double di = static_cast<double>(l.inner()), gn = l.groups * static_cast<double>(l.state_dim);
    const double conv = di + 2 * gn;  // x, B, C channels through the convolution
    c.gemm = h * (2 * di + 2 * gn + l.heads) + di * h;                         // in_proj (z, x, B, C, dt), out_proj
    c.other = conv * l.conv_kernel + (l.conv_bias ? conv : 0.0) + 3.0 * l.heads + di;  // conv, dt_bias, A_log, D, norm
    if (l.proj_bias) c.other += 2 * di + 2 * gn + l.heads + h;
    return c;
}

void on_rank(const LayerKind& k, const MixerRank& r, MixerOnRank& o) {
    const LinearMixer& lm = k.linear;
    const double t = r.t, h = r.h;
    const double di = static_cast<double>(lm.inner()), gn = lm.groups * static_cast<double>(lm.state_dim);
    o.add((2 * di + 2 * gn + lm.heads) / t, h);  // in_proj: z, x, B, C, dt
    o.add(h, di / t);                             // out_proj
    const double di_local = di / t, gn_local = lm.groups * static_cast<double>(lm.state_dim) / t;
    mixers::linear_on_rank(k, r, di_local + 2 * gn_local, di + 2 * gn, 2 * di + 2 * gn + lm.heads, o);
}

KindProblem problem(const LayerKind& k) {
    const LinearMixer& l = k.linear;
    if (KindProblem p = mixers::linear_problem(k); !p.key.empty()) return p;
    if (l.heads % l.groups != 0)
        return {"model.mamba_num_heads", fmt::format("{} is not divisible by n_groups {}", l.heads, l.groups)};
    return {};
}

}  // namespace

const MixerFns kMamba2Mixer{count, mixers::scan_core_flops, on_rank,
                            problem, mixers::heads_and_groups_tp_problem, mixers::linear_shape_text};

}  // namespace lostflops
