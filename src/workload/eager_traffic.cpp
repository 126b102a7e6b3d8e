// Memory-bound traffic of a Hugging Face model under bf16 autocast over fp32
// weights (framework hf, zero below 3), over the eager stack's own counts in
// layer_work.cpp (RMSNorm 36 bytes, residual add 6, rotary 20 per element:
// torchtitan's bf16 model). Read off transformers 5.17's LlamaDecoderLayer
// and checked kernel by kernel on one layer of
// shared/traces/h200/h200-llama3.2-1b-s4096-b2-autocast.json.gz:
//   - the residual stream is fp32 (the embedding and every residual add run
//     in fp32 under autocast), so RMSNorm reads it in fp32: pow (read 4,
//     write 4), mean (4), x * rsqrt (4, 4), weight * x (4, 4) = 28 bytes
//     per element, no upcast or downcast; the residual adds read fp32 and
//     the bf16 GEMM output and write fp32: 10 bytes;
//   - every linear whose input is fp32 casts it to bf16 itself (autocast
//     casts activations per call, not once): q, k and v each cast the
//     normed input, gate and up the second norm's (bfloat16_copy_kernel,
//     read 4, write 2 per element), the router its input;
//   - rotary multiplies bf16 q and k by fp32 cos and sin, so q and k leave
//     it in fp32: mul (read 2, write 4), rotate_half's neg (2 + 2 on half)
//     and cat (2 + 2), mul (2, 4), add (8, 4) = 30 bytes, and SDPA casts
//     them back (4, 2): 36 against 20;
//   - autocast casts each fp32 weight to bf16 at its first use in every
//     forward (6 bytes per parameter: the cache lives for one autocast
//     region), and backward casts each bf16 weight gradient to fp32
//     (ToCopyBackward0, 6 bytes per parameter).
//   - a composite activation runs as its chain of PyTorch operators, not one
//     kernel (layer_work.cpp counts 4 bytes per element: read 2, write 2):
//     transformers' NewGELUActivation, 0.5 * x * (1 + tanh(sqrt(2 / pi) *
//     (x + 0.044715 * pow(x, 3)))), starts with pow, on autocast's fp32
//     list, so the chain runs in fp32 from there: pow (read 2, write 4),
//     scale (4, 4), add x (2 + 4, 4), scale (4, 4), tanh (4, 4), add 1 (4, 4),
//     0.5 * x (2, 2), multiply (2 + 4, 4) = 62 bytes, and the down projection
//     casts its fp32 input (4, 2): 68 (gelu_fast, without pow, is priced the
//     same: an over-count); QuickGELU x * sigmoid(1.702 x) in bf16: 14;
//     GELUActivation's Python erf form (divide, erf, add, two multiplies, bf16): 20.
// Backward activation traffic is twice the forward's, as for every layer
// (layer_work.cpp; the trace's layer: 2.63 ms against 1.28 ms forward),
// but rotary's: 60 bytes per q and k element, not 72, read kernel by kernel
// on the 1B trace: the SDPA cast's ToCopyBackward0 (6, an upcast), grad *
// cos and grad * sin in fp32 (8 each, fp32 broadcasts), each cast back to
// bf16 for q and rotate_half(q) (6 each), NegBackward0 (2), SliceBackward0's
// zero fills (4) and copies into the halves (4), their accumulate (6), the
// accumulate of the two paths (6) and ViewBackward0's copy of the transposed
// gradient (4).
//
// Of those bytes, three classes run on PyTorch's slower elementwise paths
// (LayerWork::eager_fwd / eager_bwd; their rates: calibration.h
// hf_*_hbm_fraction), kernel by kernel on the same trace
// (scripts/eager_kernel_classes.py classes them by kernel name):
//   - upcast, bf16 to fp32 (unrolled_elementwise_kernel<direct_copy ...
//     LoadWithCast>): backward, ToCopyBackward0 of every cast autocast made
//     forward, 6 bytes an element: each weight's gradient, each linear's
//     input cast, SDPA's casts of q and k; per Llama-3.2-1B layer 14
//     kernels (the trace: 226 a step over 16 layers and the head);
//   - broadcast, fp32 multiplies by a [tokens, 1] or [h] operand
//     (elementwise_kernel<128, 2>): each RMSNorm's x * rsqrt(var) and
//     weight * x forward (8 + 8 bytes), backward three such multiplies (8
//     each) and the mean's expanded divide (write 4): 16 and 28 bytes per
//     norm element (the trace: 66 and 131 kernels a step for 33 norms);
//   - strided, rotary (elementwise_kernel<128, 4>): q * cos and
//     rotate_half(q) * sin, bf16 times fp32 broadcast over heads (read 2,
//     write 4 each), neg on rotate_half's strided half (2 per q element),
//     the cat (4; CatArrayBatchedCopy, 920 GB/s); backward the neg, the
//     slices' copies, the two paths' accumulate and the transposed copy
//     (2 + 4 + 6 + 4): 18 and 16 bytes per rotary element; and backward
//     grad * cos and grad * sin are fp32 broadcasts (16).
#include "workload/layer_work_parts.h"

#include <algorithm>

namespace lostflops {

namespace {

// transformers 5.17's grouped_mm experts under autocast (integrations/moe.py
// grouped_mm_experts_forward; _grouped_mm is off autocast's cast list, so
// with fp32 weights the routed copies stay fp32, 4 bytes an element), per
// layer forward, S = tokens x top_k routed copies, h hidden, f expert width,
// read + write bytes per element, the operators and kernels as the Qwen3-MoE
// trace (shared/traces/h200/h200-qwen3-moe-4l-s4096-b1-autocast.json.gz)
// runs them (a 5.x moe.py read masks after the routing multiply instead of
// after each grouped GEMM; 5.17's trace has the latter):
//   copies [S, h]: hidden_states[perm // k] gather (8; vectorized_gather),
//     masked_fill_ of the sentinel rows in place (8; elementwise_kernel<128,
//     2>, broadcast), masked_fill on the down output (out of place: a DtoD
//     copy 8 and the fill 8), * routing weight (bf16 [S, 1] broadcast into
//     fp32: 8; elementwise_kernel<128, 4> with casts, the strided class),
//     weighted_out[inv_perm] (8), view(T, k, h).sum(1) (reads 4 per copy,
//     writes 4 per token): 52 per copy element, 4 per token element;
//   expert width [S, 2f] / [S, f]: masked_fill on the gate_up output (copy
//     and fill, 16 per element of 2f = 32 per f), SiLU on the gate half
//     (8), SiLU(gate) * up (12): 52 per copy and f.
// The trace: 1.55 ms of these kernels per layer forward.
// Backward, from the trace's autograd nodes: SumBackward's expand copied by
// ViewBackward0 (read 4 per token, write 4 per copy element: broadcast path),
// IndexBackward0 of the inverse gather (zero fill 4, accumulate: read 4,
// read + write 8), the routing multiply's MulBackward0 (grad x weight 8 on
// the strided path, grad x out 12, the sum over h 4), two MaskedFillBackward0
// on [S, h] (copy 8 + fill 8 each), IndexBackward0 of the first gather
// (accumulate 12 per copy, zero fill 4 per token): 88 per copy element of h,
// 8 per token element; per f: the product's two multiplies (2 x 12),
// SiluBackward0 (12), SplitBackward0's cat (16), MaskedFillBackward0 on
// [S, 2f] (32): 84. The trace per layer: 2.50 ms backward against 1.55 ms
// forward (1.6 times; these counts 1.7 times the forward's bytes).
// The eager stack's count (layer_work.cpp) has 8 (bf16 permutation) and 10
// (SwiGLU) forward for them, twice that backward; the rest is added here.
// The fills, SiLU, the products and the expand run on the broadcast path,
// the routing multiply (forward, and its grad x weight) on the strided one.
void add_autocast_moe_traffic(const LayerKind& k, double tokens, double h, LayerWork& w) {
    const double copies = tokens * k.moe.top_k;
    const double f = static_cast<double>(k.moe.expert.ffn);
    w.mem_bytes_fwd += copies * h * (52.0 - 8.0) + tokens * h * 4.0 + copies * f * (52.0 - 10.0);
    w.mem_bytes_bwd += copies * h * (88.0 - 16.0) + tokens * h * 8.0 + copies * f * (84.0 - 20.0);
    w.eager_fwd.broadcast += copies * h * 16.0 + copies * f * 36.0;
    w.eager_bwd.broadcast += copies * h * 20.0 + copies * f * 52.0;
    w.eager_fwd.strided += copies * h * 8.0;
    w.eager_bwd.strided += copies * h * 8.0;
    // Forward 11 kernels (gather, masked_fill_, two copies and fills, SiLU,
    // product, routing multiply, inverse gather, sum) against the stack's 6
    // (its four permutation kernels, SiLU and the product); backward 18
    // (expand, two zero fills and accumulates, three for the routing
    // multiply, three copies and fills, two products, SiLU, cat) against 12.
    w.kernels_fwd += 5;
    w.kernels_bwd += 6;
}

}  // namespace

void add_autocast_traffic(const LayerKind& k, const EagerShapes& s, LayerWork& w) {
    const double tokens = s.tokens, h = s.h, rope_elems = s.rope_elems, blocks = s.blocks;
    const bool rms_norm = s.rms_norm;
    double casts = 0;  // linears fed an fp32 activation
    if (k.has_attention()) casts += k.attention.fused_qkv ? 1 : 3;
    const auto mlp_casts = [](const Mlp& m) {
        return m.kind == MlpKind::none ? 0.0 : m.kind == MlpKind::gated && !m.fused_gate_up ? 2.0 : 1.0;
    };
    casts += mlp_casts(k.mlp);
    if (k.is_moe()) casts += 1 + (k.moe.shared_ffn > 0 ? 2 : 0);  // router, shared expert
    // Over the stack's counts (layer_work.cpp: an RMSNorm 36 bytes per
    // element, a LayerNorm one kernel's 4; rotary 20 where it rotates):
    // RMSNorm 28, an fp32 LayerNorm (on autocast's fp32 list) read and
    // written in fp32, 8; rotary 36.
    const double norm_bytes = rms_norm ? 28.0 : 8.0;
    const double stack_norm = rms_norm ? 36.0 : 4.0, stack_rope = 20.0;
    double act = tokens * h * (k.norms * (norm_bytes - stack_norm) + casts * 6.0 + blocks * (10.0 - 6.0)) +
                 tokens * rope_elems * (36.0 - stack_rope);
    double chain_kernels = 0;
    if (k.mlp.kind != MlpKind::none && k.mlp.act_composite) {
        const double bytes = k.mlp.act == Activation::gelu_tanh    ? 68.0
                             : k.mlp.act == Activation::quick_gelu ? 14.0
                                                                   : 20.0;
        act += tokens * static_cast<double>(k.mlp.ffn) * (bytes - 4.0);
        chain_kernels = k.mlp.act == Activation::gelu_tanh ? 8 : k.mlp.act == Activation::quick_gelu ? 2 : 4;
    }
    const double weights = 6.0 * w.params;
    const double weight_kernels = hf_linears(k);  // one cast a linear's weight
    w.mem_bytes_fwd += act + weights;
    w.mem_bytes_bwd += 2 * act + weights + tokens * rope_elems * (60.0 - 72.0);
    // transformers' blocks drop out their output as a kernel of its own
    // (GPT2Block: attn.resid_dropout and mlp.dropout on the bf16 c_proj
    // outputs; fused_dropout reads 2, writes 2 and its mask 1; backward
    // reads the gradient and the mask and writes 2): 5 bytes an element each
    // way, where the stack fuses it into the residual add.
    if (s.dropout) {
        w.mem_bytes_fwd += tokens * h * blocks * 5.0;
        w.mem_bytes_bwd += tokens * h * blocks * 5.0;
        w.kernels_fwd += blocks;
        w.kernels_bwd += blocks;
    }
    const double q_k_casts = rope_elems > 0 ? 2 : 0;
    w.kernels_fwd += casts + q_k_casts + chain_kernels + weight_kernels;
    w.kernels_bwd += 2 * (casts + q_k_casts + chain_kernels) + weight_kernels;
    const double rms = rms_norm ? k.norms : 0.0;  // LayerNorm is one kernel
    w.eager_fwd.broadcast += tokens * h * rms * 16.0;
    w.eager_fwd.strided += tokens * rope_elems * 18.0;
    w.eager_bwd.upcast += weights + tokens * h * casts * 6.0 + tokens * rope_elems * 6.0;
    w.eager_bwd.broadcast += tokens * h * rms * 28.0 + tokens * rope_elems * 16.0;
    w.eager_bwd.strided += tokens * rope_elems * 16.0;
    if (k.is_moe()) add_autocast_moe_traffic(k, tokens, h, w);
}

// The same recipe under torch.compile: Inductor fuses each pointwise chain
// into one kernel (layer_work.cpp's fused counts: a norm reads and writes 2
// bytes per element, a residual add reads 4 and writes 2), but autocast's
// semantics stay: the residual stream is fp32, so each norm reads 4 bytes
// where the fused count has 2, each residual add reads fp32 and bf16 and
// writes fp32 (10 where it has 6); the GEMMs are cuBLAS calls that take a
// bf16 weight, so every fp32 weight is still cast each forward and each
// gradient cast back (6 + 6 bytes per parameter).
void add_compiled_autocast_traffic(const LayerKind& k, double tokens, double h, double blocks, LayerWork& w) {
    const double act = tokens * h * (k.norms * 2.0 + blocks * 4.0);
    const double weights = 6.0 * w.params;
    w.mem_bytes_fwd += act + weights;
    w.mem_bytes_bwd += 2 * act + weights;
}

// The linear modules of a transformers layer, each its own GEMM: q, k, v and
// o (a fused qkv and o), gate, up and down (a fused gate_up and down; a
// dense MLP's two), an MoE block's router and its two stacked expert
// weights (and a shared expert's three).
double hf_linears(const LayerKind& k) {
    double n = 0;
    if (k.has_attention()) n += k.attention.fused_qkv ? 2 : 4;
    if (k.mlp.kind == MlpKind::gated) n += k.mlp.fused_gate_up ? 2 : 3;
    else if (k.mlp.kind != MlpKind::none) n += 2;
    if (k.is_moe()) n += 3 + (k.moe.shared_ffn > 0 ? 3 : 0);
    return n;
}

// Kernels of an eager transformers layer the stack's counts (layer_work.cpp)
// do not have, counted kernel by kernel on the H200 traces by the thread
// that launched them (per Llama layer, forward / backward; the 1B autocast,
// the Qwen2.5-0.5B autocast, the 1B FSDP2 trace):
//   - one GEMM a linear module (7.1 / 14.1 a layer on every trace), where
//     the counts have one GEMM shape for q, k, v and one for gate, up;
//   - cuDNN's SDPA backward is five kernels (its flash bprop, two
//     fmha_reduce_head, compute_dot_do_o, convert_dq_to_16bits: 5.0 a
//     layer), where the counts have two;
//   - rotary is 10 kernels forward (q * cos, k * cos, rotate_half's neg and
//     cat for each, two * sin, two adds) and 20 backward, where the counts
//     have 5 and 10.
// cuBLAS's own memsets (1 to 14 a layer, by shape) are not counted.
void add_hf_eager_kernels(const LayerKind& k, double rope_elems, LayerWork& w) {
    const double gemms = std::max(0.0, hf_linears(k) - w.gemm_count);
    w.kernels_fwd += gemms + (rope_elems > 0 ? 5 : 0);
    w.kernels_bwd += 2 * gemms + (rope_elems > 0 ? 10 : 0) + (k.has_attention() ? 3 : 0);
}

// Partial rotary in transformers (modeling_gpt_neox.py, modeling_phi.py,
// modeling_stablelm.py apply_rotary_pos_emb: q[..., :rotary_dim] and
// q[..., rotary_dim:], the rotated part, then torch.cat of the two, for q
// and k) over the rotary counted on the rotated share, in bytes per element
// of the whole q or k at 16 bits (`el` / 2 times that in fp32):
//   - forward the cat of each reads 2 and writes 2 off the transposed views
//     (the strided class), one kernel a cat;
//   - backward each of the two slices' SliceBackward0 fills a zero gradient
//     of the whole tensor (2 + 2) and copies its part into it (2 + 2 over
//     the two parts, into strided slices), and the engine adds the two (6):
//     14, five kernels a tensor.
// Under autocast (fp32 weights) the rotated part comes out fp32 (bf16 q
// times the fp32 cos and sin: the rotary embedding casts them to the fp32
// hidden states' dtype) and torch.cat promotes: it reads the rotated share
// r in fp32 and the rest in bf16 and writes all of q in fp32 (4r + 2(1 - r)
// + 4), and with inputs of two dtypes CUDA's cat copies each input into its
// slice of the output, a kernel each (aten/src/ATen/native/cuda/Shape.cu
// cat_out_cuda: the batched copy needs one dtype): two kernels a cat. SDPA's
// autocast cast to bf16 now covers the unrotated part too (6 on 1 - r; the
// rotated share's cast is in the 36 of add_autocast_traffic): 12 - 4r
// where bf16 has 4. Backward that cast's ToCopyBackward0 upcasts the
// unrotated part's gradient (6 on 1 - r, the upcast class) and the engine
// casts the fp32 gradient CatBackward0 hands q_pass back to its bf16 (6 on
// 1 - r, off a strided slice; torch/csrc/autograd/engine.cpp
// validate_outputs): 12 (1 - r) and a kernel a tensor more.
// A qk-norm (qk_layernorm) hands rotary an fp32 q under autocast; priced as
// the bf16 q above, as the full rotary's counts are.
void add_hf_partial_rotary(double tokens, double qk_elems, double share, bool autocast, double el, LayerWork& w) {
    const double elems = tokens * qk_elems;
    const double wide = el / 2.0;
    w.mem_bytes_fwd += elems * 4.0 * wide;
    w.mem_bytes_bwd += elems * 14.0 * wide;
    w.eager_bwd.strided += elems * 4.0 * wide;
    w.kernels_fwd += 2;
    w.kernels_bwd += 10;
    if (!autocast) {
        w.eager_fwd.strided += elems * 4.0 * wide;
        return;
    }
    w.mem_bytes_fwd += elems * (8.0 - 4.0 * share);
    w.eager_fwd.strided += elems * (6.0 + 2.0 * share);
    w.mem_bytes_bwd += elems * 12.0 * (1.0 - share);
    w.eager_bwd.upcast += elems * 6.0 * (1.0 - share);
    w.eager_bwd.strided += elems * 6.0 * (1.0 - share);
    w.kernels_fwd += 2;
    w.kernels_bwd += 2;
}

// transformers' DynamicLayer (cache_utils.py) on the first call of a step:
// lazy_initialization makes empty keys and values of the keys' dtype, then
// update runs torch.cat([self.keys, key_states], dim=-2) and the same for the
// values. CUDA's cat skips the empty input and copies the other into a new
// tensor (aten/src/ATen/native/cuda/Shape.cu cat_out_cuda). Bytes per
// element of K (k_elems a token) and V (v_elems):
//  - 16 or 32 bits (FSDP2's bf16 model, fp32 training): both of one dtype,
//    a plain copy each, read and written: 2 el; the copies are SDPA's inputs.
//  - autocast: the keys leave rotary in fp32 (its fp32 cos and sin), so both
//    cache tensors are fp32. K's cat copies 4 + 4. V's reads bf16 and writes
//    fp32 (2 + 4, a casting copy: the upcast class), and SDPA's autocast casts
//    it back to bf16 (4 + 2, vectorised). Backward: that cast's
//    ToCopyBackward0 upcasts V's gradient (2 + 4, upcast class) and the
//    engine casts CatBackward0's fp32 slice to the values' bf16 (4 + 2;
//    torch/csrc/autograd/engine.cpp validate_outputs). Kernels: 3 forward, 2
//    backward, against 2 and 0.
// Checked on the 1B 4096 x 2 traces, 32 layer-steps each, cache
// (data/measured/h200-steps/trace-1b-s4096-b2-autocast.json.gz) against none
// (shared/traces/h200/h200-llama3.2-1b-s4096-b2-autocast.json.gz): about six
// more copy kernels a layer (fp32 CatArrayBatchedCopy, bfloat16_copy,
// direct_copy), where these count five.
void add_hf_kv_cache(double tokens, double k_elems, double v_elems, bool autocast, double el, LayerWork& w) {
    if (!autocast) {
        w.mem_bytes_fwd += tokens * 2.0 * el * (k_elems + v_elems);
        w.kernels_fwd += 2;
        return;
    }
    w.mem_bytes_fwd += tokens * (8.0 * k_elems + 12.0 * v_elems);
    w.eager_fwd.upcast += tokens * 6.0 * v_elems;
    w.mem_bytes_bwd += tokens * 12.0 * v_elems;
    w.eager_bwd.upcast += tokens * 6.0 * v_elems;
    w.kernels_fwd += 3;
    w.kernels_bwd += 2;
}

// A Hugging Face model under FSDP2 with bf16 parameters (framework hf, zero
// 3, MixedPrecisionPolicy(param_dtype=bf16), not compiled): everything runs
// in bf16 but the norms' fp32 upcasts, over the eager stack's counts in
// layer_work.cpp (RMSNorm 36, residual add 6, rotary 20, SwiGLU 10 bytes per
// element forward, twice that backward). Read off transformers 5.17's
// LlamaRMSNorm, apply_rotary_pos_emb and LlamaDecoderLayer, and checked
// kernel by kernel on shared/traces/h200/h200-llama3.2-1b-s4096-b2-fsdp2.json.gz
// (per step: 33 norms, 16 layers; elements from each kernel's launch grid):
//   - forward is the stack's count; its classes: the norm's
//     hidden_states.to(float32) an upcast (6 bytes), x * rsqrt(var) an fp32
//     broadcast (8), weight * x a bf16 broadcast (elementwise_kernel<128, 4>,
//     4); all of rotary runs on that path, q and k being transposed views:
//     q * cos and rotate_half(q) * sin (4 each), neg on the strided half (2),
//     cat (4), add (6): 20 (the trace: 920-1,700 GB/s, against 3,900-4,300
//     for the vectorised kernels);
//   - backward of a norm is 92 bytes per element, not 72: grad * weight (4,
//     bf16 broadcast), grad * x and its sum over tokens (6 + 2), the cast's
//     ToCopyBackward0 upcast (6), grad * rsqrt (8, broadcast), grad * x and
//     its sum over h (12 + 4), MeanBackward1's expanded divide (4,
//     broadcast), PowBackward0's pow(x, 1) copy, * 2 and * grad (8 + 8 +
//     12), the accumulate of the two paths (12), the upcast's
//     ToCopyBackward0 (6);
//   - backward of rotary is 34, not 40: grad * cos and grad * sin (4 each),
//     NegBackward0 (2), SliceBackward0's zero fills (4, vectorised) and
//     copies into the halves (4), their accumulate (6, vectorised), the
//     accumulate of the two paths (6) and ViewBackward0's copy of the
//     transposed gradient (4): 24 on the strided path;
//   - backward of SwiGLU is 18 (two products 6 each, silu_backward 6), not
//     20, and of a residual add the accumulate of the norm branch's
//     gradient into the stream (6), not 12;
//   - the gradients of an input read by several linears are summed: q, k
//     and v (two adds), gate and up (one), 6 bytes per element each (the
//     trace: 48 such adds a step).
// Kernels per norm: 8 forward, 16 backward (the stack counts 5 and 10).
void add_fsdp2_bf16_traffic(const LayerKind& k, const EagerShapes& s, LayerWork& w) {
    const double th = s.tokens * s.h, rope = s.tokens * s.rope_elems;
    const double rms = s.rms_norm ? k.norms : 0.0;
    double shared_inputs = 0;  // extra linears reading one input
    if (k.has_attention() && !k.attention.fused_qkv) shared_inputs += 2;
    if (k.mlp.kind == MlpKind::gated && !k.mlp.fused_gate_up) shared_inputs += 1;
    w.mem_bytes_bwd += th * (rms * (92.0 - 72.0) + s.blocks * (6.0 - 12.0) + shared_inputs * 6.0) +
                       rope * (34.0 - 40.0) + (s.gated ? s.tokens * s.ffn_local * (18.0 - 20.0) : 0.0);
    w.kernels_fwd += rms * 3;
    w.kernels_bwd += rms * 6 + shared_inputs;
    w.eager_fwd.upcast += th * rms * 6.0;
    w.eager_fwd.broadcast += th * rms * 8.0;
    w.eager_fwd.strided += th * rms * 4.0 + rope * 20.0;
    w.eager_bwd.upcast += th * rms * 6.0;
    w.eager_bwd.broadcast += th * rms * 12.0;
    w.eager_bwd.strided += th * rms * 4.0 + rope * 24.0;
}

// FSDP2's unshard and reduce around every layer on one rank
// (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py, torch 2.11), as
// the same trace runs them: forward, FSDP::pre_forward casts each fp32 shard
// to bf16 (one kernel a tensor, read 4, write 2 bytes per parameter) and
// copies it into the parameter (a DtoD copy, 2 + 2): 10 bytes; backward
// unshards again (reshard after forward, the default below the root: 10),
// and foreach_reduce's chunk_cat writes the bf16 gradients into the fp32
// reduce-scatter input (read 2, write 4: chunk_cat_cuda_kernel<float,
// BFloat16>, 1,990 GB/s on the trace, an upcast) that the reduce-scatter of
// one rank copies (4 + 4): 24 bytes. Full recompute (gradient
// checkpointing) does not unshard again: FSDPState._pre_forward returns at
// once in the PRE_BACKWARD state ("the pre-backward hook is responsible for
// the unshard", _fsdp_state.py), and the 3B FSDP2 trace's host runs
// FSDP::pre_forward 29 times a step, all in the forward
// (h200-llama3.2-3b-s8192-b2-fsdp2-memory: recompute full).
void add_fsdp2_traffic(double tensors, LayerWork& w) {
    const double params = w.params + w.expert_params;
    w.fsdp_unshard_bytes_fwd = 10.0 * params;
    w.fsdp_unshard_kernels_fwd = 2 * tensors;
    w.mem_bytes_fwd += w.fsdp_unshard_bytes_fwd;
    w.mem_bytes_bwd += 24.0 * params;
    w.eager_bwd.upcast += 6.0 * params;
    w.kernels_fwd += w.fsdp_unshard_kernels_fwd;
    w.kernels_bwd += 2 * tensors + 2;
}

}  // namespace lostflops
