// The table of layer kinds: each token mixer and each MLP form, its name, the
// fields it needs (checked by job/validate.cpp through kind_problem) and how
// workload/flops.cpp counts it. Parameters are every weight, bias and norm
// vector of the block; FLOPs per token count 2 per multiply-add of the GEMMs a
// token passes through plus the mixer's own core. Symbols: h hidden, a heads,
// g kv heads / groups, d head_dim, dv v_head_dim, s sequence, k keys a query
// sees (attention_keys in workload/flops.h), E experts, K top-k, f widths.
// One row per kind; a new kind is a row here, a case in flops.cpp and
// layer_work.cpp, and a test in tests/workload.
#pragma once

#include <array>
#include <string>

#include "lostflops/model.h"

namespace lostflops {

struct MixerRow {
    MixerKind kind;
    const char* name;     // as printed and in the job JSON
    const char* needs;    // fields that must be > 0
    const char* params;   // parameter count (biases, norms per the flags)
    const char* flops;    // forward FLOPs per token beyond 2 x GEMM weights
    const char* source;
};

inline constexpr std::array<MixerRow, 7> kMixerRows{{
    {MixerKind::attention, "attention", "heads, kv_heads (divides heads), head_dim",
     "h*d*(2a + 2g) [+ h*a*d output gate] [+ d*(a+2g) qkv bias] [+ h out bias] [+ a sinks] [+ 2d qk norm]",
     "2*a*(d + d)*k (scores QK^T and values PV)",
     "Vaswani et al. 2017; GQA Ainslie et al. 2023; Megatron-LM num_floating_point_operations"},
    {MixerKind::mla, "mla", "heads, kv_lora_rank, head_dim > qk_rope_head_dim, v_head_dim",
     "q: h*a*d or h*rq + rq + rq*a*d; kv: h*(rkv + dr) + rkv + rkv*a*(d - dr + dv); out: a*dv*h",
     "2*a*(d + dv)*k (keys and values up-projected, as trained)",
     "DeepSeek-V2 report arXiv 2405.04434 sec. 2.1 (eq. 9-19); HF modeling_deepseek_v3.py"},
    {MixerKind::mamba2, "mamba2", "heads, head_dim, groups, state_dim",
     "in_proj h*(2*di + 2*G*N + H) + conv (di + 2*G*N)*(kernel [+1]) + 3H (dt_bias, A_log, D) + di (norm) + di*h",
     "7*di*N (the scan, as Megatron-LM counts it)",
     "Dao & Gu 2024 arXiv 2405.21060; Megatron-LM training.py mamba_layer_flops; HF modeling_nemotron_h.py"},
    {MixerKind::mamba1, "mamba1", "heads (d_inner), state_dim, dt_rank",
     "in_proj h*2*di [+ 2di bias] + conv di*kernel [+ di] + x_proj di*(R + 2N) + dt_proj R*di + di + A_log di*N + D di "
     "+ out_proj di*h [+ h bias] [+ R + 2N inner norms]",
     "7*di*N (the selective scan's recurrence, counted as Megatron-LM counts Mamba-2's)",
     "Gu & Dao 2023 arXiv 2312.00752 (alg. 2); HF modeling_mamba.py MambaMixer, modeling_falcon_mamba.py, "
     "modeling_jamba.py JambaMambaMixer"},
    {MixerKind::gated_deltanet, "gated_deltanet", "heads, head_dim, groups (divides heads), state_dim",
     "h*(2*gN + 2*Hd) + h*2H + (2*gN + Hd)*kernel + 2H (dt_bias, A_log) + d (norm) + Hd*h",
     "4*H*N*d (state readout and update) + 2*kernel*(2*gN + Hd) (conv)",
     "Yang et al. 2024 arXiv 2412.06464; Megatron-Bridge flop_utils.py gdn_layer_flops; HF modeling_qwen3_next.py"},
    {MixerKind::lightning, "lightning", "heads, head_dim",
     "h*3*a*d (qkv) + h*a*d (output gate) + a*d*h + a*d (norm)",
     "a*(4*d*d + 4*d*kb) with kb = keys of a query within its block",
     "MiniMax-01 report arXiv 2501.08313 sec. 2.2; HF modeling_minimax.py MiniMaxLightningAttention (block_size 256)"},
    {MixerKind::none, "none", "", "0", "0", "Nemotron-H hybrid_override_pattern '-' (arXiv 2504.03624)"},
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

inline const MixerRow& mixer_row(MixerKind k) { return kMixerRows[static_cast<size_t>(k)]; }

// The first field of `k` that is missing or inconsistent: the job key to
// change and why; key empty when the kind is complete. `hidden` is the model's.
struct KindProblem {
    std::string key;
    std::string message;
};
KindProblem kind_problem(const LayerKind& k, int64_t hidden);

}  // namespace lostflops
