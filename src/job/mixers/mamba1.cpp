// The Mamba-1 selective-scan mixer (MixerKind::mamba1; Gu & Dao 2023, arXiv
// 2312.00752 alg. 2; HF modeling_mamba.py MambaMixer, modeling_falcon_mamba.py,
// modeling_jamba.py JambaMambaMixer): d_inner channels, each its own head.
// Parameters in_proj h*2*di [+ 2di bias] + conv di*kernel [+ di] + x_proj
// di*(R + 2N) + dt_proj R*di + di + A_log di*N + D di + out_proj di*h
// [+ h bias] [+ R + 2N inner norms]; core 7*di*N per token, the recurrence
// counted as Megatron-LM counts Mamba-2's scan. On a GPU: its channels split
// over TP as Mamba-2's heads; x_proj over this rank's channels; the
// convolution over x alone (B and C come from x_proj after it).
#include "job/mixers/mixer_parts.h"

namespace lostflops {

namespace {

MixerCount count(const LayerKind& k, double h) {
    const LinearMixer& l = k.linear;
    MixerCount c;
    const double di = static_cast<double>(l.inner()), n = static_cast<double>(l.state_dim);
    const double r = static_cast<double>(l.dt_rank);
    c.gemm = h * 2 * di + di * (r + 2 * n) + r * di + di * h;  // in_proj (x, z), x_proj (dt, B, C), dt_proj, out_proj
    c.other = di * l.conv_kernel + (l.conv_bias ? di : 0.0) + di + di * n + di;  // conv, dt_proj bias, A_log, D
    if (l.proj_bias) c.other += 2 * di + h;
    if (l.inner_norms) c.other += r + 2 * n;  // Jamba's dt, B, C RMSNorm weights
    return c;
}

void on_rank(const LayerKind& k, const MixerRank& rk, MixerOnRank& o) {
    const LinearMixer& lm = k.linear;
    const double t = rk.t, h = rk.h;
    const double di = static_cast<double>(lm.inner()), n = static_cast<double>(lm.state_dim);
    const double r = static_cast<double>(lm.dt_rank);
    o.add(2 * di / t, h);       // in_proj: x, z
    o.add(r + 2 * n, di / t);   // x_proj: dt, B, C (over this rank's channels)
    o.add(di / t, r);           // dt_proj
    o.add(h, di / t);           // out_proj
    // Saved: in_proj's x and z, x_proj's dt, B, C, dt_proj's dt.
    const double gn = lm.groups * static_cast<double>(lm.state_dim);
    mixers::linear_on_rank(k, rk, di / t, di, 3 * di + r + 2 * gn, o);
}

KindProblem problem(const LayerKind& k) {
    const LinearMixer& l = k.linear;
    if (l.heads <= 0 || l.head_dim != 1 || l.groups != 1) return {"model.intermediate_size", "missing (the Mamba-1 mixer's d_inner)"};
    if (l.state_dim <= 0) return {"model.state_size", "missing"};
    if (l.dt_rank <= 0) return {"model.time_step_rank", "missing"};
    return {};
}

// Its channels split over TP as Mamba-2's heads; B and C are per token, not per group.
std::string tp_problem(const LayerKind& k, int64_t tp) {
    return mixers::tp_divides(k.linear.heads, tp, "the Mamba-1 mixer's d_inner");
}

}  // namespace

const MixerFns kMamba1Mixer{count, mixers::scan_core_flops, on_rank, problem, tp_problem, mixers::linear_shape_text};

}  // namespace lostflops
