// Per-layer operator list of a decoder layer of one kind under TP/SP/CP/EP
// (Megatron-LM layout, Shoeybi et al. 2019; Korthikanti et al. 2022 for
// sequence parallel; Megatron-Core's MLASelfAttention, MambaMixer and
// GatedDeltaNet for the other mixers: down projections of MLA duplicated on
// every TP rank, up and output projections split over heads; the linear
// mixers' projections split over heads).
//
// A layer is one or two residual blocks (mixer, MLP), each with its norm, its
// input and its residual add. What is the mixer's own (its GEMMs, its
// memory-bound kernels, the tensors it saves, its context-parallel traffic,
// its weights on a GPU) its kind's file says (job/mixers/, through the row of
// job/layer_kinds.h); the terms below per mixer are theirs.
//
// Activation memory per layer per micro-batch, 16-bit (fp32 training: 4-byte tensors) (Korthikanti et al. 2022,
// sec. 4, table 2), generalised to FFN width f, grouped-query attention, gated
// MLPs, other head dims and mixers by counting each stored tensor:
//   each block: norm input 2sbh, block input 2sbh, GPT-style dropout mask sbh
//   attention: Q 2sb(a*d), K and V 2sb(kv*d) each, output-projection input
//              2sb(a*dv), output gate 2sb(a*d);
//              unfused softmax: scores out 2as^2b, dropout mask as^2b, out 2as^2b
//   MLA: the q and kv latents and their norm inputs 2sb(2 rq + 2 rkv + dr)
//        (duplicated over TP), Q and K 2sb(a*dq) each, V and output 2sb(a*dv) each
//   Mamba-2 / Gated DeltaNet / lightning: the input projection's outputs, the
//        convolution's (or activation's) outputs, the core output and the norm
//        output 2 bytes each, and the fp32 state at every chunk boundary
//   MLP (dense): up output and activation output 2*2sbf; (gated): gate and up
//        2*2sbf, product 2sbf; MoE: top-k experts' and the shared width; the
//        permuted token copies 2sbhk (fp8: sbhk), and their expert outputs
//        2sbhk where unpermute applies the routing probabilities (not
//        Megatron-Core: below)
// For f = 4h, a = kv, GeLU this gives sbh(34 + 5as/h). Without sequence
// parallelism the norm and block inputs, dropout masks and MoE token copies
// are replicated across TP ranks; everything else is divided by t. With
// sequence parallelism everything is divided by t. Flash attention and
// selective recompute drop the as^2 terms. Dropout masks are kept for
// two-matrix (GPT-style) MLPs only; gated and squared-ReLU models train
// without dropout.
#include "workload/layer_work.h"
#include "workload/layer_work_parts.h"

#include <algorithm>

#include "lostflops/fp8_recipe.h"
#include "lostflops/hf_attention.h"
#include "workload/eager_ledger.h"
#include "workload/flops.h"
#include "workload/host_ops.h"
#include "workload/op_checkpoint.h"

namespace lostflops {

namespace {

constexpr unsigned kCoreAttnOnly = 1u << static_cast<int>(RecomputeModule::core_attn);

}  // namespace

LayerWork layer_work(const Model& m, const Training& tr, const ParallelPlan& p) {
    return layer_work(m, m.kind(0), tr, p);
}

LayerWork layer_work(const Model& m, const LayerKind& k, const Training& tr, const ParallelPlan& p) {
    LayerWork w;
    const double t = p.tp, c = p.cp;
    const double b = static_cast<double>(tr.micro_batch);
    const double s = static_cast<double>(tr.seq_length);
    const double h = static_cast<double>(m.hidden);
    const Attention& at = k.attention;
    const LayerTraits traits = layer_traits(k, p);
    const auto [row, attention, moe, has_mlp, gated, mlp_of, a, d, kv_local] = traits;
    const bool softmax = row->softmax;
    const Mlp& mlp = *mlp_of;
    const double dv = static_cast<double>(at.v_head_dim);
    const double tokens = b * s / c;  // per GPU per micro-batch
    const bool sp = p.sequence_parallel && p.tp > 1;
    const double sp_div = sp ? t : 1.0;
    const double el = tensor_bytes(tr.precision);  // bytes of an activation (16-bit; fp32 training 4)
    const double wide = el / 2.0;                  // the saved tensors' width against 16-bit
    const double blocks = (k.mixer != MixerKind::none ? 1.0 : 0.0) + (has_mlp ? 1.0 : 0.0);
    // The mixer on this GPU, as its kind's file says (job/mixers/).
    MixerOnRank mix;
    row->fns->on_rank(k, MixerRank{.t = t, .c = c, .tokens = tokens, .h = h, .el = el}, mix);

    const double heads_local = a / t;
    for (int i = 0; i < mix.gemm_count; ++i) {  // the mixer's projections: n and k of its kind's file
        const auto [n, kk] = mix.gemms[static_cast<size_t>(i)];
        w.gemms[w.gemm_count++] = GemmShape{tokens, n, kk, 1};
    }
    const int mixer_gemms = w.gemm_count;  // the first one reads the norm's output
    if (k.has_attention()) w.lead_gemms = std::max(0, mixer_gemms - 1);  // all but the output projection
    // The dense MLP's or the experts' GEMMs (layer_gemms.cpp).
    const MlpGemms mg = add_mlp_gemms(k, traits, tr, p, tokens, h, sp_div, w);
    const int fc1_gemm = mg.fc1, router_gemm = mg.router;
    const double ffn_width = mg.ffn_width;  // MLP width a token passes through (experts: top-k and shared)

    // Mixer core, forward FLOPs executed on this GPU.
    // transformers' attention with its scores in memory (hf_attention.h hf_attention_keeps_scores)
    // is unfused under framework hf, compiled or not (Inductor fuses the
    // chain between the two GEMMs but keeps the scores).
    const bool hf_scores = softmax && hf_attention_keeps_scores(m, tr);
    w.unfused = softmax && (tr.attention == AttentionKernel::unfused || hf_scores);
    w.selective_core = softmax;
    if (softmax) {
        if (at.window == 0 && at.chunk == 0 && d == dv) {
            // Queries of this rank (s/c) against all s keys.
            const double core = 4.0 * b * heads_local * (s / c) * s * d;
            // Flash kernels under is_causal skip the masked blocks; unfused
            // softmax and transformers' compiled-mode boolean mask (hf_attention.h
            // masked_square_attention) compute the whole square.
            const bool square = w.unfused || masked_square_attention(m, tr);
            w.attention_flops_fwd = square ? core : core * 0.5;
        } else {
            // A window or a chunk no longer than the sequence is an explicit
            // mask on transformers' SDPA path (hf_attention.h hf_sdpa_masks_window),
            // and every mask is under torch.compile: the whole square either way.
            const bool eager_mask = hf_sdpa_masks_window(m, k, tr);
            const bool square = w.unfused || masked_square_attention(m, tr) || eager_mask;
            const double keys = attention_keys(tr.seq_length, at.window, at.chunk, !w.unfused);
            w.attention_flops_fwd = 2.0 * b * heads_local * (s / c) * (d + dv) * (square ? s : keys);
            if (eager_mask) w.attention_masked_flops_fwd = w.attention_flops_fwd;
        }
        if (w.unfused) {
            w.scores = GemmShape{b * heads_local * (s / c), s, d, 1};
            w.values = GemmShape{b * heads_local * (s / c), dv, s, 1};
        }
    } else if (mix.core_kernels > 0) {
        // The scan in its published FLOP form (its kind's core_flops), split over TP by heads.
        w.attention_flops_fwd = tokens * row->fns->core_flops(k, tr.seq_length, true) / t;
    }

    // Memory-bound kernels, forward bytes (read + write), per GPU.
    const double act = tokens * h * el / sp_div;  // one hidden-size activation
    const double ffn_local = ffn_width / t;
    const double ffn_act = tokens * ffn_local * el;
    // XLA (a TPU, Training::xla) compiles the step whole and fuses each
    // elementwise chain into the matmul beside it: an op consuming a dot's
    // result runs in the dot's output fusion (HLO fusion kind kOutput), one
    // feeding a dot's operand in the dot's producer fusion, on the MXU's
    // result path (the TPU backend's fusion catalogue lists conv + bias +
    // activation and the layer-norm / RMSNorm tails; XLA's
    // xla/hlo/ir/hlo_instruction.h FusionKind; Austin et al., "How to Scale
    // Your Model" (2025), part 2: elementwise work is fused into matmuls).
    // What still crosses HBM: a norm's reduction reads its input once (the
    // scaling is fused into the next dot's operand) and a residual add,
    // fused into the out-projection / down-projection, reads the residual
    // stream and writes the sum. The activation function (read by the
    // down-projection's operand fusion) and the rotary embedding (in the
    // QKV dot's output fusion) cost no HBM pass of their own.
    const bool xla = tr.xla;
    double fwd = k.norms * ((xla ? 1.0 : 2.0) * act);  // norms: read, write (XLA: read)
    fwd += blocks * ((xla ? 2.0 : 3.0) * act);         // residual adds (+ bias, dropout fused)
    double kernels = k.norms + blocks;
    if (has_mlp && !xla) {
        fwd += (gated ? 3.0 : 2.0) * ffn_act;  // activation function (SwiGLU reads 2, writes 1)
        kernels += 1;
    }
    // Squared ReLU runs eager as torch.pow(relu(x), 2) (NeMo 1.x
    // nlp/modules/common/megatron/utils.py and NeMo 2.x llm/fn/activation.py,
    // "@torch.jit.script ... remove until we have serialization"; Hugging
    // Face ReLUSquaredActivation likewise): forward relu and pow, each read
    // and written (2 + 2 B a kernel, 2 more than one fused kernel); backward
    // autograd's PowBackward0 = grad * (2 * x.pow(1)) (pow copy 2 + 2, scalar
    // multiply 2 + 2, multiply 4 + 2) and ReluBackward0 = threshold_backward
    // (4 + 2): 20 B in 4 kernels against twice the fused forward (8 B, 2).
    // torch.compile (training.compile) fuses it like any elementwise chain.
    const bool relu2_unfused = has_mlp && !gated && mlp.act == Activation::relu2 && !tr.compile && !xla;
    if (relu2_unfused) {
        fwd += 2 * ffn_act;  // 4 B of relu + 4 of pow per element
        kernels += 1;        // and so backward twice that: 16 B, 4 kernels
    }
    const double rope_elems = mix.rope_elems * m.rotary_in(k);  // the rotated share
    if (rope_elems > 0 && !xla) {  // rotary embedding on Q and K
        fwd += 2 * tokens * rope_elems * el;
        kernels += 1;
    }
    if (mix.mem_kernels > 0) {  // the mixer's own (a linear mixer's convolution, scan inputs and output, norm)
        fwd += tokens * el * mix.mem_elems;
        kernels += mix.mem_kernels;
    }
    // Eager PyTorch stacks (FSDP, DeepSpeed on a Hugging Face / torchtitan
    // Llama) run the RMSNorm, rotary and SwiGLU as separate kernels through
    // fp32 (torchtitan models/llama/model.py, HF LlamaRMSNorm): RMSNorm =
    // float (r2 w4), pow (r4 w4), mean (r4), multiply (r4 w4), cast (r4 w2),
    // weight (r2 w2) = 36 bytes per element against 4 fused; rotary = float,
    // complex multiply, cast = ~20 bytes per Q/K element against 4; SwiGLU =
    // silu (r2 w2) + multiply (r4 w2) = 10 bytes per FFN element against 6.
    // LayerNorm and GeLU are PyTorch's fused kernels: no extra. Each applies
    // where the layer has it: RMSNorm, rotary (its rotated share), SwiGLU.
    // torch.compile of each block (training.compile; torchtitan
    // parallelize_llama.py apply_compile) lets Inductor fuse each chain of
    // pointwise ops and reductions into one kernel that reads its inputs and
    // writes its output once (Ansel et al. 2024, "PyTorch 2", sec. 4-5):
    // priced as the fused counts above, with their kernel counts.
    const bool eager = (tr.framework == Framework::fsdp || tr.framework == Framework::deepspeed ||
                        tr.framework == Framework::hf) && !tr.compile && !xla;
    if (eager && m.norm == NormKind::rms) {
        fwd += k.norms * (36.0 - 4.0) / el * act;
        kernels += k.norms * 5;
    }
    if (eager && rope_elems > 0) {
        fwd += (20.0 - 4.0) * tokens * rope_elems;
        kernels += 2 * 2;
    }
    if (eager && gated) {
        fwd += (10.0 - 6.0) / el * ffn_act;
        kernels += 1;
    }
    double attn_mem = 0;
    double held_moe_bytes = 0;  // router and permutation bytes (moe recompute redoes them)
    const double score_elems = b * heads_local * (s / c) * s;
    if (w.unfused) {
        attn_mem = score_elems * (2 + 2 + 2 + 2 + 1);  // scale-mask-softmax, dropout + mask
        kernels += 2;
    }
    if (hf_scores && !tr.compile) {
        // transformers' eager attention between its two matmuls, bytes per
        // score element against the fused kernel's 9 above (Model::hf_eager_chain).
        // BloomAttention.forward (modeling_bloom.py) between baddbmm and bmm:
        // the scores written in bf16 and read back by .float() (2 + 2, writes
        // 4), * layer_number (4 + 4), masked_fill (4 + 4), softmax in fp32
        // (4 + 4), .to(bf16) (4 + 2), the probabilities read by bmm (2): 40,
        // five kernels against two; attention_dropout is BloomConfig's 0.0.
        // eager_attention_forward (Llama and the attention-interface
        // families) and GPT-J's GPTJAttention._attn (modeling_gptj.py; its
        // fp32 q and k go back to bf16 in the matmul's autocast): the matmul
        // writes bf16 scores (2), scaled (2 + 2), plus the fp32 causal mask
        // (2 + 4, writes 4), softmax in fp32 (4 + 4), .to(bf16) (4 + 2), read
        // by the second matmul (2): 32, four kernels; dropout of p 0 launches
        // none (ATen Dropout.cpp _dropout_impl returns its input). gpt-oss
        // adds its sinks (cat, max, subtract): 52, seven (model_families.h).
        // In a bf16 model (FSDP2) the chain's own bf16 figures.
        const bool bf16_model = eager_fsdp2_bf16(tr, p);
        attn_mem = score_elems * (bf16_model ? m.hf_eager_chain.bf16_bytes : m.hf_eager_chain.bytes);
        kernels += bf16_model ? m.hf_eager_chain.bf16_kernels : m.hf_eager_chain.kernels;
    }
    if (moe) {
        // Router scores (fp32 logits written, read by the softmax or sigmoid
        // and the top-k, probabilities written: 3 x 4 bytes per token and
        // expert; Megatron-Core router.py), and the permutation of the token
        // copies before dispatch and after combine, each read and written
        // (moe_utils.py permute/unpermute), on the tokens this rank holds;
        // with etp > 1 the gathered copies are sorted by local expert again.
        const double held = tokens / sp_div;
        const double copies = held * k.moe.top_k * (p.expert_tp() > 1 ? 2.0 : 1.0);
        fwd += held * k.moe.experts * 4.0 * 3.0;
        fwd += 2 * 2 * copies * h * el;
        held_moe_bytes = held * k.moe.experts * 4.0 * 3.0 + 2 * 2 * copies * h * el;
        kernels += 3 + 4;
    }
    w.mem_bytes_attention_fwd = attn_mem;
    w.mem_bytes_fwd = fwd + attn_mem;
    w.mem_bytes_bwd = 2 * w.mem_bytes_fwd;
    if (relu2_unfused) w.mem_bytes_bwd += 2 * ffn_act;  // 20 B per element, not 16 (above)
    const double core_kernels = mix.core_kernels;
    w.kernels_fwd = kernels + w.gemm_count + (w.unfused ? 2 : core_kernels);
    w.kernels_bwd = 2 * kernels + 2 * w.gemm_count + (w.unfused ? 4 : 2 * core_kernels);
    if (tr.precision == Precision::fp8)
        add_fp8_casts(w, mixer_gemms > 0 ? 0 : -1, fc1_gemm, router_gemm, tr, sp_div);

    // Tensor parallel traffic: each block's collectives move one full
    // activation. With sequence parallelism an MoE block gathers over TP only
    // for its shared experts (the routed tokens travel by the dispatcher,
    // cost/expert_dispatch.h); without it the block all-reduces its output.
    if (p.tp > 1) {
        w.tp_bytes = tokens * h * el;
        w.tp_sequence_parallel = sp;
        const double tp_blocks = blocks - (moe && sp && k.moe.shared_ffn == 0 ? 1.0 : 0.0);
        w.tp_collectives_fwd = static_cast<int>(tp_blocks) * (sp ? 2 : 1);  // SP: an all-gather + a reduce-scatter each
    }
    if (p.cp > 1 && softmax) {
        w.cp_bytes_fwd = mix.cp_ring_bytes;
        w.cp_qkv_bytes = mix.cp_qkv_bytes;
        w.cp_out_bytes = mix.cp_out_bytes;
    }
    if (moe) {
        w.moe_tokens = tokens / sp_div;
        w.moe_top_k = k.moe.top_k;
        w.moe_token_bytes = h * el;
        w.moe_etp_gather = p.expert_tp() > 1 && sp;
        if (p.ep > 1 || w.moe_etp_gather) w.moe_dispatches_fwd = 2;  // dispatch and combine
    }

    // Activation memory (Korthikanti et al. 2022), bytes, per GPU.
    const double sbh = tokens * h;  // elements
    const bool dropout = has_mlp && !gated && mlp.act != Activation::relu2 && m.dropout_on();
    const double masks = dropout ? blocks * sbh : 0;  // block output masks (1 byte)
    const double inputs = 2 * sbh * blocks;           // norm inputs; block inputs
    double replicated = inputs + inputs + masks;
    // The mixer's saved tensors (its kind's file): replicated, split over t, per rank already.
    replicated += mix.saved_replicated;
    double split = mix.saved_split;
    double kv_stored = mix.saved_on_rank_bytes;
    const double ffn_elems = tokens * ffn_width;
    if (has_mlp) split += gated ? 6 * ffn_elems : 4 * ffn_elems;
    // fp8 training keeps the inputs of its fp8 GEMMs for the weight gradient
    // as the fp8 (transposed) copy the forward cast made, 1 byte, not the bf16
    // tensor (Transformer Engine's Linear / LayerNormLinear save inputmat_t /
    // ln_out in fp8; torchao's Float8Linear saves its tensorwise casts, not
    // its axiswise ones, lostflops/fp8_recipe.h fp8_saves_fp8_inputs): the
    // block inputs (QKV and fc1 inputs), the output projection's input and
    // fc2's input each lose a byte per element.
    // fp32 training: every 16-bit tensor above is saved in fp32 (the dropout
    // masks stay 1 byte; the linear mixers' chunk states are fp32 already).
    if (wide != 1.0) {
        replicated = (replicated - masks) * wide + masks;
        split *= wide;
        if (!mix.state_fp32) kv_stored *= wide;
    }
    if (fp8_saves_fp8_inputs(tr)) {
        replicated -= sbh * blocks;
        if (mix.fp8_split_less > 0) split -= mix.fp8_split_less;
        if (has_mlp) split -= ffn_elems;
    }
    // Permuted token copies are hidden-sized: replicated across TP without SP.
    // The experts' fc1 input (kept for its weight gradient) per routed copy;
    // fp8 keeps it as the fp8 copy its grouped GEMM cast, as the rule above
    // for every fp8 GEMM input (Transformer Engine GroupedLinear saves its
    // quantized inputs): 1 byte instead of 2. Where the routing
    // probabilities scale the experts' output at unpermute, that output is
    // kept too, for the probabilities' gradient (Megatron-LM's legacy MoE,
    // DeepSpeed, torchtitan); Megatron-Core applies them inside the experts'
    // activation instead (megatron/core/transformer/moe/experts.py
    // activation_func_with_probs: act(fc1) * probs before fc2, the
    // activation saving its own input), so unpermute keeps nothing.
    // torchao's grouped GEMM keeps its 16-bit input (moe_training
    // fp8_grouped_mm.py: ctx.save_for_backward(A, B_t, offs)).
    const double fc1_copy_bytes =
        fp8_saves_fp8_inputs(tr) && !fp8_casts_by_torchao(tr.framework) ? 1.0 : el;
    const bool probs_in_activation = tr.framework == Framework::megatron_core;
    const double permuted = moe ? ((probs_in_activation ? 0.0 : el) + fc1_copy_bytes) * tokens * k.moe.top_k * h : 0;
    const double scores = w.unfused ? b * a * (s / c) * s * (el + (dropout ? 1 + el : 0)) : 0;  // softmax out, mask, dropout out
    const double full = (replicated + permuted) / sp_div + split / t + kv_stored + (w.unfused ? scores / t : 0);
    w.activation_bytes_full = full;
    w.checkpoint_bytes = el * sbh / sp_div;
    switch (p.recompute) {
        case Recompute::none: w.activation_bytes = full; break;
        case Recompute::selective: w.activation_bytes = full - (w.unfused ? scores / t : 0); break;
        case Recompute::full: w.activation_bytes = w.checkpoint_bytes; break;
    }
    if (p.recompute == Recompute::selective && p.recompute_modules != kCoreAttnOnly) {
        const RecomputeShapes rs{.el = el, .wide = wide, .act = act, .tokens = tokens, .sbh = sbh,
                                 .sp_div = sp_div, .blocks = blocks, .t = t,
                                 .rope_elems = rope_elems, .ffn_elems = ffn_elems, .permuted = permuted,
                                 .held_moe_bytes = held_moe_bytes, .scores = scores, .norm_module = row->norm_module,
                                 .up_proj_module = row->up_proj_module, .up_proj_gemms = mix.up_proj_gemms,
                                 .up_proj_bytes = mix.up_proj_bytes, .moe = moe,
                                 .sp = sp, .gated = gated, .fc1_gemm = fc1_gemm, .router_gemm = router_gemm};
        apply_recompute_modules(k, tr, p, rs, w);
    }
    if (op_checkpointing(tr, p)) {
        const OpCheckpoint oc = op_checkpoint(m, k, p, w, tokens);
        w.op_checkpoint = true;
        w.activation_bytes = oc.stored_bytes;
        w.op_recompute_gemm_share = oc.recompute_gemm_share;
    }

    layer_params(m, k, p, traits, mix.params, w);
    // Rotary as above (Model::rotary_in: none with learned positions); dropout as
    // the memory count has it.
    const EagerShapes es{.tokens = tokens, .h = h, .rope_elems = rope_elems,
                         .blocks = blocks, .ffn_local = ffn_local, .rms_norm = m.norm == NormKind::rms,
                         .gated = gated, .dropout = dropout};
    if (eager_autocast(tr, p) && !xla) {
        if (tr.compile)
            add_compiled_autocast_traffic(k, tokens, h, blocks, w);
        else
            add_autocast_traffic(k, es, w);
    }
    if (tr.framework == Framework::hf && tr.compile && !xla && attention && !w.unfused) {
        // The kernels a compiled attention layer launches, as counted on the
        // compiled traces (host_ops_hf.cpp): one GEMM a linear module, each
        // fp32 weight's cast under autocast, two kernels a fused chain
        // forward, three backward, cuDNN's attention backward three. (Other
        // mixers keep the counts above: no compiled trace of them.)
        const HostOps c = hf_compiled_host_ops(m, k, eager_autocast(tr, p));
        w.kernels_fwd = c.layer_fwd;
        w.kernels_bwd = c.layer_bwd;
    }
    if (eager_fsdp2_bf16(tr, p) && !xla) add_fsdp2_bf16_traffic(k, es, w);
    if (fsdp2_one_rank(tr, p)) add_fsdp2_traffic(hf_layer_param_tensors(m, k), w);
    if (eager) add_eager_bias_grads(k, tokens, h, t, el, eager_autocast(tr, p), w);
    if (tr.framework == Framework::hf && !tr.compile && !xla) {
        add_hf_eager_kernels(k, es.rope_elems, w);
        if (rope_elems > 0 && rope_elems < mix.rope_elems)
            add_hf_partial_rotary(tokens, mix.rope_elems, rope_elems / mix.rope_elems, eager_autocast(tr, p), el, w);
        if (hf_layer_caches_kv(k, tr, p))
            add_hf_kv_cache(tokens, kv_local * d, kv_local * dv, eager_autocast(tr, p) && rope_elems > 0, el, w);
    }
    const StackShapes ss{.tokens = tokens, .h = h, .el = el, .sp_div = sp_div, .t = t, .a = a, .d = d, .dv = dv,
                         .kv_local = kv_local, .ffn_width = ffn_width, .attention = attention, .has_mlp = has_mlp,
                         .gated = gated};
    apply_stack_memory(m, k, tr, p, ss, w);
    return w;
}

}  // namespace lostflops
