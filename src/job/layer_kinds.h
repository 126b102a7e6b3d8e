// The table of layer kinds: each token mixer and each MLP form, its name, the
// fields it needs, how it is counted and what the code around it may assume
// of it. Parameters are every weight, bias and norm vector of the block;
// FLOPs per token count 2 per multiply-add of the GEMMs a token passes
// through plus the mixer's own core. Symbols: h hidden, a heads, g kv heads /
// groups, d head_dim, dv v_head_dim, s sequence, k keys a query sees
// (attention_keys below), E experts, K top-k, f widths.
//
// One home per mixer: what is specific to a kind (its parameters, FLOPs,
// GEMMs, memory-bound traffic, saved activations, context-parallel traffic,
// field checks, tensor-parallel split, description) is its file
// src/job/mixers/<name>.cpp, reached through its row's MixerFns; the row's
// traits say what generic code may assume of it (softmax kernels,
// Megatron-Core's norm module and mla_up_proj, context parallelism, framework
// hf's eager ledger, Megatron-LM's flags). A new kind is its value of
// MixerKind (lostflops/model.h, before none), its row here and its file
// mixers/<value>.cpp (the build lists it from the enum); LayerKinds.*
// (tests/job/layer_kinds_test.cpp) fails while a kind has no row or a row
// lacks a function. Reading one from a model file is its family's
// (job/model_read.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "lostflops/model.h"

namespace lostflops {

// Keys a query sees on average, over s tokens: causal s/2, within a window w
// the band's w - w^2/(2s), within chunks of c (s a multiple of c) c/2;
// causal false doubles the count (workload/flops.h conventions).
double attention_keys(int64_t seq, int64_t window, int64_t chunk, bool causal);

// A kind's parameters (workload/flops.cpp adds them up).
struct MixerCount {
    double gemm = 0;   // weights of its GEMMs
    double other = 0;  // biases, norms, convolution, per-head vectors
};

// One layer of the kind on one GPU for one micro-batch, as layer_work
// (workload/layer_work.cpp) sees it: tp t, cp c, tokens per GPU (b*s/c),
// hidden h, el bytes of a 16-bit-or-wider activation.
struct MixerRank {
    double t, c, tokens, h, el;
};
// What the kind's file answers for it (per GPU; elements unless named bytes).
struct MixerOnRank {
    std::array<std::array<double, 2>, 6> gemms{};  // its GEMMs in order: n and k (m = tokens)
    int gemm_count = 0;
    double params = 0;        // its weights on this GPU, split over TP as Megatron-LM splits them
    double rope_elems = 0;    // per token: the Q and K elements the rotary embedding rotates
    double mem_elems = 0;     // per token: elements its memory-bound kernels read and write, forward
    double mem_kernels = 0;   // their launches
    double core_kernels = 0;  // launches of its core (attention, scan), forward
    // Saved for backward: tensors replicated over TP without sequence
    // parallelism and tensors split over TP (16-bit; fp32 training widens
    // both), and bytes per GPU already (widened too unless state_fp32).
    double saved_replicated = 0, saved_split = 0, saved_on_rank_bytes = 0;
    bool state_fp32 = false;
    double fp8_split_less = 0;  // fp8 training: of saved_split, elements saved as 1-byte copies
    // Context parallelism, bytes: the other ranks' K and V a ring brings, and
    // what Ulysses' all-to-alls move (Q, K, V; the output).
    double cp_ring_bytes = 0, cp_qkv_bytes = 0, cp_out_bytes = 0;
    // Megatron-Core's mla_up_proj (MixerRow::up_proj_module): the GEMMs it
    // redoes (bit i = gemms[i]) and the bytes it drops.
    unsigned up_proj_gemms = 0;
    double up_proj_bytes = 0;
    void add(double n, double k) { gemms[static_cast<size_t>(gemm_count++)] = {n, k}; }
};

// The first field of a kind that is missing or inconsistent: the job key to
// change and why; key empty when the kind is complete.
struct KindProblem {
    std::string key;
    std::string message;
};

// A kind's functions, defined in src/job/mixers/<name>.cpp.
struct MixerFns {
    MixerCount (*count)(const LayerKind& k, double h);
    // Forward FLOPs per token of its core (attention scores and values, a scan).
    double (*core_flops)(const LayerKind& k, int64_t seq, bool causal);
    void (*on_rank)(const LayerKind& k, const MixerRank& r, MixerOnRank& out);
    KindProblem (*problem)(const LayerKind& k);
    // Why tensor parallelism of tp cannot split it; "" when it can.
    std::string (*tp_problem)(const LayerKind& k, int64_t tp);
    // Its shape as describe() prints it after the name: "(32x128, kv 8)".
    std::string (*shape_text)(const LayerKind& k);
};
extern const MixerFns kAttentionMixer, kMlaMixer, kMamba2Mixer, kMamba1Mixer, kGatedDeltaNetMixer, kLightningMixer,
    kNoMixer;

// How Megatron-LM's flags write a layer of the kind (interop/megatron_export_model.cpp).
enum class MegatronMixer : uint8_t {
    attention,         // softmax attention: --num-attention-heads and its groups
    mla,               // --multi-latent-attention and its ranks
    mamba,             // a hybrid pattern's M (--hybrid-layer-pattern)
    linear_attention,  // --experimental-attention-variant gated_delta_net
    none,              // a hybrid pattern's - or E
};

// Framework hf refuses the linear mixers by this name (MixerRow::not_in_eager_ledger).
inline constexpr const char* kLinearInEager = "state-space or linear-attention";

struct MixerRow {
    MixerKind kind;
    const char* name;     // as printed and in the job JSON
    const char* needs;    // fields that must be > 0
    const char* params;   // parameter count (biases, norms per the flags)
    const char* flops;    // forward FLOPs per token beyond 2 x GEMM weights
    const char* source;
    const MixerFns* fns;
    // Softmax attention over keys (LayerKind::has_attention): flash or
    // unfused kernels, selective recompute's core_attn, context parallelism's
    // ring or all-to-all.
    bool softmax;
    // Megatron-Core's TE layer spec keeps the block's norm a module of its
    // own (gpt_layer_specs.py: MLA), which recompute_modules layernorm redoes.
    bool norm_module;
    // Megatron-Core's mla_up_proj recompute module applies to it.
    bool up_proj_module;
    // Its context-parallel traffic is priced (false: estimate warns).
    bool cp_modelled;
    // What framework hf's eager ledger (workload/eager_ledger.cpp) lacks for
    // it, as the refusal names it; nullptr: covered.
    const char* not_in_eager_ledger;
    MegatronMixer megatron;
    // What export megatron notes of it; nullptr: written as itself.
    const char* megatron_note;
};

inline constexpr std::array<MixerRow, 7> kMixerRows{{
    {MixerKind::attention, "attention", "heads, kv_heads (divides heads), head_dim",
     "h*d*(2a + 2g) [+ h*a*d output gate] [+ d*(a+2g) qkv bias] [+ h out bias] [+ a sinks] [+ 2d qk norm]",
     "2*a*(d + d)*k (scores QK^T and values PV)",
     "Vaswani et al. 2017; GQA Ainslie et al. 2023; Megatron-LM num_floating_point_operations",
     &kAttentionMixer, true, false, false, true, nullptr, MegatronMixer::attention, nullptr},
    {MixerKind::mla, "mla", "heads, kv_lora_rank, head_dim > qk_rope_head_dim, v_head_dim",
     "q: h*a*d or h*rq + rq + rq*a*d; kv: h*(rkv + dr) + rkv + rkv*a*(d - dr + dv); out: a*dv*h",
     "2*a*(d + dv)*k (keys and values up-projected, as trained)",
     "DeepSeek-V2 report arXiv 2405.04434 sec. 2.1 (eq. 9-19); HF modeling_deepseek_v3.py",
     &kMlaMixer, true, true, true, true, "multi-head latent attention", MegatronMixer::mla, nullptr},
    {MixerKind::mamba2, "mamba2", "heads, head_dim, groups, state_dim",
     "in_proj h*(2*di + 2*G*N + H) + conv (di + 2*G*N)*(kernel [+1]) + 3H (dt_bias, A_log, D) + di (norm) + di*h",
     "7*di*N (the scan, as Megatron-LM counts it)",
     "Dao & Gu 2024 arXiv 2405.21060; Megatron-LM training.py mamba_layer_flops; HF modeling_nemotron_h.py",
     &kMamba2Mixer, false, false, false, false, kLinearInEager, MegatronMixer::mamba, nullptr},
    {MixerKind::mamba1, "mamba1", "heads (d_inner), state_dim, dt_rank",
     "in_proj h*2*di [+ 2di bias] + conv di*kernel [+ di] + x_proj di*(R + 2N) + dt_proj R*di + di + A_log di*N + D di "
     "+ out_proj di*h [+ h bias] [+ R + 2N inner norms]",
     "7*di*N (the selective scan's recurrence, counted as Megatron-LM counts Mamba-2's)",
     "Gu & Dao 2023 arXiv 2312.00752 (alg. 2); HF modeling_mamba.py MambaMixer, modeling_falcon_mamba.py, "
     "modeling_jamba.py JambaMambaMixer",
     &kMamba1Mixer, false, false, false, false, kLinearInEager, MegatronMixer::mamba,
     "Mamba-1 has no Megatron flag (Megatron-Core's MambaMixer is Mamba-2's SSD); those layers are written as "
     "Mamba-2 layers (M) with Megatron's default mixer shape"},
    {MixerKind::gated_deltanet, "gated_deltanet", "heads, head_dim, groups (divides heads), state_dim",
     "h*(2*gN + 2*Hd) + h*2H + (2*gN + Hd)*kernel + 2H (dt_bias, A_log) + d (norm) + Hd*h",
     "4*H*N*d (state readout and update) + 2*kernel*(2*gN + Hd) (conv)",
     "Yang et al. 2024 arXiv 2412.06464; Megatron-Bridge flop_utils.py gdn_layer_flops; HF modeling_qwen3_next.py",
     &kGatedDeltaNetMixer, false, false, false, false, kLinearInEager, MegatronMixer::linear_attention, nullptr},
    {MixerKind::lightning, "lightning", "heads, head_dim",
     "h*3*a*d (qkv) + h*a*d (output gate) + a*d*h + a*d (norm)",
     "a*(4*d*d + 4*d*kb) with kb = keys of a query within its block",
     "MiniMax-01 report arXiv 2501.08313 sec. 2.2; HF modeling_minimax.py MiniMaxLightningAttention (block_size 256)",
     &kLightningMixer, false, false, false, false, kLinearInEager, MegatronMixer::attention,
     "lightning attention has no Megatron flag; those layers are written as softmax attention"},
    {MixerKind::none, "none", "", "0", "0", "Nemotron-H hybrid_override_pattern '-' (arXiv 2504.03624)",
     &kNoMixer, false, false, false, true, nullptr, MegatronMixer::none, nullptr},
}};

// MLP forms: dense 2*h*f (+ f + h bias), gated 3*h*f (+ 2f + h bias); MoE:
// router h*E (+ E bias) (+ E score bias) + E experts + shared MLP of width
// shared_ffn (+ h gate); a token uses K experts and the shared ones.
struct MlpRow {
    MlpKind kind;
    const char* name;
    int matrices;
};
inline constexpr std::array<MlpRow, 3> kMlpRows{{
    {MlpKind::none, "none", 0},
    {MlpKind::dense, "dense", 2},
    {MlpKind::gated, "gated", 3},
}};

// Row i is kind i; none is the last kind.
static_assert([] {
    for (size_t i = 0; i < kMixerRows.size(); ++i)
        if (static_cast<size_t>(kMixerRows[i].kind) != i) return false;
    return kMixerRows.back().kind == MixerKind::none;
}());
inline const MixerRow& mixer_row(MixerKind k) { return kMixerRows[static_cast<size_t>(k)]; }
inline const MixerFns& mixer_fns(MixerKind k) { return *mixer_row(k).fns; }

// The first field of `k` that is missing or inconsistent, its mixer's
// (MixerFns::problem) or its MLP's; key empty when complete. `hidden` is the model's.
KindProblem kind_problem(const LayerKind& k, int64_t hidden);

}  // namespace lostflops
