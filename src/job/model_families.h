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
    by_use_bias,    // `use_bias`: attention and MLP projections (Nemotron-H, StarCoder2)
    mlp_always,     // the MLP's two projections, none in attention (GPT-J: fc_in / fc_out)
    attn_by_bias_key,  // `bias`: query/key/value and output projections; the MLP has none (InternLM2)
};
// Learned absolute position embeddings (Model::positions).
enum class PositionRule : uint8_t {
    none,           // rotary (the family's share, Model::rotary_share) or none: no parameters
    alibi,          // ALiBi: a bias on the scores, no rotary (BLOOM; Falcon's alibi key)
    nope,           // no position signal in attention (JambaAttention; NemotronHAttention copies it)
    n_positions,    // n_positions x hidden (GPT-2 wpe; GPT2Config default 1024)
    opt,            // (max_position_embeddings + 2) x hidden (OPTLearnedPositionalEmbedding's offset of 2)
};
enum class WindowRule : uint8_t {
    every_layer,    // sliding_window, when set, on every layer (Mistral, Mixtral, Phi-3)
    qwen,           // only with use_sliding_window, on layers >= max_window_layers (Qwen2 / Qwen3)
    alternate,      // even layers local, odd layers global (Gemma 2: layer_idx % 2 == 0 slides)
    pattern,        // every sliding_window_pattern-th layer global, default 6 (Gemma 3)
};

// State-space layers of the family (model_layers.cpp read_layer_pattern).
enum class SsmRule : uint8_t {
    none,
    mamba1,  // every layer a Mamba-1 mixer and no MLP (MambaBlock: norm, mixer; modeling_mamba.py, modeling_falcon_mamba.py)
    jamba,   // Mamba-1 but attention on layers i % attn_layer_period == attn_layer_offset, MoE on
             // i % expert_layer_period == expert_layer_offset, a gated MLP elsewhere (modeling_jamba.py)
};

struct ModelFamily {
    const char* model_type;
    bool tied = true;               // tie_word_embeddings when absent
    // The configuration class's default residual dropout is above 0
    // (GPT2Config resid_pdrop 0.1, GPTBigCodeConfig resid_pdrop 0.1,
    // OPTConfig dropout 0.1); the other families default to 0.0
    // (GPTJConfig resid_pdrop, GPTNeoXConfig / BloomConfig / FalconConfig
    // hidden_dropout, PhiConfig resid_pdrop, Starcoder2Config residual_dropout).
    bool dropout = false;
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
    // The activation key the family's code reads (the others, when they
    // disagree, are warned and left out) and its default when absent
    // (nullptr: silu for a gated MLP, gelu otherwise).
    const char* act_key = "hidden_act";
    const char* default_act = nullptr;
    PositionRule positions = PositionRule::none;
    bool one_norm_if_parallel = false;  // use_parallel_residual: no post-attention norm (StableLM)
    SsmRule ssm = SsmRule::none;
    // Not modelled at all: the config is refused with this reason.
    const char* refused = nullptr;
    // The share of each head's q and k dims rotary rotates when the config
    // says none (partial_rotary_factor, rotary_pct, rotary_dim): the
    // family's configuration class default (Model::rotary_share).
    double rotary = 1;
    int rotary_dim = 0;  // the same in dims of a head (GPTJConfig rotary_dim 64); 0: `rotary` applies
    // The fused attention transformers has for the family (Model::hf_fused):
    // SDPA, its default (the attention-interface families); otherwise the
    // family's own eager attention, scores in memory, is its default
    // (Model::hf_eager_scores; a config's attn_implementation changes it,
    // model_positions.cpp) and flash_attention_2 (GPT-J; InternLM2's remote
    // code) or nothing (BLOOM) the other path.
    Model::HfFused scores = Model::HfFused::sdpa;
    // Its eager attention between the two matmuls (Model::hf_eager_chain,
    // priced in workload/layer_work.cpp): bytes per score element forward
    // under 16-bit autocast, and kernels beyond a fused softmax's two. 32 and
    // 2: transformers' eager_attention_forward (matmul, * scaling, + the fp32
    // causal mask, softmax in fp32, .to(bf16), matmul: 2 + 4 + 10 + 8 + 6 + 2)
    // and GPT-J's _attn (/ scale_attn in place of * scaling), dropout p 0
    // launching nothing (ATen Dropout.cpp _dropout_impl); BLOOM's 40 and 3
    // on its row. In a bf16 model (FSDP2) the mask is bf16: 2 + 4 + 6
    // (2 + 2, writes 2) + 6 (softmax reads bf16, writes fp32) + 6 + 2 = 26,
    // kernels as many. GPT-J's _attn casts query and key .to(float32): under
    // autocast the matmul still runs in bf16 (32, as above), in a bf16 model
    // it writes fp32 scores: 4 + 8 + 10 + 8 + 6 + 2 = 38 (the fp32 matmul's
    // own speed is not priced). BLOOM's baddbmm and fp32 softmax keep 40.
    uint8_t eager_score_bytes = 32;
    uint8_t eager_score_kernels = 2;
    uint8_t eager_score_bf16_bytes = 26;
    uint8_t eager_score_bf16_kernels = 2;
};

// A job without `model_type` (a hand-written model): Hugging Face
// PretrainedConfig's tie_word_embeddings default true, MLP gated for
// silu/swiglu/geglu. The warning's words for a model_type not in kFamilies
// are kUnknownFamilyReading; it is read as kUnknownFamily.
inline constexpr ModelFamily kDefaultFamily{.model_type = ""};
// An unknown model_type is read as Llama (modeling_llama.py, configuration_llama.py:
// hidden_act default silu, tie_word_embeddings default false), the shape most
// remote-code models copy, and said so.
inline constexpr ModelFamily kUnknownFamily{.model_type = "", .tied = false, .default_act = "silu"};
inline constexpr const char* kUnknownFamilyReading =
    "read as Llama-like: RMSNorm, two norms per layer, a gated MLP (gate, up, down) for silu/swiglu/geglu or "
    "hidden_act absent (Llama's default silu), two matrices for other activations, biases only where "
    "attention_bias/mlp_bias say, rotary on all of q and k unless partial_rotary_factor, rotary_pct or "
    "rotary_dim say a share (none with alibi), output layer untied unless tie_word_embeddings";

// Sources: transformers modeling_<family>.py / configuration_<family>.py at
// 4.57; Nemotron-H, MiniMax-M1, DBRX, Baichuan, ChatGLM, InternLM2, EXAONE,
// MiniCPM, DeepSeek-MoE and DeciLM remote code as their configs name it.
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
    {.model_type = "gemma2", .tied = true, .norms = 4, .mlp = MlpRule::gated, .window = WindowRule::alternate,
     .act_key = "hidden_activation"},
    {.model_type = "gemma3_text", .tied = true, .norms = 4, .mlp = MlpRule::gated, .window = WindowRule::pattern,
     .qk_norm = true, .act_key = "hidden_activation"},
    {.model_type = "deepseek_v2", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "deepseek_v3", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "kimi_k2", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "glm4_moe", .tied = false, .mlp = MlpRule::gated, .bias = BiasRule::qkv_by_key, .score_bias = true},
    // gpt-oss (modeling_gpt_oss.py): no SDPA path (_supports_sdpa False: SDPA
    // has no sinks), so transformers runs its eager_attention_forward unless
    // told a flash kernel (corrected to kernels-community/vllm-flash-attn3)
    // or flex_attention. Its chain under 16-bit autocast, per score element
    // forward: the matmul writes bf16 scores (2), * scaling (2 + 2), + the
    // fp32 mask (2 + 4, writes 4), torch.cat with the sinks (4 + 4),
    // .max(-1) (4), the subtraction (4 + 4), softmax in fp32 (4 + 4), the
    // second matmul's bf16 cast of the sliced probabilities (4 + 2) and its
    // read (2): 52 bytes, seven kernels against a fused softmax's two. In a
    // bf16 model everything is bf16 and the softmax keeps it (no cast):
    // 2 + 4 + 6 + 4 + 2 + 4 + 4 + 2 = 28, six kernels.
    {.model_type = "gpt_oss", .tied = false, .mlp = MlpRule::gated, .sinks = true, .router_bias = true,
     .expert_bias = true, .experts_use_ffn = true, .scores = Model::HfFused::sink_kernels, .eager_score_bytes = 52,
     .eager_score_kernels = 5, .eager_score_bf16_bytes = 28, .eager_score_bf16_kernels = 4},
    {.model_type = "llama4_text", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true, .shared_is_ffn = true},
    {.model_type = "llama4", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true, .shared_is_ffn = true},
    {.model_type = "dbrx", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "minimax_m1", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "minimax", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "nemotron_h", .tied = false, .norms = 1, .mlp = MlpRule::dense, .bias = BiasRule::by_use_bias,
     .act_key = "mlp_hidden_act", .positions = PositionRule::nope},
    // GPTNeoXConfig rotary_pct default 0.25.
    {.model_type = "gpt_neox", .tied = false, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .fused_qkv = true, .rotary = 0.25},
    // GPT-2 (modeling_gpt2.py): Conv1D c_attn makes q, k and v; LayerNorm with
    // bias; every projection biased; dense GELU MLP; tied output layer.
    {.model_type = "gpt2", .tied = true, .dropout = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .fused_qkv = true, .act_key = "activation_function", .default_act = "gelu_new",
     .positions = PositionRule::n_positions},
    // GPT-BigCode (modeling_gpt_bigcode.py): GPT-2's layer with multi_query
    // (c_attn makes the queries and one key/value head); wpe of n_positions.
    {.model_type = "gpt_bigcode", .tied = true, .dropout = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .fused_qkv = true, .act_key = "activation_function",
     .default_act = "gelu_pytorch_tanh", .positions = PositionRule::n_positions},
    // GPT-J (modeling_gptj.py): q/k/v/out_proj without bias, fc_in/fc_out with
    // bias, attention and MLP side by side after one ln_1; untied
    // (GPTJConfig tie_word_embeddings false). Its lm_head bias (vocab_size
    // parameters, 0.001 % of GPT-J 6B) is not counted.
    // GPTJAttention has no SDPA path (eager, or flash_attention_2 when asked):
    // its _attn keeps the scores in memory.
    {.model_type = "gptj", .tied = false, .norm = NormKind::layer_bias, .norms = 1, .mlp = MlpRule::dense,
     .bias = BiasRule::mlp_always, .act_key = "activation_function", .default_act = "gelu_new", .rotary_dim = 64,
     .scores = Model::HfFused::flash_attention_2, .eager_score_bf16_bytes = 38},
    // BLOOM (modeling_bloom.py): fused query_key_value, every linear layer
    // biased, dense_h_to_4h fixed at 4 x hidden, tanh-approximated GELU
    // (bloom_gelu_forward), ALiBi; the word_embeddings_layernorm (2 x hidden) is not counted;
    // BloomAttention computes its scores with baddbmm (no SDPA path).
    {.model_type = "bloom", .tied = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .fused_qkv = true, .default_act = "gelu_new", .positions = PositionRule::alibi,
     .scores = Model::HfFused::none, .eager_score_bytes = 40, .eager_score_kernels = 3, .eager_score_bf16_bytes = 40,
     .eager_score_bf16_kernels = 3},
    // OPT (modeling_opt.py): every projection biased (enable_bias default
    // true), ReLU MLP of ffn_dim, learned positions with an offset of 2,
    // embeddings of word_embed_proj_dim with project_in/project_out.
    {.model_type = "opt", .tied = true, .dropout = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .act_key = "activation_function", .default_act = "relu",
     .positions = PositionRule::opt},
    // Phi-1/2 (modeling_phi.py): q/k/v/dense and fc1/fc2 biased, attention
    // and MLP side by side after one input_layernorm; lm_head bias (vocab_size)
    // not counted; PhiConfig partial_rotary_factor default 0.5.
    {.model_type = "phi", .tied = false, .norm = NormKind::layer_bias, .norms = 1, .mlp = MlpRule::dense,
     .bias = BiasRule::all_always, .default_act = "gelu_new", .rotary = 0.5},
    // PhiMoE (modeling_phimoe.py): LayerNorms with bias, Mixtral-style
    // experts of intermediate_size; lm_head_bias (vocab_size) not counted.
    {.model_type = "phimoe", .tied = false, .norm = NormKind::layer_bias, .mlp = MlpRule::gated,
     .experts_use_ffn = true},
    // StableLM (modeling_stablelm.py): LayerNorms with bias, q/k/v biased by
    // use_qkv_bias, gated MLP, one norm with use_parallel_residual;
    // StableLmConfig partial_rotary_factor default 0.25.
    {.model_type = "stablelm", .tied = false, .norm = NormKind::layer_bias, .mlp = MlpRule::gated,
     .one_norm_if_parallel = true, .rotary = 0.25},
    // StarCoder2 (modeling_starcoder2.py): LayerNorms with bias, use_bias on
    // every projection, c_fc/c_proj MLP of hidden_act (activation_function
    // is not read), tied (Starcoder2Config default).
    {.model_type = "starcoder2", .tied = true, .norm = NormKind::layer_bias, .mlp = MlpRule::dense,
     .bias = BiasRule::by_use_bias, .default_act = "gelu_pytorch_tanh"},
    // Cohere (modeling_cohere.py): LayerNorm without bias (a weight of
    // hidden), attention and MLP side by side after one input_layernorm, tied
    // (CohereConfig default). use_qk_norm's per-head norms are not counted.
    {.model_type = "cohere", .tied = true, .norms = 1, .mlp = MlpRule::gated},
    // ChatGLM2/3 (THUDM remote modeling_chatglm.py): fused query_key_value
    // biased by add_qkv_bias, add_bias_linear on dense and the MLP, SwiGLU
    // (dense_h_to_4h is 2 x ffn_hidden_size), untied output_layer; rotary on
    // half of each head (RotaryEmbedding(rotary_dim // 2)).
    {.model_type = "chatglm", .tied = false, .mlp = MlpRule::gated, .fused_qkv = true, .rotary = 0.5},
    // Llama-shaped remote-code families, each from its modeling_*.py:
    // Baichuan (W_pack: one q/k/v projection), InternLM2 (wqkv, `bias` on
    // wqkv and wo only), EXAONE 3 (activation_function), MiniCPM (tied;
    // experts of intermediate_size), DeepSeek-MoE (DeepseekMoE), DeciLM /
    // Nemotron-NAS (per-layer block_configs: job/model_blocks.cpp).
    {.model_type = "baichuan", .tied = false, .mlp = MlpRule::gated, .fused_qkv = true},
    // InternLM2's remote InternLM2Config falls back to attn_implementation
    // "eager" (its classes: eager and flash_attention_2, no SDPA).
    {.model_type = "internlm2", .tied = false, .mlp = MlpRule::gated, .bias = BiasRule::attn_by_bias_key,
     .fused_qkv = true, .scores = Model::HfFused::flash_attention_2},
    {.model_type = "exaone", .tied = false, .mlp = MlpRule::gated, .act_key = "activation_function"},
    {.model_type = "minicpm", .tied = true, .mlp = MlpRule::gated, .experts_use_ffn = true},
    {.model_type = "deepseek", .tied = false, .mlp = MlpRule::gated},
    {.model_type = "nemotron-nas", .tied = false, .mlp = MlpRule::gated},
    // Gemma 3's multimodal config (Gemma3ForConditionalGeneration): its
    // text_config is gemma3_text's; the vision tower is warned as not modelled.
    {.model_type = "gemma3", .tied = true, .norms = 4, .mlp = MlpRule::gated, .window = WindowRule::pattern,
     .qk_norm = true, .act_key = "hidden_activation"},
    // Mamba-1 mixers (selective scan; modeling_mamba.py MambaMixer, MambaConfig
    // tie_word_embeddings default true; modeling_falcon_mamba.py, whose extra
    // B/C/dt RMSNorms have no weights; modeling_jamba.py JambaMambaMixer with
    // weighted dt/B/C RMSNorms, JambaConfig tie_word_embeddings default false).
    {.model_type = "mamba", .tied = true, .norms = 1, .ssm = SsmRule::mamba1},
    {.model_type = "falcon_mamba", .tied = true, .norms = 1, .ssm = SsmRule::mamba1},
    {.model_type = "jamba", .tied = false, .mlp = MlpRule::gated, .experts_use_ffn = true,
     .positions = PositionRule::nope, .ssm = SsmRule::jamba},
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
