// The keys of the `model:` section and of a Hugging Face config.json
// (`hf_config:`): each is read into the model, ignored because it does not
// change the cost (the reason is given), or known to change the cost without
// being modelled (warned "not modelled: KEY"; --strict makes it an error).
// A config.json key in none of these is warned as not modelled too; a key of
// the job's own `model:` section in none of them is an error. Nested maps:
// `text_config` (Llama 4) is read as if its keys were the model's; DBRX's
// `ffn_config` and `attn_config` are read as dotted keys. docs/job-file.md
// documents the same lists.
#pragma once

#include <string_view>

namespace lostflops {

enum class KeyUse { read, ignored, not_modelled };

struct ModelKeyRow {
    const char* key;
    KeyUse use;
    const char* note;  // read: what it sets; ignored: why it does not change the cost; not_modelled: what is missing
};

namespace model_key_notes {
inline constexpr const char* kMeta = "a label or bookkeeping";
inline constexpr const char* kInference = "inference only (cache, generation, serving)";
inline constexpr const char* kPosition = "positions (rotary tables, scaling, context length): negligible work";
inline constexpr const char* kInit = "initialisation or numerics (epsilon, scale, clamp): negligible work";
inline constexpr const char* kRouting = "routing arithmetic or its loss: negligible next to the experts";
inline constexpr const char* kDropout = "dropout: kept for two-matrix (GPT-style) MLPs and none for gated ones";
inline constexpr const char* kFormat = "the checkpoint's storage format; training precision is training.precision";
}  // namespace model_key_notes

inline constexpr ModelKeyRow kModelKeys[] = {
    // The shape.
    {"num_hidden_layers", KeyUse::read, "decoder layers (aliases n_layer, n_layers, num_layers)"},
    {"n_layer", KeyUse::read, "= num_hidden_layers"},
    {"n_layers", KeyUse::read, "= num_hidden_layers"},
    {"num_layers", KeyUse::read, "= num_hidden_layers"},
    {"hidden_size", KeyUse::read, "hidden size (aliases d_model, n_embd)"},
    {"d_model", KeyUse::read, "= hidden_size"},
    {"n_embd", KeyUse::read, "= hidden_size (GPT-2)"},
    {"intermediate_size", KeyUse::read, "dense MLP width (default 4 x hidden); experts' width where the family has no moe_intermediate_size"},
    {"ffn_hidden_size", KeyUse::read, "= intermediate_size"},
    {"n_inner", KeyUse::read, "= intermediate_size (GPT-2; null: 4 x hidden)"},
    {"intermediate_size_mlp", KeyUse::read, "Llama 4: width of the dense MLP layers"},
    {"num_attention_heads", KeyUse::read, "attention heads (aliases n_head, n_heads)"},
    {"n_head", KeyUse::read, "= num_attention_heads"},
    {"n_heads", KeyUse::read, "= num_attention_heads"},
    {"num_key_value_heads", KeyUse::read, "key/value heads (default: heads; aliases num_kv_heads, n_head_kv)"},
    {"num_kv_heads", KeyUse::read, "= num_key_value_heads"},
    {"n_head_kv", KeyUse::read, "= num_key_value_heads"},
    {"multi_query", KeyUse::read, "Falcon: one key/value head"},
    {"head_dim", KeyUse::read, "attention head dim (default hidden / heads; alias attention_head_dim, kv_channels)"},
    {"attention_head_dim", KeyUse::read, "= head_dim"},
    {"kv_channels", KeyUse::read, "= head_dim (Megatron-LM's name)"},
    {"vocab_size", KeyUse::read, "vocabulary"},
    {"hidden_act", KeyUse::read, "MLP activation (aliases hidden_activation, mlp_hidden_act, activation_function)"},
    {"hidden_activation", KeyUse::read, "= hidden_act"},
    {"mlp_hidden_act", KeyUse::read, "= hidden_act"},
    {"activation_function", KeyUse::read, "= hidden_act"},
    {"tie_word_embeddings", KeyUse::read, "output layer shares the embedding (default: the family's, else true)"},
    {"model_type", KeyUse::read, "the family: its defaults and fixed structure (src/spec/model_families.h)"},
    {"attention_bias", KeyUse::read, "biases on the attention projections"},
    {"mlp_bias", KeyUse::read, "biases on the MLP projections"},
    {"bias", KeyUse::read, "Falcon: biases on every linear layer"},
    {"use_bias", KeyUse::read, "Nemotron-H: biases on the attention and MLP projections"},
    {"new_decoder_architecture", KeyUse::read, "Falcon: grouped key/value heads and two layer norms"},
    {"parallel_attn", KeyUse::read, "Falcon: attention and MLP from one layer norm"},
    {"use_qk_norm", KeyUse::read, "Llama 4: L2 norm of queries and keys (no parameters)"},
    {"qk_layernorm", KeyUse::read, "norms with weights on queries and keys (Megatron --qk-layernorm; Qwen3's by family)"},
    // Mixture of experts.
    {"num_local_experts", KeyUse::read, "routed experts (aliases num_experts, n_routed_experts)"},
    {"num_experts", KeyUse::read, "= num_local_experts"},
    {"n_routed_experts", KeyUse::read, "= num_local_experts"},
    {"num_experts_per_tok", KeyUse::read, "routed experts per token (alias experts_per_token)"},
    {"experts_per_token", KeyUse::read, "= num_experts_per_tok"},
    {"moe_intermediate_size", KeyUse::read, "one routed expert's width (default intermediate_size)"},
    {"n_shared_experts", KeyUse::read, "shared experts, each moe_intermediate_size wide"},
    {"shared_expert_intermediate_size", KeyUse::read, "total width of the shared experts"},
    {"shared_intermediate_size", KeyUse::read, "= shared_expert_intermediate_size (MiniMax)"},
    {"moe_shared_expert_intermediate_size", KeyUse::read, "= shared_expert_intermediate_size (Megatron-LM)"},
    {"first_k_dense_replace", KeyUse::read, "the first k layers are dense"},
    {"moe_layer_freq", KeyUse::read, "every k-th layer is MoE (DeepSeek: layer % k == 0), or a 0/1 list per layer"},
    {"interleave_moe_layer_step", KeyUse::read, "Llama 4: layer i is MoE when (i + 1) % step == 0"},
    {"decoder_sparse_step", KeyUse::read, "Qwen MoE: layer i is MoE when (i + 1) % step == 0"},
    {"mlp_only_layers", KeyUse::read, "Qwen MoE: layers with a dense MLP"},
    {"moe_layers", KeyUse::read, "the MoE layers, by index"},
    {"topk_method", KeyUse::read, "DeepSeek-V3 noaux_tc: a score-correction bias per expert"},
    {"num_nextn_predict_layers", KeyUse::read, "DeepSeek-V3 multi-token prediction modules (alias mtp_num_layers)"},
    {"mtp_num_layers", KeyUse::read, "= num_nextn_predict_layers"},
    // Multi-latent attention.
    {"q_lora_rank", KeyUse::read, "MLA query compression rank (null: none)"},
    {"kv_lora_rank", KeyUse::read, "MLA key/value compression rank (its presence means MLA)"},
    {"qk_nope_head_dim", KeyUse::read, "MLA query/key head dim without rotary"},
    {"qk_rope_head_dim", KeyUse::read, "MLA decoupled rotary head dim"},
    {"v_head_dim", KeyUse::read, "MLA value head dim"},
    // Windows, chunks and per-layer types.
    {"sliding_window", KeyUse::read, "sliding-window size (which layers: layer_types or the family's rule)"},
    {"sliding_window_size", KeyUse::read, "= sliding_window"},
    {"use_sliding_window", KeyUse::read, "Qwen: windows on (layers >= max_window_layers)"},
    {"max_window_layers", KeyUse::read, "Qwen: layers below it keep full attention"},
    {"sliding_window_pattern", KeyUse::read, "Gemma 3: every n-th layer is global"},
    {"layer_types", KeyUse::read, "per layer: full_attention, sliding_attention, chunked_attention, linear_attention"},
    {"attention_chunk_size", KeyUse::read, "Llama 4: chunked attention on the layers with rotary embeddings"},
    {"no_rope_layers", KeyUse::read, "Llama 4: 0 = a global layer without rotary (no chunking)"},
    // Hybrid stacks.
    {"hybrid_override_pattern", KeyUse::read, "Nemotron-H: one character per layer, M Mamba-2, * attention, - MLP, E MoE"},
    {"mamba_num_heads", KeyUse::read, "Mamba-2 heads"},
    {"mamba_head_dim", KeyUse::read, "Mamba-2 head dim"},
    {"n_groups", KeyUse::read, "Mamba-2 B/C groups"},
    {"ssm_state_size", KeyUse::read, "Mamba-2 state size"},
    {"conv_kernel", KeyUse::read, "Mamba-2 convolution width"},
    {"expand", KeyUse::read, "Mamba-2 expansion (checked: heads x head dim = expand x hidden)"},
    {"chunk_size", KeyUse::read, "Mamba-2 scan chunk"},
    {"use_conv_bias", KeyUse::read, "Mamba-2 convolution bias"},
    {"mamba_proj_bias", KeyUse::read, "Mamba-2 projection biases"},
    {"full_attention_interval", KeyUse::read, "Qwen3-Next: every n-th layer is attention, the others Gated DeltaNet"},
    {"linear_num_key_heads", KeyUse::read, "Gated DeltaNet key heads"},
    {"linear_num_value_heads", KeyUse::read, "Gated DeltaNet value heads"},
    {"linear_key_head_dim", KeyUse::read, "Gated DeltaNet key head dim"},
    {"linear_value_head_dim", KeyUse::read, "Gated DeltaNet value head dim"},
    {"linear_conv_kernel_dim", KeyUse::read, "Gated DeltaNet convolution width"},
    {"attn_type_list", KeyUse::read, "MiniMax: per layer 0 lightning attention, 1 softmax attention"},
    {"block_size", KeyUse::read, "MiniMax lightning attention block (default 256)"},
    // DBRX's nested sections.
    {"ffn_config.ffn_hidden_size", KeyUse::read, "DBRX: expert width"},
    {"ffn_config.moe_num_experts", KeyUse::read, "DBRX: routed experts"},
    {"ffn_config.moe_top_k", KeyUse::read, "DBRX: experts per token"},
    {"attn_config.kv_n_heads", KeyUse::read, "DBRX: key/value heads"},
    {"ffn_config.model_type", KeyUse::ignored, model_key_notes::kMeta},
    {"attn_config.model_type", KeyUse::ignored, model_key_notes::kMeta},
    {"ffn_config.moe_jitter_eps", KeyUse::ignored, model_key_notes::kRouting},
    {"ffn_config.moe_loss_weight", KeyUse::ignored, model_key_notes::kRouting},
    {"attn_config.rope_theta", KeyUse::ignored, model_key_notes::kPosition},
    {"attn_config.clip_qkv", KeyUse::ignored, model_key_notes::kInit},
    // Labels and bookkeeping.
    {"name", KeyUse::ignored, model_key_notes::kMeta},
    {"source", KeyUse::ignored, model_key_notes::kMeta},
    {"description", KeyUse::ignored, model_key_notes::kMeta},
    {"architectures", KeyUse::ignored, model_key_notes::kMeta},
    {"_name_or_path", KeyUse::ignored, model_key_notes::kMeta},
    {"auto_map", KeyUse::ignored, model_key_notes::kMeta},
    {"transformers_version", KeyUse::ignored, model_key_notes::kMeta},
    {"torch_dtype", KeyUse::ignored, model_key_notes::kFormat},
    {"quantization_config", KeyUse::ignored, model_key_notes::kFormat},
    {"bos_token_id", KeyUse::ignored, model_key_notes::kMeta},
    {"eos_token_id", KeyUse::ignored, model_key_notes::kMeta},
    {"pad_token_id", KeyUse::ignored, model_key_notes::kMeta},
    {"use_cache", KeyUse::ignored, model_key_notes::kInference},
    {"cache_implementation", KeyUse::ignored, model_key_notes::kInference},
    {"num_logits_to_keep", KeyUse::ignored, model_key_notes::kInference},
    {"use_mamba_kernels", KeyUse::ignored, model_key_notes::kInference},
    {"pretraining_tp", KeyUse::ignored, "the slicing of a checkpoint's linear layers, not the model's shape"},
    // Positions.
    {"rope_theta", KeyUse::ignored, model_key_notes::kPosition},
    {"rope_scaling", KeyUse::ignored, model_key_notes::kPosition},
    {"rotary_emb_base", KeyUse::ignored, model_key_notes::kPosition},
    {"rotary_pct", KeyUse::ignored, model_key_notes::kPosition},
    {"rotary_dim", KeyUse::ignored, model_key_notes::kPosition},
    {"partial_rotary_factor", KeyUse::ignored, model_key_notes::kPosition},
    {"use_mrope", KeyUse::ignored, model_key_notes::kPosition},
    {"alibi", KeyUse::ignored, model_key_notes::kPosition},
    {"max_position_embeddings", KeyUse::ignored, model_key_notes::kPosition},
    {"original_max_position_embeddings", KeyUse::ignored, model_key_notes::kPosition},
    {"initial_context_length", KeyUse::ignored, model_key_notes::kPosition},
    {"max_seq_len", KeyUse::ignored, model_key_notes::kPosition},
    {"n_positions", KeyUse::ignored, model_key_notes::kPosition},
    {"n_ctx", KeyUse::ignored, model_key_notes::kPosition},
    // Numerics and initialisation.
    {"initializer_range", KeyUse::ignored, model_key_notes::kInit},
    {"rms_norm_eps", KeyUse::ignored, model_key_notes::kInit},
    {"layer_norm_eps", KeyUse::ignored, model_key_notes::kInit},
    {"layer_norm_epsilon", KeyUse::ignored, model_key_notes::kInit},
    {"query_pre_attn_scalar", KeyUse::ignored, model_key_notes::kInit},
    {"clip_qkv", KeyUse::ignored, model_key_notes::kInit},
    {"swiglu_limit", KeyUse::ignored, model_key_notes::kInit},
    {"rescale_prenorm_residual", KeyUse::ignored, model_key_notes::kInit},
    {"residual_in_fp32", KeyUse::ignored, model_key_notes::kInit},
    {"postnorm", KeyUse::ignored, "MiniMax: where the norms sit, not how many"},
    {"apply_residual_connection_post_layernorm", KeyUse::ignored, "where the residual is taken, not its cost"},
    {"use_parallel_residual", KeyUse::ignored, "GPT-NeoX: attention and MLP side by side; the same work"},
    {"mamba_hidden_act", KeyUse::ignored, "Mamba-2's gate activation: fused into its norm"},
    {"time_step_rank", KeyUse::ignored, model_key_notes::kInit},
    {"time_step_min", KeyUse::ignored, model_key_notes::kInit},
    {"time_step_max", KeyUse::ignored, model_key_notes::kInit},
    {"time_step_floor", KeyUse::ignored, model_key_notes::kInit},
    {"time_step_limit", KeyUse::ignored, model_key_notes::kInit},
    // Routing.
    {"router_aux_loss_coef", KeyUse::ignored, model_key_notes::kRouting},
    {"aux_loss_alpha", KeyUse::ignored, model_key_notes::kRouting},
    {"output_router_logits", KeyUse::ignored, model_key_notes::kRouting},
    {"router_jitter_noise", KeyUse::ignored, model_key_notes::kRouting},
    {"seq_aux", KeyUse::ignored, model_key_notes::kRouting},
    {"norm_topk_prob", KeyUse::ignored, model_key_notes::kRouting},
    {"routed_scaling_factor", KeyUse::ignored, model_key_notes::kRouting},
    {"scoring_func", KeyUse::ignored, model_key_notes::kRouting},
    {"n_group", KeyUse::ignored, "group-limited routing: which experts, not how many"},
    {"topk_group", KeyUse::ignored, "group-limited routing: which experts, not how many"},
    {"ep_size", KeyUse::ignored, "the checkpoint's expert sharding; expert parallelism is parallel.ep"},
    {"shared_moe_mode", KeyUse::ignored, model_key_notes::kRouting},
    {"attention_dropout", KeyUse::ignored, model_key_notes::kDropout},
    {"hidden_dropout", KeyUse::ignored, model_key_notes::kDropout},
    {"resid_pdrop", KeyUse::ignored, model_key_notes::kDropout},
    {"embd_pdrop", KeyUse::ignored, model_key_notes::kDropout},
    {"emb_pdrop", KeyUse::ignored, model_key_notes::kDropout},
    {"attn_pdrop", KeyUse::ignored, model_key_notes::kDropout},
    {"summary_type", KeyUse::ignored, "a classification head's, not the language model's"},
    {"summary_use_proj", KeyUse::ignored, "a classification head's, not the language model's"},
    {"vocab_file", KeyUse::ignored, model_key_notes::kMeta},
    {"layernorm_full_attention_alpha", KeyUse::ignored, model_key_notes::kInit},
    {"layernorm_full_attention_beta", KeyUse::ignored, model_key_notes::kInit},
    {"layernorm_linear_attention_alpha", KeyUse::ignored, model_key_notes::kInit},
    {"layernorm_linear_attention_beta", KeyUse::ignored, model_key_notes::kInit},
    {"layernorm_mlp_alpha", KeyUse::ignored, model_key_notes::kInit},
    {"layernorm_mlp_beta", KeyUse::ignored, model_key_notes::kInit},
    // Known to change the cost, not modelled.
    {"vision_config", KeyUse::not_modelled, "the vision encoder and projector (text model only)"},
    {"attn_logit_softcapping", KeyUse::not_modelled, "tanh soft-capping of attention scores (extra element-wise work in the attention kernel)"},
    {"final_logit_softcapping", KeyUse::not_modelled, "tanh soft-capping of the logits (an extra pass over them)"},
    {"moe_latent_size", KeyUse::not_modelled, "experts on a latent projection of the hidden state"},
    {"attn_layer_period", KeyUse::not_modelled, "Jamba's attention/Mamba-1 interleaving (Mamba-1 is not modelled)"},
    {"expert_layer_period", KeyUse::not_modelled, "Jamba's MoE interleaving"},
};

// The row of `key`, or nullptr.
inline const ModelKeyRow* model_key_row(std::string_view key) {
    for (const auto& r : kModelKeys)
        if (key == r.key) return &r;
    return nullptr;
}

}  // namespace lostflops
