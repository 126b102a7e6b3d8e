// Per-layer operator list of a decoder layer under TP/SP/CP/EP (Megatron-LM
// layout, Shoeybi et al. 2019; Korthikanti et al. 2022 for sequence parallel).
//
// Activation memory per layer per micro-batch, 16-bit (Korthikanti et al. 2022,
// sec. 4, table 2), generalised to FFN width f, grouped-query attention and
// gated MLPs by counting each stored tensor:
//   attention: LN input 2sbh, QKV input 2sbh, Q 2sbh, K and V 2sbh*kv/a each,
//              output-projection input 2sbh, dropout mask sbh,
//              unfused softmax: scores out 2as^2b, dropout mask as^2b, out 2as^2b
//   MLP (GeLU): LN input 2sbh, fc1 input 2sbh, GeLU in/out 2*2sbf, mask sbh
//   MLP (gated): LN input 2sbh, input 2sbh, gate and up 2*2sbf, product 2sbf
// For f = 4h, a = kv, GeLU this gives sbh(34 + 5as/h). Without sequence
// parallelism the LN inputs, QKV/fc1 inputs and dropout masks (10 sbh) are
// replicated across TP ranks; everything else is divided by t. With sequence
// parallelism everything is divided by t. Flash attention and selective
// recompute drop the as^2 terms. Dropout masks are kept for GeLU (GPT-style)
// models only; gated (Llama-style) models train without dropout.
#include "workload/layer_work.h"

#include <algorithm>

namespace lostflops {

LayerWork layer_work(const Model& m, const Training& tr, const ParallelPlan& p) {
    LayerWork w;
    const double t = p.tp, c = p.cp;
    const double b = static_cast<double>(tr.micro_batch);
    const double s = static_cast<double>(tr.seq_length);
    const double h = static_cast<double>(m.hidden);
    const double a = m.heads, d = static_cast<double>(m.head_dim());
    const double kv_local = std::max(1.0, m.kv_heads / t);  // KV heads replicated when tp > kv
    const double tokens = b * s / c;                        // per GPU per micro-batch
    const bool gated = m.mlp == MlpKind::gated;
    const bool sp = p.sequence_parallel && p.tp > 1;
    const double sp_div = sp ? t : 1.0;
    const double el = 2.0;  // bytes of a 16-bit activation

    auto add = [&w](double mm, double nn, double kk, double count = 1) {
        w.gemms[w.gemm_count++] = GemmShape{mm, nn, kk, count};
    };
    add(tokens, (a / t + 2 * kv_local) * d, h);  // QKV
    add(tokens, h, a / t * d);                   // output projection
    const double ffn_div = t;
    if (!m.is_moe()) {
        add(tokens, (gated ? 2.0 : 1.0) * m.ffn / ffn_div, h);  // fc1 (gate+up fused)
        add(tokens, h, m.ffn / ffn_div);                        // fc2
    } else {
        // Balanced routing: every GPU processes tokens*k expert-token pairs over
        // its experts/ep local experts (expert tensor parallel = tp).
        const double local_experts = static_cast<double>(m.experts) / p.ep;
        const double per_expert = tokens * m.experts_per_token / local_experts;
        add(tokens, m.experts, h);  // router
        add(per_expert, (gated ? 2.0 : 1.0) * m.moe_ffn / ffn_div, h, local_experts);
        add(per_expert, h, m.moe_ffn / ffn_div, local_experts);
    }

    // Attention core: queries of this rank (s/c) against all s keys.
    const double heads_local = a / t;
    const double core = 4.0 * b * heads_local * (s / c) * s * d;
    w.unfused = tr.attention == AttentionKernel::unfused;
    if (w.unfused) {
        w.attention_flops_fwd = core;
        w.scores = GemmShape{b * heads_local * (s / c), s, d, 1};
        w.values = GemmShape{b * heads_local * (s / c), d, s, 1};
    } else {
        w.attention_flops_fwd = core * 0.5;  // causal: masked blocks skipped
    }

    // Memory-bound kernels, forward bytes (read + write), per GPU.
    const double act = tokens * h * el / sp_div;  // one hidden-size activation
    const double ffn_local = (m.is_moe() ? m.moe_ffn * m.experts_per_token : m.ffn) / t;
    const double ffn_act = tokens * ffn_local * el;
    double fwd = 2 * (2 * act);      // two norms: read, write
    fwd += 2 * (3 * act);            // two residual adds (+ bias, dropout fused)
    fwd += (gated ? 3.0 : 2.0) * ffn_act;  // activation function (SwiGLU reads 2, writes 1)
    double kernels = 2 + 2 + 1;
    if (gated) {                     // rotary embedding on Q and K
        fwd += 2 * tokens * (a / t + kv_local) * d * el;
        kernels += 1;
    }
    // Eager PyTorch stacks (FSDP, DeepSpeed on a Hugging Face / torchtitan
    // Llama) run the RMSNorm, rotary and SwiGLU as separate kernels through
    // fp32 (torchtitan models/llama/model.py, HF LlamaRMSNorm): RMSNorm =
    // float (r2 w4), pow (r4 w4), mean (r4), multiply (r4 w4), cast (r4 w2),
    // weight (r2 w2) = 36 bytes per element against 4 fused; rotary = float,
    // complex multiply, cast = ~20 bytes per Q/K element against 4; SwiGLU =
    // silu (r2 w2) + multiply (r4 w2) = 10 bytes per FFN element against 6.
    // GeLU models use PyTorch's fused LayerNorm and GeLU kernels: no extra.
    const bool eager = tr.framework == Framework::fsdp || tr.framework == Framework::deepspeed;
    if (eager && gated) {
        fwd += 2 * (36.0 - 4.0) / el * act;
        fwd += (20.0 - 4.0) * tokens * (a / t + kv_local) * d;
        fwd += (10.0 - 6.0) / el * ffn_act;
        kernels += 2 * 5 + 2 * 2 + 1;
    }
    double attn_mem = 0;
    const double score_elems = b * heads_local * (s / c) * s;
    if (w.unfused) {
        attn_mem = score_elems * (2 + 2 + 2 + 2 + 1);  // scale-mask-softmax, dropout + mask
        kernels += 2;
    }
    if (m.is_moe()) {                // permute and un-permute token copies
        fwd += 2 * 2 * tokens * m.experts_per_token * h * el;
        kernels += 4;
    }
    w.mem_bytes_attention_fwd = attn_mem;
    w.mem_bytes_fwd = fwd + attn_mem;
    w.mem_bytes_bwd = 2 * w.mem_bytes_fwd;
    w.kernels_fwd = kernels + w.gemm_count + (w.unfused ? 2 : 1);
    w.kernels_bwd = 2 * kernels + 2 * w.gemm_count + (w.unfused ? 4 : 2);

    // Tensor parallel traffic: each collective moves one full activation.
    if (p.tp > 1) {
        w.tp_bytes = tokens * h * el;
        w.tp_sequence_parallel = sp;
        w.tp_collectives_fwd = sp ? 4 : 2;  // SP: 2 all-gathers + 2 reduce-scatters
    }
    if (p.cp > 1) w.cp_bytes_fwd = (c - 1) * tokens * 2 * kv_local * d * el;
    if (m.is_moe() && p.ep > 1) {
        w.ep_bytes = tokens * m.experts_per_token * h * el;
        w.ep_alltoalls_fwd = 2;  // dispatch and combine
    }

    // Activation memory (Korthikanti et al. 2022), bytes, per GPU.
    const double sbh = tokens * h;  // elements
    const bool dropout = !gated;
    const double masks = dropout ? 2 * sbh : 0;  // attention and MLP output masks (1 byte)
    const double replicated = 2 * sbh * 2 + 2 * sbh * 2 + masks;  // LN inputs, QKV/fc1 inputs, masks
    // Q and out-proj input split over t; K and V hold kv_local heads per rank
    // (replicated when tp > kv heads).
    double split = 2 * sbh + 2 * sbh;                              // Q, out-proj input
    const double kv_stored = 4 * tokens * kv_local * d;            // K and V, per rank
    const double ffn_elems = tokens * (m.is_moe() ? m.moe_ffn * m.experts_per_token : m.ffn);
    split += gated ? 6 * ffn_elems : 4 * ffn_elems;
    // Permuted token copies are hidden-sized: replicated across TP without SP.
    const double permuted = m.is_moe() ? 2 * 2 * tokens * m.experts_per_token * h : 0;
    const double scores = b * a * (s / c) * s * (2 + (dropout ? 3 : 0));  // softmax out, mask, dropout out
    const double full = (replicated + permuted) / sp_div + split / t + kv_stored + (w.unfused ? scores / t : 0);
    w.activation_bytes_full = full;
    w.checkpoint_bytes = 2 * sbh / sp_div;
    switch (p.recompute) {
        case Recompute::none: w.activation_bytes = full; break;
        case Recompute::selective: w.activation_bytes = full - (w.unfused ? scores / t : 0); break;
        case Recompute::full: w.activation_bytes = w.checkpoint_bytes; break;
    }

    // Weights per GPU.
    const double attn_params = h * d * (2.0 * a / t + 2.0 * kv_local);
    const double mlp_mats = gated ? 3.0 : 2.0;
    // Expert weights are sharded over EP and reduced over the expert-data-
    // parallel group (dp*cp/ep ranks); the router is dense.
    w.expert_params = m.is_moe() ? (static_cast<double>(m.experts) / p.ep) * mlp_mats * h * m.moe_ffn / t : 0.0;
    const double dense_mlp = m.is_moe() ? h * m.experts : mlp_mats * h * m.ffn / t;
    w.params = attn_params + dense_mlp + 2 * h;
    return w;
}

HeadWork head_work(const Model& m, const Training& tr, const ParallelPlan& p) {
    HeadWork w;
    const double t = p.tp;
    const double tokens = static_cast<double>(tr.micro_batch) * tr.seq_length / p.cp;
    const double h = static_cast<double>(m.hidden);
    const double v_local = static_cast<double>(m.vocab) / t;
    w.logits = GemmShape{tokens, v_local, h, 1};
    // Megatron's vocab-parallel cross-entropy works in fp32: cast (read 2,
    // write 4), max and sum-exp passes (read 4 twice), loss; backward writes
    // softmax - one-hot (read 4, write 2).
    w.loss_bytes_fwd = tokens * v_local * (2 + 4 + 4 + 4);
    w.loss_bytes_bwd = tokens * v_local * (4 + 2);
    w.logits_memory_bytes = tokens * v_local * (2 + 4);
    const bool sp = p.sequence_parallel && p.tp > 1;
    w.embed_bytes_fwd = tokens * h * 2 / (sp ? t : 1.0);
    w.embed_bytes_bwd = tokens * h * 4;  // fp32 scatter-add into the gradient
    if (p.tp > 1) w.tp_bytes = tokens * h * 2;
    w.embedding_params = static_cast<double>(m.vocab) * h / t;
    return w;
}

}  // namespace lostflops
