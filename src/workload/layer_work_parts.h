// Two parts of layer_work (workload/layer_work.cpp) in functions of their
// own: the parameters a GPU holds of one layer, and what Megatron-Core's
// selective recompute modules drop and redo. Internal to src/workload.
#pragma once

#include "job/layer_kinds.h"
#include "workload/layer_work.h"

namespace lostflops {

// What kind of layer k is and its attention shape on one GPU, derived once
// for layer_work and layer_params: its mixer's row (job/layer_kinds.h);
// attention: softmax attention with key/value heads (MixerKind::attention,
// whose shape MaxText's remat policies price); heads a, head dim d, KV heads
// per GPU (replicated when tp > kv heads); mlp is the expert's for an MoE layer.
struct LayerTraits {
    const MixerRow* mixer;
    bool attention, moe, has_mlp, gated;
    const Mlp* mlp;
    double a, d, kv_local;
};
LayerTraits layer_traits(const LayerKind& k, const ParallelPlan& p);
// The dense MLP's GEMMs (fc1, fc2) or the MoE block's (router, experts,
// shared experts) appended to w.gemms, and w.moe_first_gemm: tokens per GPU
// and micro-batch, hidden h, sp_div tp with sequence parallelism, else 1
// (workload/layer_gemms.cpp).
struct MlpGemms {
    int fc1 = -1, router = -1;  // index in w.gemms, -1 when none
    double ffn_width = 0;       // MLP width a token passes through (experts: top-k and shared)
};
MlpGemms add_mlp_gemms(const LayerKind& k, const LayerTraits& l, const Training& tr, const ParallelPlan& p,
                       double tokens, double h, double sp_div, LayerWork& w);
// fp8 training's casts of every GEMM operand but the router (-1: none),
// bytes and kernels, by the job's recipe (tr.fp8_recipe,
// lostflops/fp8_recipe.h) and stack; a norm feeds norm_fed_mixer's and
// norm_fed_fc1's inputs, which it writes in fp8 itself under delayed
// scaling, on its 1/sp_div share of the tokens (workload/layer_gemms.cpp).
void add_fp8_casts(LayerWork& w, int norm_fed_mixer, int norm_fed_fc1, int router, const Training& tr,
                   double sp_div);

// Parameters per GPU of one layer of kind k laid out over TP, ETP and EP:
// sets w.params, w.expert_params, w.dense_tensors and w.expert_tensors
// (w.gemm_count must be set; l = layer_traits(k, p); mixer_weights: the
// mixer's on this GPU, MixerOnRank::params).
void layer_params(const Model& m, const LayerKind& k, const ParallelPlan& p, const LayerTraits& l,
                  double mixer_weights, LayerWork& w);

// The layer's shapes as layer_work derived them, per GPU, that the selective
// recompute modules read (bytes, elements; el: bytes of a 16-bit-or-wider
// activation, wide: el / 2; the mixer's row's norm_module and
// up_proj_module, and what its mla_up_proj redoes, MixerOnRank::up_proj_*).
struct RecomputeShapes {
    double el, wide, act, tokens, sbh, sp_div, blocks;
    double t, rope_elems, ffn_elems, permuted, held_moe_bytes, scores;
    bool norm_module, up_proj_module;
    unsigned up_proj_gemms;
    double up_proj_bytes;
    bool moe, sp, gated;
    int fc1_gemm, router_gemm;  // index in w.gemms, -1 when none
};

// Selective recompute with parallel.recompute_modules beyond core_attn:
// lowers w.activation_bytes by what each module drops and adds the work it
// redoes (recompute_gemms, recompute_mem_bytes, recompute_kernels,
// recompute_dispatch, recompute_tp_share). Precondition: p.recompute is
// selective and w.activation_bytes is the selective figure of core_attn.
void apply_recompute_modules(const LayerKind& k, const Training& tr, const ParallelPlan& p,
                             const RecomputeShapes& r, LayerWork& w);

// The layer's shapes the stacks' own memory rules read (per GPU; el: bytes
// of an activation).
struct StackShapes {
    double tokens, h, el, sp_div, t, a, d, dv, kv_local, ffn_width;
    bool attention, has_mlp, gated;
};
// The memory of stacks whose saved tensors are not Megatron's: a Hugging
// Face model in eager PyTorch (workload/eager_ledger.h), MaxText's named
// remat policy (ParallelPlan::remat_policy) and offloaded activations
// (ParallelPlan::offload_activations). Sets w's activation, checkpoint and
// weight-copy bytes (w.params must be set).
void apply_stack_memory(const Model& m, const LayerKind& k, const Training& tr, const ParallelPlan& p,
                        const StackShapes& s, LayerWork& w);

// A layer's shapes as the eager transformers passes below read them.
struct EagerShapes {
    double tokens = 0, h = 0;
    double rope_elems = 0;  // rotary elements of q and k per token (0: no rotary)
    double blocks = 0;      // residual blocks of the layer
    double ffn_local = 0;   // the MLP's width on this GPU
    bool rms_norm = true;   // RMSNorm (else LayerNorm)
    bool gated = true;      // a gated MLP (SwiGLU's eager products)
    bool dropout = false;   // dropout after each block (GPT-2-era models, in training)
};

// Framework hf under bf16 autocast over fp32 weights (eager_ledger.h
// eager_autocast, not compiled): its casts, fp32 residual stream, norms and
// rotary over the eager stack's counts, and the per-step weight casts
// (eager_traffic.cpp). After layer_params (needs w.params).
void add_autocast_traffic(const LayerKind& k, const EagerShapes& s, LayerWork& w);
// The same under torch.compile (training.compile): the fp32 residual
// stream through the fused kernels and the weight casts (eager_traffic.cpp).
void add_compiled_autocast_traffic(const LayerKind& k, double tokens, double h, double blocks, LayerWork& w);
// Framework hf under FSDP2 with bf16 parameters (eager_ledger.h
// eager_fsdp2_bf16): the bf16 model's norms, rotary and gradient sums over
// the eager stack's counts, with their slower paths (eager_traffic.cpp).
void add_fsdp2_bf16_traffic(const LayerKind& k, const EagerShapes& s, LayerWork& w);
// Framework hf under FSDP2 on one rank (eager_ledger.h fsdp2_one_rank): the
// copies of each layer's unshard and gradient reduce (eager_traffic.cpp), a
// cast and a copy for each of its `tensors` parameter tensors
// (host_ops.h hf_layer_param_tensors). After layer_params.
void add_fsdp2_traffic(double tensors, LayerWork& w);
// The linear modules of a transformers layer (eager_traffic.cpp), each its own GEMM.
double hf_linears(const LayerKind& k);
// Framework hf in eager PyTorch (not compiled): the kernels the stack's
// counts do not have (eager_traffic.cpp). After the GEMMs are set.
void add_hf_eager_kernels(const LayerKind& k, double rope_elems, LayerWork& w);
// The biased linear modules of layer kind k in eager PyTorch, over tp `t`
// (bias_grads.cpp): how many, and the widths of their outputs per token
// (out_width, split over tp) and how many write the hidden size.
struct EagerBiases {
    double linears = 0;
    double out_width = 0;
    double hidden_outputs = 0;
};
EagerBiases eager_biases(const LayerKind& k, double t);
// Eager PyTorch (fsdp, deepspeed, hf; not compiled): each biased linear's
// gradient reduction backward (el bytes an output element, one kernel), and
// under autocast its bias's cast each way (bias_grads.cpp).
void add_eager_bias_grads(const LayerKind& k, double tokens, double h, double t, double el, bool autocast,
                          LayerWork& w);
// Framework hf in eager PyTorch with partial rotary (0 < Model::rotary_share
// < 1): the split and concatenation of q and k, qk_elems their elements per
// token, share the rotated part (eager_traffic.cpp); autocast: fp32 weights
// under bf16 autocast, where the concatenation promotes q and k to fp32; el
// the bytes of an activation (4 in fp32 training).
void add_hf_partial_rotary(double tokens, double qk_elems, double share, bool autocast, double el, LayerWork& w);
// transformers' KV cache in the training forward (spec.h Training::use_cache):
// the torch.cat of the layer's keys (k_elems a token) and values (v_elems)
// into empty tensors of the keys' dtype, and under autocast the casts of the
// fp32 values that follow (eager_traffic.cpp).
void add_hf_kv_cache(double tokens, double k_elems, double v_elems, bool autocast, double el, LayerWork& w);

}  // namespace lostflops
