// Host operators of a Hugging Face transformers model in eager PyTorch
// (training.framework hf), counted the way the profiler records them:
// top-level operators the forward issues from Python, top-level autograd
// nodes the backward's engine evaluates.
//
// Read off one LlamaDecoderLayer of transformers 5.17 under bf16 autocast
// (modeling_llama.py) and checked operator by operator on the host side of
// shared/traces/h200/h200-qwen05-like-s2048-b1-autocast.json.gz
// (scripts/eager_host_costs.py: 52 forward operators, 90 backward nodes per
// layer). The forward of one layer, in order:
//   RMSNorm (LlamaRMSNorm.forward: to, pow, mean, add, rsqrt, mul, to, mul) 8
//   q, k, v projections: linear, view, transpose each 9
//   rotary (apply_rotary_pos_emb): unsqueeze cos and sin 2, then for q and k
//     mul, rotate_half (slice, slice, neg, cat), mul, add 7 + 7
//   SDPA 1, transpose, reshape, o_proj 3, residual add 1
//   RMSNorm 8, SwiGLU MLP (linear, silu, linear, mul, linear) 5, residual add 1
// = 52. The backward's 90 nodes per layer are the forward's differentiable
// operators, the autocast casts of every linear's weight and input
// (ToCopyBackward0, 14), the linears' TBackward0 / UnsafeViewBackward0 and an
// AccumulateGrad per parameter tensor (9): 90 / 52 nodes per forward
// operator, the ratio used for other layers of the family.
// Under FSDP2 (fully_shard per layer, MixedPrecisionPolicy bf16) the same
// layer is 71 operators forward (the pre- and post-forward hooks: unshard,
// copy-out, views of the flat buffer, reshard) and 81 nodes backward (no
// autocast casts; the post-backward hook's reduce), from
// shared/traces/h200/h200-llama3.2-1b-s4096-b2-fsdp2.json.gz (same script).
// Outside the layers: before the first layer 30 operators (embedding lookup,
// position ids, the causal-mask checks, rotary cos and sin), after the last
// 19 (final norm, lm_head, the fp32 upcast, shift and cross-entropy of
// ForCausalLMLoss); backward 19 nodes for those and 2 for the embedding.
// The synchronisations of a micro-batch (HostOps::forward_syncs,
// expert_loop_calls_*) are where they happen in transformers' and PyTorch's
// code, named at each below.
#include "workload/host_ops.h"

#include "lostflops/hf_attention.h"
#include "workload/eager_ledger.h"
#include "workload/layer_work_parts.h"

namespace lostflops {

namespace {

constexpr double kRmsNormOps = 8;     // LlamaRMSNorm.forward
constexpr double kLayerNormOps = 1;   // nn.LayerNorm: one aten::layer_norm
constexpr double kBwdNodesPerOp = 90.0 / 52.0;
// FSDP::pre_forward of one layer on one rank: an aten::to (the bf16 cast)
// and an aten::copy_ (into the unsharded parameter) per parameter tensor,
// and one RegisterPostBackwardFunction: 9 + 9 + 1 = 19 = 71 - 52 for a
// Llama layer's 9 tensors (FSDP::pre_forward (model.layers.3) on the 1B
// FSDP2 trace).
constexpr double kFsdp2FwdOpsPerTensor = 2, kFsdp2FwdOps = 1;
constexpr double kFsdp2BwdNodes = 81 - 90;  // per layer, backward (no autocast casts)
// A KV cache in the training forward (spec.h Training::use_cache): transformers
// 5.17's DynamicLayer.lazy_initialization makes the empty keys and values,
// torch.tensor([], dtype=..., device=...) each (aten::empty, to, lift_fresh,
// detach_: 8), and DynamicLayer.update torch.cat's the layer's own into
// them (2): 10 operators a layer forward; backward two CatBackward0 and,
// under autocast with rotary (the fp32 values SDPA's autocast casts), a
// ToCopyBackward0 more. data/measured/h200-steps/trace-1b-s512-b2-autocast.json.gz
// (`python3 scripts/eager_host_costs.py ... --layers 16`): 62 operators and
// 93 nodes a layer, against 52 and 90 without the cache.
constexpr double kKvCacheFwdOps = 10;
constexpr double kKvCacheBwdNodes = 3;
// Before the first layer with a cache, the packed-sequence check's 9
// operators (slice, sub, diff, ne, cumsum, select, eq, all, is_nonzero; and
// position_ids.expand at a micro-batch above 1) do not run: 19 operators
// there on the 1B traces of data/measured/h200-steps (micro-batch 2),
// against 31 on the shared 1B trace and 30 on the Qwen2.5-0.5B one
// (micro-batch 1), whose two leading selects are their training loop's.
constexpr double kPackedCheckOps = 9;

double norm_ops(NormKind n) { return n == NormKind::rms ? kRmsNormOps : kLayerNormOps; }

// Forward operators of a dense MLP or one expert's MLP.
double mlp_ops(const Mlp& m) {
    if (m.kind == MlpKind::none) return 0;
    // gated: gate linear, act, up linear, mul, down linear (a fused gate_up:
    // one linear and a chunk, as many); dense: linear, act, linear.
    double ops = m.kind == MlpKind::gated ? 5 : 3;
    // A composite activation (transformers' NewGELUActivation:
    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3))))) is
    // eight operators, not one.
    if (m.act_composite) ops += 7;
    return ops;
}

}  // namespace

// torch.compile (training.compile): Inductor's wrapper launches each fused
// kernel and each extern kernel (cuBLAS GEMMs, SDPA) itself; the host's
// work per layer is those launches (the compiled_launch_us cost each).
// Counted on the compiled traces of data/measured/h200-steps (kernels a
// step by the host region that launched them: the compiled forward, or
// CompiledFunctionBackward), per Llama layer of the Qwen2.5-0.5B and
// Llama-3.2-1B shapes:
//   forward: the GEMMs (7.1), the attention kernel (1), and 15.3 / 15.4
//   Triton kernels: under autocast one cast of each GEMM's fp32 weight to
//   bf16 (cuBLAS takes a bf16 operand; 7), and two kernels per pointwise
//   chain between GEMMs (each norm with the residual add before it, the
//   rotary embedding, the activation: 4 chains, 8 kernels: a reduction and
//   its pointwise tail);
//   backward: two GEMMs per GEMM (14.1), cuDNN's attention backward and
//   its two preprocessing kernels (3), the weights' gradient casts back to
//   fp32 (7) and three kernels per chain (18.2 / 16.2 Triton and 2.0 / 4.1
//   ATen kernels: 13.3 with the casts out, against 12).
// cuBLAS's own memsets (1 to 11 a layer, by shape) are not counted.
HostOps hf_compiled_host_ops(const Model& m, const LayerKind& k, bool autocast) {
    const double gemms = hf_linears(k);  // one a linear module
    double chains = k.norms;
    if (k.has_attention() && m.rotary_in(k) > 0) chains += 1;  // rotary, where the model rotates
    if (k.mlp.kind != MlpKind::none) chains += 1;
    if (k.is_moe()) chains += 4;  // softmax / top-k, sort, scatter, activation
    const double attention = k.has_attention() ? 1 : 0;
    const double casts = autocast ? gemms : 0.0;  // one weight per GEMM
    HostOps h;
    h.layer_fwd = gemms + attention + 2 * chains + casts;
    h.layer_bwd = 2 * gemms + 3 * attention + 3 * chains + casts;
    h.head_fwd = 3 + (autocast ? 1 : 0);  // final norm, lm_head (and its weight's cast), the fused loss
    h.head_bwd = 4 + (autocast ? 1 : 0);
    h.embed_fwd = 2;
    h.embed_bwd = 2;
    return h;
}

HostOps hf_host_ops(const Model& model, const LayerKind& k, const Training& t, const ParallelPlan& p) {
    if (t.compile) return hf_compiled_host_ops(model, k, eager_autocast(t, p));
    HostOps h;
    double fwd = k.norms * norm_ops(model.norm) + 2;  // and the two residual adds
    double lead = 0;  // HostOps::lead_fwd: the input norm, then the projections and rotary below
    if (k.has_attention()) {
        const Attention& a = k.attention;
        fwd += a.fused_qkv ? 1 + 1 + 6 : 9;  // one linear and a split, or three; view + transpose each
        if (a.qk_norm) fwd += 2 * kRmsNormOps;
        // Rotary on q and k; a partial one (0 < share < 1) also slices each
        // in two and concatenates them back (eager_traffic.cpp add_hf_partial_rotary).
        const double rotary = model.rotary_in(k);
        if (rotary > 0) fwd += 16;
        if (rotary > 0 && rotary < 1) fwd += 6;
        lead = fwd - 2 - (k.norms - (k.norms > 0 ? 1 : 0)) * norm_ops(model.norm);
        fwd += 4;                             // SDPA, transpose, reshape, o_proj
        // BloomAttention.forward (hf_attention.h hf_attention_keeps_scores): alibi.to, the
        // fused linear, reshape, split, transpose/permute and reshape of q,
        // k and v (6), baddbmm, view, float, mul, masked_fill, softmax, to,
        // dropout, view, bmm, view, permute, reshape, dense: 24 against the
        // 12 above. GPT-J's _attn and _merge_heads (to, to, matmul,
        // transpose, div, slice, add, softmax, to, dropout, matmul, permute,
        // contiguous, view: 14, where the count above has SDPA, transpose and
        // reshape: 3) are counted the same, as is an eager attention a config
        // asks for (attn_implementation).
        if (hf_attention_keeps_scores(model, t)) fwd += 12;
        // gpt-oss's sinks (modeling_gpt_oss.py eager_attention_forward):
        // sinks.reshape, expand, cat, max, the subtraction and the slice
        // that drops the sink column.
        if (a.sinks && hf_attention_keeps_scores(model, t)) fwd += 6;
        if (a.output_gate) fwd += 3;          // gate projection, sigmoid, mul
    }
    fwd += mlp_ops(k.mlp);
    if (k.is_moe()) {
        // transformers 5.17's sparse MoE block (modeling_qwen3_moe.py with
        // the grouped_mm experts): router linear, softmax, topk, renormalise,
        // sort the tokens by expert, histc / cumsum offsets, two
        // torch._grouped_mm with the activation between, scatter back: 40
        // top-level operators on the Qwen3-MoE trace
        // (h200-qwen3-moe-4l-s4096-b1-autocast). The per-expert loop inside
        // _grouped_mm's fallback is not host operators of this count.
        fwd += 40;
        if (k.moe.shared_ffn > 0) fwd += 5 + (k.moe.shared_gate ? 3 : 0);
    }
    h.layer_fwd = fwd;
    h.layer_bwd = fwd * kBwdNodesPerOp;
    // Each bias tensor has its AccumulateGrad node, and under autocast its
    // cast a ToCopyBackward0 node: the Llama layer the ratio was read on has
    // no biases and they add no forward operator (bias_grads.cpp).
    const double biases = eager_biases(k, p.tp).linears;
    h.layer_bwd += biases * (eager_autocast(t, p) ? 2 : 1);
    h.lead_fwd = lead;
    if (hf_layer_caches_kv(k, t, p)) {
        h.layer_fwd += kKvCacheFwdOps;
        h.lead_fwd += kKvCacheFwdOps;  // DynamicLayer.update runs before SDPA
        h.layer_bwd += kKvCacheBwdNodes - (eager_autocast(t, p) && model.rotary_in(k) > 0 ? 0 : 1);
    }
    if (k.is_moe() && eager_autocast(t, p)) {
        // _grouped_mm's fp32 fallback (layer_work.h GemmShape::fp32_loop;
        // PyTorch aten/src/ATen/native/GroupedMMUtils.h _grouped_mm_fallback)
        // copies its offsets to the host (offs.cpu(): a synchronisation),
        // then issues one torch.mm per local expert from its C++ loop: two
        // calls forward (gate_up, down), each one's input and weight
        // gradients backward (GroupedMmBackward0: two calls each); the
        // trace: 3,072 mm and 24 copies for 4 layers of 128 experts.
        h.expert_loop_calls_fwd = 2;
        h.expert_loop_calls_bwd = 4;
        h.expert_loop_groups = static_cast<double>(k.moe.experts) / p.ep;
    }
    if (p.zero >= 3) {
        const double hooks = kFsdp2FwdOpsPerTensor * hf_layer_param_tensors(model, k) + kFsdp2FwdOps;
        h.layer_fwd += hooks;
        h.layer_bwd += kFsdp2BwdNodes;
        h.fsdp_fwd_ops = hooks;
        if (h.lead_fwd > 0) h.lead_fwd += hooks;  // FSDP::pre_forward runs before the layer's own
    }
    // torch.utils.checkpoint (gradient_checkpointing_enable, non-reentrant):
    // the forward runs again inside the backward; its own bookkeeping
    // (saved-tensor hooks, RNG state) is a few operators.
    h.checkpoint_py = 4;
    h.head_fwd = 19;
    h.head_bwd = 19;
    h.embed_fwd = 30;
    h.embed_bwd = 2;
    // transformers' masking_utils.py find_packed_sequence_indices (called by
    // create_causal_mask when the forward gets position ids and no mask, as
    // a training loop over packed or equal-length sequences calls it): `if
    // (packed_sequence_mask[:, -1] == 0).all()` reads a GPU tensor in Python,
    // one copy to the host per forward call, after the embedding's lookup
    // and the position ids (aten::is_nonzero on every H200 trace). Skipped
    // under torch.compile (its is_tracing guard), and with a cache
    // (masking_utils.py _preprocess_mask_arguments runs it only when
    // past_key_values is None).
    // The cache is made by the model's forward even under gradient
    // checkpointing (which only keeps it from the layers), so the check is
    // skipped there too.
    h.forward_syncs = 1;
    // After the check's copy on the shared 1B autocast trace (step 1, 15
    // top-level operators between aten::is_nonzero and the first layer's
    // aten::pow): the rotary module's unsqueeze x 3, expand, to x 4, matmul
    // (autocast off), transpose, cat, cos, mul, sin, mul. The order of a
    // model without rotary is not read: all of its embedding's operators
    // count as after the check.
    h.embed_fwd_after_check = model.rotary_in(k) > 0 ? 15 : h.embed_fwd;
    if (t.use_cache) {
        h.forward_syncs = 0;
        h.embed_fwd -= kPackedCheckOps + (t.micro_batch > 1 ? 1 : 0);
    }
    return h;
}

double hf_layer_param_tensors(const Model& model, const LayerKind& k) {
    const double per_norm = model.norm == NormKind::layer_bias ? 2 : model.norm == NormKind::none ? 0 : 1;
    double t = k.norms * per_norm;
    if (k.has_attention()) {
        const Attention& a = k.attention;
        t += (a.fused_qkv ? 1 : 3) * (a.qkv_bias ? 2 : 1) + (a.out_bias ? 2 : 1);
        if (a.qk_norm) t += 2;
    }
    const auto mlp = [](const Mlp& m) {
        if (m.kind == MlpKind::none) return 0.0;
        const double mats = m.kind == MlpKind::gated ? (m.fused_gate_up ? 2 : 3) : 2;
        return mats * (m.bias ? 2 : 1);
    };
    t += mlp(k.mlp);
    // transformers 5 keeps the routed experts as two stacked tensors
    // (gate_up_proj, down_proj) and a router weight.
    if (k.is_moe()) t += 3 + (k.moe.shared_ffn > 0 ? 3 : 0) + (k.moe.shared_gate ? 1 : 0);
    return t;
}

double hf_param_tensors(const Model& model) {
    double n = 3;  // embedding, final norm, lm_head (tied: one fewer, the embedding's)
    if (model.tied_embeddings) n -= 1;
    for (int i = 0; i < static_cast<int>(model.kinds().size()); ++i)
        n += hf_layer_param_tensors(model, model.kinds()[i]) * model.kind_count(i);
    return n;
}

}  // namespace lostflops
