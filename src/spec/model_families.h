// What a Hugging Face `model_type` fixes that its config.json does not say:
// each family's modelling code (transformers/models/<family>/modeling_*.py and
// configuration_*.py, and the models' own remote code) decides the defaults of
// absent keys, the norms, the biases and the fixed extras of its layers. One
// row per family; a job without `model_type` gets kDefaultFamily (the
// behaviour of hand-written job files: Hugging Face PretrainedConfig's
// tie_word_embeddings default true, MLP gated for silu/swiglu/geglu).
#pragma once

#include <string_view>

#include "lostflops/model.h"

namespace lostflops {

enum class MlpRule : uint8_t {
    by_activation,  // gated for silu / swiglu / geglu, dense otherwise
    gated,          // gate, up, down whatever the activation (Llama, Gemma, Qwen, DeepSeek, Mixtral...)
    dense,          // up, down (GPT-NeoX, Falcon, Nemotron-H)
};
enum class BiasRule : uint8_t {
    by_keys,        // attention_bias: q, k, v and o; mlp_bias: the MLP (Llama and most)
    qkv_always,     // q, k, v biases, none elsewhere (Qwen2: hard-coded in Qwen2Attention)
    qkv_by_key,     // attention_bias: q, k, v only; o has none (GLM-4 MoE: Glm4MoeAttention)
    all_always,     // every linear layer (GPT-NeoX)
    by_bias_key,    // `bias`: every linear layer (Falcon)
    by_use_bias,    // `use_bias`: attention and MLP projections (Nemotron-H)
};
enum class WindowRule : uint8_t {
    every_layer,    // sliding_window, when set, on every layer (Mistral, Mixtral, Phi-3)
    qwen,           // only with use_sliding_window, on layers >= max_window_layers (Qwen2 / Qwen3)
    alternate,      // even layers local, odd layers global (Gemma 2: layer_idx % 2 == 0 slides)
    pattern,        // every sliding_window_pattern-th layer global, default 6 (Gemma 3)
};

struct ModelFamily {
    const char* model_type;
    bool tied = true;               // tie_word_embeddings when absent
    NormKind norm = NormKind::rms;
    int norms = 2;                  // norms per layer
    MlpRule mlp = MlpRule::by_activation;
    BiasRule bias = BiasRule::by_keys;
    WindowRule window = WindowRule::every_layer;
    bool qk_norm = false;           // RMSNorm(head_dim) on queries and keys
    bool sinks = false;             // per-head attention sinks
    bool output_gate = false;       // gated attention output
    bool shared_gate = false;       // sigmoid gate on the shared expert
    bool router_bias = false;
    bool expert_bias = false;       // biases on the experts' projections
    bool score_bias = false;        // per-expert score-correction bias always (GLM-4 MoE); DeepSeek: topk_method noaux_tc
    bool experts_use_ffn = false;   // routed experts are intermediate_size wide (no moe_intermediate_size)
    bool shared_is_ffn = false;     // one shared expert of intermediate_size (Llama 4)
    bool fused_qkv = false;         // one query/key/value projection (model.h Attention::fused_qkv)
    bool fused_gate_up = false;     // one gate/up projection (model.h Mlp::fused_gate_up)
};

inline constexpr ModelFamily kDefaultFamily{.model_type = ""};

// Sources: transformers modeling_<family>.py / configuration_<family>.py at
// 4.57; Nemotron-H, MiniMax-M1 and DBRX remote code as their configs name it.
inline constexpr ModelFamily kFamilies[] = {
    {.model_type = "llama", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "mistral", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "mixtral", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "phi3", .tied = false, .mlp = MlpRule::gated, .fused_qkv = true, .fused_gate_up = true},
    {.model_type = "qwen2", .tied = false, .mlp = MlpRule::gated, .bias = BiasRule::qkv_always, .window = WindowRule::qwen},
    {.model_type = "qwen2_moe", .tied = false, .mlp = MlpRule::gated, .bias = BiasRule::qkv_always,
     .window = WindowRule::qwen, .shared_gate = true},
    {.model_type = "qwen3", .tied = false, .mlp = MlpRule::gated, .window = WindowRule::qwen, .qk_norm = true},
    {.model_type = "qwen3_moe", .tied = false, .mlp = MlpRule::gated, .window = WindowRule::qwen, .qk_norm = true},
    {.model_type = "qwen3_next", .tied = false, .mlp = MlpRule::gated, .window = WindowRule::qwen, .qk_norm = true,
     .output_gate = true, .shared_gate = true},
    {.model_type = "gemma", .tied = true, .mlp = MlpRule::gated},
    {.model_type = "gemma2", .tied = true, .norms = 4, .mlp = MlpRule::gated, .window = WindowRule::alternate},
    {.model_type = "gemma3_text", .tied = true, .norms = 4, .mlp = MlpRule::gated, .window = WindowRule::pattern,
     .qk_norm = true},
    {.model_type = "deepseek_v2", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "deepseek_v3", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "kimi_k2", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "glm4_moe", .tied = false, .mlp = MlpRule::gated, .bias = BiasRule::qkv_by_key, .score_bias = true},
    {.model_type = "gpt_oss", .tied = false, .mlp = MlpRule::gated, .sinks = true, .router_bias = true,
     .expert_bias = true, .experts_use_ffn = true},
    {.model_type = "llama4_text", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true, .shared_is_ffn = true},
    {.model_type = "llama4", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true, .shared_is_ffn = true},
    {.model_type = "dbrx", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "minimax_m1", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "minimax", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "nemotron_h", .tied = false, .norms = 1, .mlp = MlpRule::dense, .bias = BiasRule::by_use_bias},
    {.model_type = "gpt_neox", .tied = false, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .fused_qkv = true},
    // GPT-2 (modeling_gpt2.py): Conv1D c_attn makes q, k and v; LayerNorm with
    // bias; every projection biased; dense GELU MLP; tied output layer.
    {.model_type = "gpt2", .tied = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .fused_qkv = true},
    {.model_type = "falcon", .tied = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::by_bias_key, .fused_qkv = true},
    {.model_type = "RefinedWeb", .tied = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::by_bias_key},
    {.model_type = "RefinedWebModel", .tied = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::by_bias_key},
    {.model_type = "olmo", .tied = false, .norm = NormKind::none, .mlp = MlpRule::gated},
    {.model_type = "olmo2", .tied = false, .mlp = MlpRule::gated},
};

// The family of `model_type`, or nullptr when it is not in the table.
inline const ModelFamily* model_family(std::string_view model_type) {
    for (const auto& f : kFamilies)
        if (model_type == f.model_type) return &f;
    return nullptr;
}

}  // namespace lostflops
