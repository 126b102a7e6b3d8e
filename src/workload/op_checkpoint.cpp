// torchtitan's per-op selective activation checkpointing (SAC), the policy
// of torchtitan/parallelisms/parallelize_llama.py at commit 9dec370 (the one
// its December 2024 benchmarks ran): each TransformerBlock is wrapped in
// torch.utils.checkpoint with a policy that saves (CheckpointPolicy.MUST_SAVE)
// the outputs of the ops in `_save_list` — aten.mm, the SDPA kernels
// (_scaled_dot_product_flash_attention / _efficient_attention),
// _c10d_functional.reduce_scatter_tensor, abs and max — "except every second
// mm" (a per-block counter: the 2nd, 4th, ... mm of the block's forward are
// recomputed), and recomputes everything else (PREFER_RECOMPUTE). So a layer
// keeps, per micro-batch:
//   its input (the checkpoint's argument)              2 * tokens * h  (/t under sequence parallelism)
//   the 1st, 3rd, 5th, 7th mm outputs, in torchtitan's Llama order
//     wq, wk, wv, wo, w1, w3, w2: wq, wv, w1, w2       2 * tokens * n each (n = output width on this GPU)
//   the SDPA output and its logsumexp (fp32)           2 * tokens * a/t * dv + 4 * tokens * a/t
//   with tensor parallelism, the two reduce-scatters   2 * tokens * h/t each
// and its backward redoes the other mms (wk, wo, w3) and every element-wise
// op (norms, rotary, SiLU, products); the attention core is kept, not redone.
// fp8 (torchao Float8Linear) does not change this: its Float8Tensor inputs
// reach the dispatcher as aten.mm, which the checkpoint's dispatch mode sees
// (and counts and saves, a bf16 output) before the subclass lowers it to
// torch._scaled_mm (torchao float8/float8_ops.py float8_mm implements
// aten.mm.default); the amax scalars (abs, max) are saved too, a few bytes.
// Mixers other than softmax attention and expert GEMMs (grouped, not aten.mm)
// are counted by the same rule over the layer's GEMMs in LayerWork order.
#include "workload/op_checkpoint.h"

#include <algorithm>

#include "workload/layer_work.h"

namespace lostflops {

OpCheckpoint op_checkpoint(const Model& m, const LayerKind& k, const ParallelPlan& p, const LayerWork& w, double tokens) {
    const double t = p.tp, h = static_cast<double>(m.hidden);
    const bool sp = p.tp > 1;  // torchtitan's TP is always sequence parallel (SequenceParallel norms)
    OpCheckpoint out;
    out.stored_bytes = 2 * tokens * h / (sp ? t : 1.0);
    double mm_count = 0, total_flops = 0, redone_flops = 0;
    // One aten.mm of `rows` x `n` output and `kk` inner size.
    const auto mm = [&](double rows, double n, double kk, double count) {
        for (int i = 0; i < static_cast<int>(count); ++i) {
            mm_count += 1;
            total_flops += rows * n * kk;
            const bool saved = static_cast<int64_t>(mm_count) % 2 == 1;
            if (saved) out.stored_bytes += 2 * rows * n;
            else redone_flops += rows * n * kk;
        }
    };
    const Attention& at = k.attention;
    int from = 0;  // first GEMM of w not yet counted
    if (k.mixer == MixerKind::attention) {
        const double a = static_cast<double>(at.heads), d = static_cast<double>(at.head_dim);
        const double dv = static_cast<double>(at.v_head_dim), kv = std::max(1.0, at.kv_heads / t);
        mm(tokens, a / t * d, h, 1);   // wq
        mm(tokens, kv * d, h, 1);      // wk
        mm(tokens, kv * d, h, 1);      // wv
        mm(tokens, h, a / t * dv, 1);  // wo (partial sums before the reduce-scatter)
        out.stored_bytes += 2 * tokens * a / t * dv + 4 * tokens * a / t;  // SDPA output, logsumexp
        from = 2;                       // w's fused QKV and output projection
    }
    for (int i = from; i < w.gemm_count; ++i) {
        const GemmShape& g = w.gemms[static_cast<size_t>(i)];
        if (g.grouped) {  // torch._grouped_mm: not on the list, recomputed
            total_flops += g.count * g.m * g.n * g.k;
            redone_flops += g.count * g.m * g.n * g.k;
            continue;
        }
        // torchtitan's gated MLP runs w1 and w3 as two mms (w's fc1 is them fused).
        const bool fused_gate = k.mlp.kind == MlpKind::gated && !k.is_moe() && i + 2 == w.gemm_count;
        if (fused_gate) {
            mm(g.m, g.n / 2, g.k, 2);
        } else {
            mm(g.m, g.n, g.k, g.count);
        }
    }
    if (p.tp > 1) out.stored_bytes += 2.0 * 2 * tokens * h / t;  // reduce_scatter_tensor outputs
    out.recompute_gemm_share = total_flops > 0 ? redone_flops / total_flops : 0.0;
    return out;
}

}  // namespace lostflops
