// The operators of one transformer layer for one micro-batch on one GPU, under
// a parallel plan: GEMM shapes, attention work, bytes of memory-bound kernels,
// kernel counts and the traffic of each parallel dimension. Pure shapes and
// bytes; src/estimate turns them into time with src/cost.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

struct GemmShape {
    double m = 0, n = 0, k = 0;
    double count = 1;  // identical GEMMs (e.g. local experts)
    // One grouped GEMM over `count` groups of m rows (the local experts;
    // cost/grouped_gemm.h): its tiles share one launch, small groups lose
    // efficiency by DeepGEMM's component table.
    bool grouped = false;
    // transformers' experts under bf16 autocast over fp32 weights
    // (framework hf, zero below 3): torch._grouped_mm is not on autocast's
    // lists, so it gets fp32 operands and runs its fallback, one fp32
    // torch.mm per group on the CUDA cores (TF32 off), launched from a
    // Python-level loop (the Qwen3-MoE trace: 3,072 aten::mm under 24
    // aten::_grouped_mm, sm80_xmma_gemm_f32f32 kernels).
    bool fp32_loop = false;
};

// Bytes of memory-bound kernels that eager PyTorch runs on its slower
// elementwise paths (framework hf under autocast, workload/eager_traffic.cpp):
// a part of mem_bytes, priced at the device's rates for them
// (cost/device_time.h eager_class_extra_s).
struct EagerClassBytes {
    double upcast = 0;     // bf16-to-fp32 copies
    double broadcast = 0;  // fp32 multiplies with a broadcast operand
    double strided = 0;    // mixed-dtype broadcasts and strided halves (rotary)
    void add_scaled(const EagerClassBytes& o, double s) {
        upcast += s * o.upcast;
        broadcast += s * o.broadcast;
        strided += s * o.strided;
    }
};

struct LayerWork {
    // Forward GEMMs with weights; backward runs two GEMMs (data and weight
    // gradient) of the same FLOPs for each.
    std::array<GemmShape, 12> gemms{};
    int gemm_count = 0;
    // Of gemms, the first lead_gemms run before the mixer's core (an
    // attention mixer's projections but its output one; HostOps::lead_fwd).
    int lead_gemms = 0;

    // Attention core (scores + values), forward FLOPs actually executed on this
    // GPU. Flash attention skips masked blocks, so causal halves it; a window
    // or a chunk keeps only the keys it lets through (workload/flops.h
    // attention_keys). State-space and linear mixers: their scan, run as
    // small matrix products like the attention kernel (Mamba-2's SSD, Dao &
    // Gu 2024 sec. 6; the chunked delta rule, Yang et al. 2024 sec. 3.3).
    double attention_flops_fwd = 0;
    // Of attention_flops_fwd, the whole square run under an explicit mask in
    // an eager step: transformers' SDPA over a sliding window or a chunk no
    // longer than the sequence (hf_attention.h hf_sdpa_attention), priced at
    // DeviceModel::attention_masked_fwd/bwd. (Under torch.compile every
    // layer's mask is explicit and the device model's rates are the masked
    // ones: masked_square_attention.)
    double attention_masked_flops_fwd = 0;
    // Selective recompute redoes the core: true for softmax attention (and
    // MLA), whose scores it drops; a scan's state is not recomputed.
    bool selective_core = true;
    // Unfused attention (Megatron-LM 2021): two batched GEMMs + softmax/dropout.
    bool unfused = false;
    GemmShape scores{}, values{};

    // Memory-bound kernels: bytes read + written, and kernel launches.
    double mem_bytes_fwd = 0, mem_bytes_bwd = 0;
    double kernels_fwd = 0, kernels_bwd = 0;
    EagerClassBytes eager_fwd{}, eager_bwd{};  // of mem_bytes_fwd, mem_bytes_bwd
    // Of mem_bytes_fwd and kernels_fwd: FSDP2's unshard of the layer on one
    // rank (add_fsdp2_traffic), which full recompute does not redo (its
    // pre-forward hook returns at once in the pre-backward state).
    double fsdp_unshard_bytes_fwd = 0, fsdp_unshard_kernels_fwd = 0;
    // Part of the forward memory-bound traffic redone by selective recompute.
    double mem_bytes_attention_fwd = 0;
    // Selective recompute's other modules (parallel.recompute_modules,
    // workload/layer_work.cpp): forward GEMMs redone in backward (bit i =
    // gemms[i]), memory-bound bytes and kernels redone, the share of the
    // forward's TP collectives redone, and the expert dispatch redone (moe).
    unsigned recompute_gemms = 0;
    double recompute_mem_bytes = 0;
    double recompute_kernels = 0;
    double recompute_tp_share = 0;
    bool recompute_dispatch = false;

    // Tensor parallel: collectives per layer in forward (backward mirrors).
    double tp_bytes = 0;         // activation size each collective moves
    int tp_collectives_fwd = 0;  // all-reduces (no SP) or AG+RS pairs counted as 2
    bool tp_sequence_parallel = false;

    // Context parallel: K/V bytes of the other ranks' tokens each rank
    // receives per layer ((cp-1) ring blocks); for Ulysses (cp_comm_type
    // a2a) the Q, K, V and the output of the rank's own tokens, all local
    // heads, that its all-to-alls move (cost/cp_attention.h).
    double cp_bytes_fwd = 0;
    double cp_qkv_bytes = 0, cp_out_bytes = 0;
    // Expert layers (docs/job-file-parallel.md "Expert parallelism"; cost/expert_dispatch.h
    // turns them into bytes per fabric and time): the tokens this rank holds
    // and dispatches, b*s/(cp*tp) with sequence parallelism (b*s/cp without),
    // the copies of each (top-k) and the bytes of one copy (hidden x 2).
    // moe_dispatches_fwd: 2 (dispatch + combine) when tokens leave the rank
    // (ep > 1, or etp > 1 with sequence parallelism), else 0. moe_etp_gather:
    // the etp ranks gather the received copies (etp > 1 with sequence
    // parallelism; without it every TP rank holds every token and the
    // experts' outputs are all-reduced over TP like a dense MLP's).
    double moe_tokens = 0;
    double moe_top_k = 0;
    double moe_token_bytes = 0;
    int moe_dispatches_fwd = 0;
    bool moe_etp_gather = false;
    // Index of the MoE block's first GEMM (the router; then the experts and
    // the shared experts); the GEMMs before it are the mixer's. -1: no MoE.
    // The expert all-to-all overlap pairs each collective with one of the two
    // sides (estimate/stage_time.cpp).
    int moe_first_gemm = -1;

    // Activation memory stored for backward, bytes (Korthikanti et al. 2022).
    double activation_bytes = 0;        // with the plan's recompute mode
    double activation_bytes_full = 0;   // no recompute (working set of one layer)
    double checkpoint_bytes = 0;        // layer input kept by full recompute
    // Framework hf at zero 0: the bf16 copies autocast caches of the layer's
    // fp32 weights (torch.autocast's cast cache, kept by the GEMMs that save
    // them for backward; workload/eager_ledger.h), bytes.
    double weight_copy_bytes = 0;
    // torchtitan's per-op selective checkpointing (workload/op_checkpoint.h):
    // activation_bytes is what it keeps, and its backward redoes this share
    // of the forward GEMM FLOPs and every forward memory-bound kernel.
    bool op_checkpoint = false;
    double op_recompute_gemm_share = 0;

    // Weights of the layer on this GPU (parameters, not bytes): dense ones
    // (replicated over dp*cp) and expert ones (replicated over tp*cp*dp/(etp*ep)).
    double params = 0;
    double expert_params = 0;
    // Weight tensors of each group, as a ZeRO-3 engine gathers them one by one.
    double dense_tensors = 0, expert_tensors = 0;
};

// One layer of kind `k` of model `m`.
LayerWork layer_work(const Model& m, const LayerKind& k, const Training& t, const ParallelPlan& p);
// A uniform model's layer (precondition: m.uniform()).
LayerWork layer_work(const Model& m, const Training& t, const ParallelPlan& p);
// The work of every kind of `m`, index = kind (reuses `out`'s storage).
void stack_work(const Model& m, const Training& t, const ParallelPlan& p, std::vector<LayerWork>& out);
// The layer-count-weighted mean of the kinds' works (`works[k]` of kind k):
// its additive fields (bytes, FLOPs, kernels, parameters, tensors) averaged,
// the kernel choice and shapes of kind 0. A uniform model's is its layer.
LayerWork mean_layer_work(const Model& m, std::span<const LayerWork> works);

// The output layer (logits + cross-entropy) and input embedding for one
// micro-batch on one GPU.
struct HeadWork {
    GemmShape logits{};
    // OPT's project_out before the logits and project_in after the lookup
    // (Model::embed_dim): one h x e GEMM each; m = 0 when there are none.
    GemmShape projection{};
    double loss_bytes_fwd = 0, loss_bytes_bwd = 0;  // vocab-parallel cross-entropy
    EagerClassBytes loss_eager_fwd{}, loss_eager_bwd{};  // of loss_bytes_fwd, loss_bytes_bwd
    double embed_bytes_fwd = 0, embed_bytes_bwd = 0;
    double logits_memory_bytes = 0;                 // logits kept for the loss backward
    double held_logits_bytes = 0;                   // the logits a loop holds in the model's output (once, not per MTP module)
    // Reserved but not allocated at the loss's backward: the caching
    // allocator's block of the freed 16-bit logits (torchtitan's "del pred"),
    // too small for any 32-bit logit tensor the backward allocates, bytes.
    double logits_cached_bytes = 0;
    // Eager stacks (framework hf): what the final norm and the output layer
    // save for backward, and the output layer's 16-bit weight copy (autocast's
    // cast of the fp32 weight, or FSDP2's gathered root module), bytes.
    double head_saved_bytes = 0;
    double head_weight_copy_bytes = 0;
    double tp_bytes = 0;                            // SP gather before logits
    double embedding_params = 0;                    // (V*e + positions*h + project_in e*h)/t
};

HeadWork head_work(const Model& m, const Training& t, const ParallelPlan& p);

}  // namespace lostflops
