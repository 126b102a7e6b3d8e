// Saved tensors of a Hugging Face decoder layer in eager PyTorch, per token
// (transformers 5.x modeling_llama.py / modeling_qwen3_moe.py /
// modeling_gpt2.py, integrations/sdpa_attention.py, loss/loss_utils.py;
// PyTorch's tools/autograd/derivatives.yaml for what each op saves;
// torch/amp/autocast_mode.py and aten/src/ATen/autocast_mode.cpp for what
// autocast casts). Elements are bf16 (2 B) unless said; h hidden, q = heads
// x head_dim, kv = kv heads x head_dim, o = heads x v head dim, f the MLP
// width, E experts, k experts per token. Autocast runs the ops of its fp32
// list in fp32 (pow, rsqrt, softmax, layer_norm...): a GPT-2 GELU's chain.
//
// Norm, RMSNorm (LlamaRMSNorm: x.to(fp32); x.pow(2).mean(); x * rsqrt(..);
// weight * x.to(input_dtype)):
//   autocast (fp32 stream): x (4h, saved by pow and the rsqrt multiply) and
//     the normalised fp32 x (4h, saved by the weight multiply)       8h
//   bf16: the fp32 upcast (4h) and the normalised bf16 copy (2h)      6h
//   LayerNorm (one kernel; autocast runs it in fp32): its input and two
//     fp32 statistics per token                          4h + 8 or 2h + 8
// A GEMM's input: under autocast each linear casts the fp32 norm output to
//   bf16 itself (its cast cache keeps only leaf tensors: the weights), so
//   q_proj, k_proj and v_proj save three copies (2h each), gate_proj and
//   up_proj two; in bf16 the norm's output is saved once (2h).
// Attention: qk-norm (Qwen3, over head_dim on the bf16 projections) saves
//   its fp32 upcast and bf16 normalised copy, 6(q + kv); SDPA (cuDNN or
//   flash) saves query, key and value as it was given them in bf16
//   (autocast casts the fp32 rotary outputs), its output and the fp32
//   log-sum-exp: 2q + 4kv + 2o + 4 heads; the output projection's input is
//   that output (a view: the kernels write [b, s, heads, d]); a sliding
//   window SDPA is handed as a boolean band adds its additive mask, s
//   elements per token of the query's dtype (below). Attention with
//   its scores in memory (Model::hf_eager_scores: BLOOM, GPT-J, InternLM2, a
//   config's eager) keeps in place of SDPA's tensors its matmuls' operands,
//   key and value repeated to every head under GQA (2q + 2o), no
//   log-sum-exp, and per score element (each query against every key of its
//   head) softmax's fp32 output and the bf16 probabilities: 6 bytes (4 in
//   fp32 training).
// MLP: gated: gate 2f (SiLU's input), SiLU's output 2f, up 2f, product 2f
//   (down_proj's input) = 8f; two-matrix: up 2f, activation 2f = 4f, or 10f
//   for a composite GELU in bf16 (NewGELUActivation saves its input, tanh's
//   output, 0.5x and 1 + tanh, and down_proj its output), 16f under autocast
//   (pow runs in fp32: below). GPT-style models drop out
//   each block's output (resid_pdrop): a bool mask, 1h per block.
// MoE (transformers 5 experts through torch._grouped_mm): router input, the
//   router logits (2E) and fp32 softmax (4E); per routed copy the gathered
//   input, gate and up, SiLU's output, the product and the down output the
//   routing weight multiplies. Under autocast the experts run in fp32
//   (_grouped_mm is not on autocast's cast list; the H200 trace of
//   Qwen3-30B-A3B's layers shows no casts around them): 8h + 16f per copy;
//   bf16: 4h + 8f.
// Checked on the shared H200 allocator traces: a Llama-3.2-1B layer under
// autocast saves 129,152 bytes per token (26h + 4q + 4kv + 4 heads + 8f;
// the profile's live allocations at the peak, layer by layer).
#include "workload/eager_ledger.h"

#include "lostflops/hf_attention.h"

namespace lostflops {

bool hf_layer_caches_kv(const LayerKind& k, const Training& t, const ParallelPlan& p) {
    return t.framework == Framework::hf && t.use_cache && !t.compile && p.recompute != Recompute::full &&
           k.has_attention();
}

double EagerLayerLedger::total() const {
    double s = 0;
    for (int i = 0; i < count; ++i) s += entries[static_cast<size_t>(i)].bytes_per_token;
    return s;
}

void EagerLayerLedger::add(const char* what, double bytes_per_token) {
    if (bytes_per_token <= 0 || count >= static_cast<int>(entries.size())) return;
    entries[static_cast<size_t>(count++)] = LedgerEntry{what, bytes_per_token};
}

bool eager_autocast(const Training& t, const ParallelPlan& p) {
    return t.framework == Framework::hf && p.zero < 3 && t.precision != Precision::fp32;
}

bool fsdp2_one_rank(const Training& t, const ParallelPlan& p) {
    return t.framework == Framework::hf && p.zero >= 3 && static_cast<int64_t>(p.dp) * p.cp == 1 && !t.xla;
}

bool eager_fsdp2_bf16(const Training& t, const ParallelPlan& p) {
    return t.framework == Framework::hf && p.zero >= 3 && t.precision != Precision::fp32 && !t.compile && !t.xla;
}

namespace {

// What a norm saves and what its consumers' GEMM inputs add, per token.
struct NormSave {
    double saved = 0;   // the norm's own saved tensors
    double per_gemm = 0;  // each consuming linear's saved input (autocast: its own cast)
    double once = 0;      // the output saved once by all consumers (bf16)
};

NormSave norm_save(NormKind norm, double h, bool autocast, bool fp32) {
    NormSave n;
    if (fp32) {  // fp32 training: every tensor 4 bytes, no casts
        n.saved = norm == NormKind::rms ? 8 * h : 4 * h + 8;
        n.once = 4 * h;
        return n;
    }
    if (norm == NormKind::rms) n.saved = autocast ? 8 * h : 6 * h;
    else n.saved = (autocast ? 4 : 2) * h + 8;
    if (autocast) n.per_gemm = 2 * h;
    else n.once = 2 * h;
    return n;
}

double gemm_inputs(const NormSave& n, int gemms) { return n.once + n.per_gemm * gemms; }

}  // namespace

namespace {

// transformers' attention with its scores in memory (hf_attention.h
// hf_attention_keeps_scores: BloomAttention, GPTJAttention._attn, eager_attention_forward) computes
// the whole square, each query against all seq_length keys of each head on
// this rank: score elements per token.
double score_elems(const Attention& at, const Training& t, const ParallelPlan& p) {
    return static_cast<double>(at.heads) / p.tp * static_cast<double>(t.seq_length);
}

// torch.compile (training.compile) of a dense decoder layer: AOTAutograd's
// min-cut partitioner (torch/_functorch/partitioners.py
// min_cut_rematerialization_partition) saves the fewest bytes from which the
// backward can be computed, recomputing element-wise ops (norms, casts,
// rotary, activations) but never a matmul or attention: the layer's input
// (the residual), the output projection's output (the residual in the
// middle of the layer is recomputed from the two), the attention's query,
// key, value, output and log-sum-exp, and the MLP's up (and gate) outputs;
// a GPT-style layer's dropout masks (random ops are not recomputed). The
// casts of the weights are recomputed too: no cached bf16 copies. `scores`:
// the attention's score elements per token where it keeps them, else 0.
void compiled_layer(EagerLayerLedger& l, const Model& m, const LayerKind& k, double h, double residual, double el,
                    double scores) {
    const Attention& at = k.attention;
    const Mlp& mlp = k.mlp;
    const double q = static_cast<double>(at.heads) * static_cast<double>(at.head_dim);
    const double kv = static_cast<double>(at.kv_heads) * static_cast<double>(at.head_dim);
    const double o = static_cast<double>(at.heads) * static_cast<double>(at.v_head_dim);
    const double f = static_cast<double>(mlp.ffn);
    const bool dropout = mlp.kind == MlpKind::dense && mlp.act != Activation::relu2 && m.dropout_on();
    l.add("the layer's input (the residual) and the output projection's output", residual * h + el * h);
    l.add("SDPA: query, key, value, output, log-sum-exp", el * (q + 2 * kv + o) + 4.0 * at.heads);
    // Attention with its scores in memory: the partitioner never recomputes
    // a matmul, so it keeps the first one's bf16 scores (and per-row max and
    // sum, negligible) and recomputes softmax and the probabilities.
    if (scores > 0) l.add("attention scores (the first matmul's output)", el * scores);
    l.add(mlp.kind == MlpKind::gated ? "gate and up outputs" : "up output", (mlp.kind == MlpKind::gated ? 2 : 1) * el * f);
    if (dropout) l.add("dropout masks", 2 * h);
}

}  // namespace

EagerLayerLedger eager_layer_ledger(const Model& m, const LayerKind& k, const Training& t, const ParallelPlan& p) {
    EagerLayerLedger l;
    const bool fp32 = t.precision == Precision::fp32;
    const bool autocast = eager_autocast(t, p);
    const double el = fp32 ? 4.0 : 2.0;  // a GEMM output or activation
    const double h = static_cast<double>(m.hidden);
    if (t.compile && k.mixer == MixerKind::attention && !k.is_moe() && k.mlp.kind != MlpKind::none) {
        l.input_bytes_per_token = (autocast || fp32 ? 4.0 : 2.0) * h;
        compiled_layer(l, m, k, h, l.input_bytes_per_token / h, el,
                       hf_attention_keeps_scores(m, t) ? score_elems(k.attention, t, p) : 0.0);
        return l;
    }
    const NormSave norm = norm_save(m.norm, h, autocast, fp32);
    l.input_bytes_per_token = (autocast || fp32 ? 4.0 : 2.0) * h;
    const Attention& at = k.attention;
    const Mlp& mlp = k.is_moe() ? k.moe.expert : k.mlp;
    const bool gated = mlp.kind == MlpKind::gated;
    const bool dropout = mlp.kind == MlpKind::dense && mlp.act != Activation::relu2 && !k.is_moe() && m.dropout_on();
    if (k.mixer == MixerKind::attention) {
        const double q = static_cast<double>(at.heads) * static_cast<double>(at.head_dim);
        const double kv = static_cast<double>(at.kv_heads) * static_cast<double>(at.head_dim);
        const double o = static_cast<double>(at.heads) * static_cast<double>(at.v_head_dim);
        const int proj = (at.fused_qkv ? 1 : 3) + (at.output_gate ? 1 : 0);
        l.add("attention norm: input and normalised copy", norm.saved);
        l.add("attention projections' inputs", gemm_inputs(norm, proj));
        if (at.qk_norm) l.add("qk-norm: fp32 upcasts and normalised copies", (el == 4 ? 8.0 : 6.0) * (q + kv));
        if (hf_attention_keeps_scores(m, t)) {
            // Eager attention: the matmuls keep their operands, key and value
            // repeated to every head (repeat_kv's copies under GQA): query,
            // key and value at q, q and o wide, and the output the output
            // projection takes; no log-sum-exp. Per score element softmax's
            // fp32 output (SoftmaxBackward0 keeps its result) and the bf16
            // probabilities the second matmul keeps (one tensor in fp32).
            l.add("eager attention: query, repeated key and value, output", el * (2 * q + 2 * o));
            // gpt-oss's softmax keeps its logits' dtype (softmax(...,
            // dtype=combined_logits.dtype)): fp32 under autocast (the fp32
            // mask and sinks promote the sum), and then cast; in a bf16
            // model bf16, its slice the second matmul's operand: 2 bytes.
            const bool bf16_softmax = !fp32 && at.sinks && !autocast;
            const double per_score = fp32 ? 4.0 : (bf16_softmax ? 2.0 : 6.0);
            l.add(bf16_softmax ? "attention scores: bf16 softmax output (the probabilities)"
                               : "attention scores: fp32 softmax output, bf16 probabilities",
                  per_score * score_elems(at, t, p));
        } else {
            l.add("SDPA: query, key, value, output, log-sum-exp", el * (q + 2 * kv + o) + 4.0 * at.heads);
            // A window or chunk handed to SDPA as a boolean (b, 1, s, s) band
            // (hf_attention.h hf_sdpa_masks_window): SDPA turns it into an additive
            // mask of the query's dtype on every call (aten attention.cpp
            // convert_boolean_attn_mask / _cudnn: at::where(mask.logical_not(),
            // -inf or -65504, 0)), and the cuDNN or memory-efficient kernel's
            // backward takes that bias (derivatives.yaml
            // _scaled_dot_product_cudnn_attention / _efficient_attention:
            // attn_bias): one per windowed layer, s elements per token.
            if (hf_sdpa_masks_window(m, k, t))
                l.add("SDPA's additive window mask (b, 1, s, s)", el * static_cast<double>(t.seq_length));
        }
        if (at.output_gate) l.add("output gate: sigmoid output, gated output", el * (q + o));
        if (dropout) l.add("attention output dropout mask", h);
        // transformers' KV cache (spec.h Training::use_cache) under autocast,
        // keys rotated: fp32 keys and values (the cache takes their dtype), which
        // SDPA, fed bf16 casts, does not save. Only the model's output refers
        // to the cache, so they reach the loss's backward only when the loop
        // holds that output (training.holds_outputs). In 16 or 32 bits they are
        // SDPA's own inputs (no more).
        if (hf_layer_caches_kv(k, t, p) && autocast && m.rotary_in(k) > 0 && t.holds_outputs)
            l.add("KV cache: fp32 keys and values (use_cache)",
                  4.0 * (kv + static_cast<double>(at.kv_heads) * static_cast<double>(at.v_head_dim)));
    } else if (k.mixer != MixerKind::none) {
        // Other mixers in eager code: their input, projections and output,
        // as the Megatron ledger counts them (workload/layer_work.cpp).
        l.add("mixer norm: input and normalised copy", norm.saved);
        l.add("mixer projections' inputs", gemm_inputs(norm, 1));
    }
    if (k.is_moe()) {
        const Moe& e = k.moe;
        const double f = static_cast<double>(e.expert.ffn);
        const double experts = static_cast<double>(e.experts);
        l.add("MoE norm: input and normalised copy", norm.saved);
        l.add("router input", gemm_inputs(norm, 1));
        l.add("router logits and fp32 softmax", (el + 4.0) * experts);
        const double copy = autocast || fp32 ? 8 * h + (gated ? 16 : 8) * f : 4 * h + (gated ? 8 : 4) * f;
        l.add("routed copies: input, gate/up, activation, product, output", copy * e.top_k);
        if (e.shared_ffn > 0) {
            const double sf = static_cast<double>(e.shared_ffn);
            l.add("shared experts: inputs, gate, up, activation, product", (autocast ? 4 * h : 0) + 4 * el * sf);
        }
    } else if (mlp.kind != MlpKind::none) {
        const double f = static_cast<double>(mlp.ffn);
        l.add("MLP norm: input and normalised copy", norm.saved);
        l.add("MLP projections' inputs", gemm_inputs(norm, gated && !mlp.fused_gate_up ? 2 : 1));
        // A composite GELU under autocast runs in fp32 from its first op:
        // torch.pow is on autocast's fp32 list (autocast_mode.cpp), so pow
        // saves an fp32 copy of its input and the chain after it is fp32:
        // the copy (4), tanh's output (4), 0.5x (2, bf16), 1 + tanh (4) and
        // down_proj's bf16 cast of the fp32 output (2): 16 bytes an element.
        const double composite = autocast ? 16.0 : 5 * el;
        const double act = gated ? 4 * el * f : (mlp.act_composite ? composite : 2 * el) * f;
        l.add(gated ? "gate, activation, up, product" : "up projection, activation chain", act);
        if (dropout) l.add("MLP output dropout mask", h);
    }
    return l;
}

EagerHeadLedger eager_head_ledger(const Model& m, const Training& t, const ParallelPlan& p) {
    EagerHeadLedger hl;
    const bool fp32 = t.precision == Precision::fp32;
    const bool autocast = eager_autocast(t, p);
    const double h = static_cast<double>(m.hidden);
    const double v = static_cast<double>(m.vocab);
    const NormSave norm = norm_save(m.norm, h, autocast, fp32);
    hl.saved_bytes_per_token = norm.saved + gemm_inputs(norm, 1);
    hl.loss_bytes_per_token = 3 * 4.0 * v;
    const double output_weights = v * static_cast<double>(m.embed_width());
    // The loss itself is transformers' eager ForCausalLMLoss either way: the
    // measured torch.compile row of the H200 table holds the eager loss's
    // three fp32 buffers (an assumption read off that one row: a graph break
    // at the loss, or Inductor keeping the fp32 log-softmax); its output
    // layer's weight cast is recomputed like the layers'.
    if (autocast && !t.compile) hl.weight_copy_bytes = 2 * output_weights;
    // FSDP2 keeps the root module (embedding, final norm, output layer)
    // gathered from its forward to the end of backward: the root is not
    // resharded after forward (torch/distributed/fsdp/_fully_shard/
    // _fsdp_state.py _lazy_init: the root's post_forward_mesh_info is None).
    else if (p.zero >= 3 && !fp32) hl.weight_copy_bytes = 2 * output_weights * (m.tied_embeddings ? 1 : 2);
    return hl;
}

}  // namespace lostflops
