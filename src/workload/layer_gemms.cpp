// The GEMMs of a layer's token mixer, per GPU under tensor parallelism
// (Megatron-LM layout, Shoeybi et al. 2019: projections split over heads, the
// output projection over its input; Megatron-Core's MLASelfAttention: the
// down projections of MLA duplicated on every TP rank; the linear mixers'
// projections split over heads or channels, as Megatron-Core's MambaMixer and
// GatedDeltaNet split them), and the fp8 casts of every GEMM's operands.
// One branch per MixerKind: a new mixer adds its projections here.
#include "workload/layer_work_parts.h"

namespace lostflops {

void add_mixer_gemms(const LayerKind& k, const LayerTraits& l, double t, double tokens, double h, LayerWork& w) {
    const Attention& at = k.attention;
    const LinearMixer& lm = k.linear;
    const double a = l.a, d = l.d, kv_local = l.kv_local;
    const double dv = static_cast<double>(at.v_head_dim);
    const double heads_local = a / t;
    auto add = [&w](double mm, double nn, double kk, double count = 1) {
        w.gemms[w.gemm_count++] = GemmShape{mm, nn, kk, count};
    };
    if (l.attention) {
        add(tokens, (a / t + 2 * kv_local) * d + (at.output_gate ? a / t * d : 0.0), h);  // QKV (+ gate)
        add(tokens, h, a / t * d);                                                     // output projection
    } else if (l.mla) {
        const double rq = static_cast<double>(at.q_lora_rank), rkv = static_cast<double>(at.kv_lora_rank);
        const double rope = static_cast<double>(at.qk_rope_head_dim);
        if (at.q_lora_rank > 0) {
            add(tokens, rq, h);                  // q down (duplicated over TP)
            add(tokens, heads_local * d, rq);    // q up
        } else {
            add(tokens, heads_local * d, h);     // q
        }
        add(tokens, rkv + rope, h);                        // kv down and the shared rotary key (duplicated)
        add(tokens, heads_local * (d - rope + dv), rkv);   // k (no rope part) and v up
        add(tokens, h, heads_local * dv);                  // output projection
    } else if (k.mixer == MixerKind::mamba2) {
        const double di = static_cast<double>(lm.inner()), gn = lm.groups * static_cast<double>(lm.state_dim);
        add(tokens, (2 * di + 2 * gn + lm.heads) / t, h);  // in_proj: z, x, B, C, dt
        add(tokens, h, di / t);                             // out_proj
    } else if (k.mixer == MixerKind::mamba1) {
        const double di = static_cast<double>(lm.inner()), n = static_cast<double>(lm.state_dim);
        const double r = static_cast<double>(lm.dt_rank);
        add(tokens, 2 * di / t, h);       // in_proj: x, z
        add(tokens, r + 2 * n, di / t);   // x_proj: dt, B, C (over this rank's channels)
        add(tokens, di / t, r);           // dt_proj
        add(tokens, h, di / t);           // out_proj
    } else if (k.mixer == MixerKind::gated_deltanet) {
        const double kd = lm.groups * static_cast<double>(lm.state_dim), vd = static_cast<double>(lm.inner());
        add(tokens, (2 * kd + 2 * vd + 2.0 * lm.heads) / t, h);  // in_proj_qkvz and in_proj_ba
        add(tokens, h, vd / t);                                   // out_proj
    } else if (k.mixer == MixerKind::lightning) {
        const double ad = static_cast<double>(lm.inner());
        add(tokens, 4 * ad / t, h);  // qkv and output gate
        add(tokens, h, ad / t);      // out_proj
    }
}

// fp8 training quantizes each GEMM operand from bf16 before the GEMM:
// Transformer Engine's cast-transpose kernel reads the bf16 tensor (2 B) and
// writes it in fp8 twice, as is and transposed (1 + 1 B), because Hopper's fp8
// GEMMs take only the "TN" layout, so the weight-gradient GEMM needs the
// transposed copy (Transformer Engine, docs/examples/fp8_primer.ipynb and
// transformer_engine/common/transpose/cast_transpose.cu; Blackwell's MXFP8
// likewise keeps row-wise and column-wise copies with their own block scales).
// torchao's Float8Linear (torchtitan) casts the same tensors. Forward: the
// input of every GEMM, except those whose input a norm writes directly in fp8
// (TE's LayerNormLinear: QKV / the mixer's input projection, fc1 of a dense
// MLP) and the router (kept in 16/32-bit). Backward: the output gradient of
// every GEMM but the router. Weights are cast once per step (Megatron's
// is_first_microbatch caching) and left out. One kernel per cast.
void add_fp8_casts(LayerWork& w, int norm_fed_mixer, int norm_fed_fc1, int router) {
    constexpr double kCastBytes = 2.0 + 1.0 + 1.0;  // read bf16, write fp8 and its transpose
    for (int i = 0; i < w.gemm_count; ++i) {
        if (i == router) continue;
        const GemmShape& g = w.gemms[static_cast<size_t>(i)];
        if (i != norm_fed_mixer && i != norm_fed_fc1) {
            w.mem_bytes_fwd += kCastBytes * g.count * g.m * g.k;
            w.kernels_fwd += 1;
        }
        w.mem_bytes_bwd += kCastBytes * g.count * g.m * g.n;
        w.kernels_bwd += 1;
    }
}

}  // namespace lostflops
