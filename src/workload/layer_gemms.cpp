// The GEMMs of a layer's MLP or experts per GPU, and the fp8 casts of every
// GEMM's operands (the mixer's GEMMs are its kind's, job/mixers/). The dense
// MLP: fc1 (gate and up fused) and fc2 split over TP by width (Shoeybi et al.
// 2019). Experts under MoE parallel folding (Liu et al. 2025, Megatron-Core):
// the router on the tokens a rank holds, each expert matrix one grouped GEMM
// over the rank's local experts, the shared experts one fused MLP split over
// TP. The casts: Transformer Engine's cast-transpose (below).
#include "workload/layer_work_parts.h"

#include "lostflops/fp8_recipe.h"
#include "workload/eager_ledger.h"

namespace lostflops {

MlpGemms add_mlp_gemms(const LayerKind& k, const LayerTraits& l, const Training& tr, const ParallelPlan& p,
                       double tokens, double h, double sp_div, LayerWork& w) {
    MlpGemms g;
    const bool moe = l.moe, has_mlp = l.has_mlp, gated = l.gated;
    const double t = p.tp;
    const double ffn_div = t;
    auto add = [&w](double mm, double nn, double kk, double count = 1) {
        w.gemms[w.gemm_count++] = GemmShape{mm, nn, kk, count};
    };
    if (!moe && has_mlp) {
        g.fc1 = w.gemm_count;
        add(tokens, (gated ? 2.0 : 1.0) * k.mlp.ffn / ffn_div, h);  // fc1 (gate+up fused)
        add(tokens, h, k.mlp.ffn / ffn_div);                        // fc2
        g.ffn_width = static_cast<double>(k.mlp.ffn);
    } else if (moe) {
        // Balanced routing under MoE parallel folding (Liu et al. 2025): the
        // tp ranks split the tokens (b*s/(cp*tp) each), the router runs on the
        // tokens a rank holds; each expert tensor parallel group of etp ranks
        // gathers its members' tokens, so a rank runs etp*(b*s/(cp*tp))*k
        // expert-token pairs over its experts/ep local experts with 1/etp of
        // each expert's width (one grouped GEMM per matrix).
        const Moe& e = k.moe;
        const double etp = p.expert_tp();
        const double local_experts = static_cast<double>(e.experts) / p.ep;
        const double per_expert = etp * (tokens / t) * e.top_k / local_experts;
        g.router = w.gemm_count;
        w.moe_first_gemm = g.router;
        add(tokens / sp_div, e.experts, h);  // router
        const bool fp32_loop = eager_autocast(tr, p);  // GemmShape::fp32_loop
        add(per_expert, (gated ? 2.0 : 1.0) * e.expert.ffn / etp, h, local_experts);
        w.gemms[w.gemm_count - 1].grouped = true;
        w.gemms[w.gemm_count - 1].fp32_loop = fp32_loop;
        add(per_expert, h, e.expert.ffn / etp, local_experts);
        w.gemms[w.gemm_count - 1].grouped = true;
        w.gemms[w.gemm_count - 1].fp32_loop = fp32_loop;
        g.ffn_width = static_cast<double>(e.expert.ffn) * e.top_k;
        if (e.shared_ffn > 0) {
            add(tokens, (gated ? 2.0 : 1.0) * e.shared_ffn / ffn_div, h);  // shared experts, one fused MLP
            add(tokens, h, e.shared_ffn / ffn_div);
            g.ffn_width += static_cast<double>(e.shared_ffn);
        }
    }
    return g;
}

// fp8 training quantizes each GEMM operand from bf16 before the GEMM:
// Transformer Engine's cast-transpose kernel reads the bf16 tensor (2 B) and
// writes it in fp8 twice, as is and transposed (1 + 1 B), because Hopper's fp8
// GEMMs take only the "TN" layout, so the weight-gradient GEMM needs the
// transposed copy (Transformer Engine, docs/examples/fp8_primer.ipynb and
// transformer_engine/common/transpose/cast_transpose.cu; Blackwell's MXFP8
// likewise keeps row-wise and column-wise copies with their own block scales).
// torchao's Float8Linear (torchtitan) casts the same tensors. Forward: the
// input of every GEMM but the router (kept in 16/32-bit). Backward: the
// output gradient of every GEMM but the router. Weights are cast once per
// step (Megatron's is_first_microbatch caching) and left out. One kernel per
// cast. By recipe (lostflops/fp8_recipe.h) and stack (Transformer Engine
// under Megatron and DeepSpeed; torchao under fsdp and hf):
// - Under delayed scaling TE's norm writes its consumers' fp8 operand itself
//   (LayerNormLinear: QKV / the mixer's input projection, fc1 of a dense
//   MLP), no cast; under the other recipes, and under torchao always (a
//   norm is a module of its own there), the norm writes 16-bit and a cast
//   follows.
// - Under current scaling (tensorwise, rowwise) an amax kernel reads each
//   operand (2 bytes an element) before its cast, except that TE's norm
//   computes its output's amax as it writes it (the cast remains), and that
//   under torch.compile with torchao Inductor computes the amax (torchao's
//   tensor_to_amax, a reduction) in the kernel that writes the operand,
//   leaving the cast; Inductor cannot reach into TE's kernels, so a compiled
//   TE job keeps its amax passes.
// The scale kernel between amax and cast (TE's compute_scale_from_amax_kernel)
// is one thread, a few microseconds against the kernel_overhead_us every
// counted kernel is charged: left out.
void add_fp8_casts(LayerWork& w, int norm_fed_mixer, int norm_fed_fc1, int router, const Training& tr,
                   double sp_div) {
    constexpr double kAmaxBytes = 2.0;  // the amax pass reads the 16-bit operand
    const Fp8RecipeRow& r = fp8_recipe_row(tr.fp8_recipe);
    const bool torchao = fp8_casts_by_torchao(tr.framework);
    const bool amax_pass = r.amax_pass && !(tr.compile && torchao);
    const bool norm_writes_fp8 = r.norm_writes_fp8 && !torchao;
    const double amax_bytes = amax_pass ? kAmaxBytes : 0.0;
    const int amax_kernels = amax_pass ? 1 : 0;
    // torchao's axiswise casts (per-row scales, MXFP8: lostflops/fp8_recipe.h
    // fp8_torchao_axiswise) write one layout at a time: read 16-bit, write
    // fp8 once (3 bytes; MXFP8's E8M0 scales, a 32nd of a byte, left out).
    // Backward casts each output gradient along both axes and the saved
    // 16-bit input again along the other. Per-row scales of that input run
    // across the tokens: an amax pass over the saved tensor precedes its
    // cast even under torch.compile (no producer to fuse it into); MXFP8's
    // 32-element blocks are scaled inside the cast. The others: read
    // 16-bit, write fp8 and its transpose (4 bytes), once each.
    const bool axiswise = fp8_torchao_axiswise(tr);
    const double cast_bytes = axiswise ? 2.0 + 1.0 : 2.0 + 1.0 + 1.0;
    const int grad_casts = axiswise ? 2 : 1;
    for (int i = 0; i < w.gemm_count; ++i) {
        if (i == router) continue;
        const GemmShape& g = w.gemms[static_cast<size_t>(i)];
        const double in = g.count * g.m * g.k;
        if (i != norm_fed_mixer && i != norm_fed_fc1) {
            w.mem_bytes_fwd += (cast_bytes + amax_bytes) * in;
            w.kernels_fwd += 1 + amax_kernels;
        } else if (!norm_writes_fp8) {
            // The norm writes 16-bit and the quantizer casts it where the
            // norm ran, on the rank's share of the tokens under sequence
            // parallelism (TE quantizes before the all-gather, reducing the
            // amax over the TP group: layernorm_linear.py
            // set_quantizer_amax_reduction_group); TE's norm has computed the amax.
            const bool amax_in_norm = !torchao && amax_pass;
            w.mem_bytes_fwd += (cast_bytes + (amax_in_norm ? 0.0 : amax_bytes)) * in / sp_div;
            w.kernels_fwd += 1 + (amax_in_norm ? 0 : amax_kernels);
        }
        w.mem_bytes_bwd += grad_casts * (cast_bytes + amax_bytes) * g.count * g.m * g.n;
        w.kernels_bwd += grad_casts * (1 + amax_kernels);
        if (axiswise) {
            w.mem_bytes_bwd += (cast_bytes + (r.amax_pass ? kAmaxBytes : 0.0)) * in;
            w.kernels_bwd += r.amax_pass ? 2 : 1;
        }
    }
}

}  // namespace lostflops
