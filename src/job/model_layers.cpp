// Which kind each layer is (model_layers.h), by the modelling code's own rules:
//   mixer  hybrid_override_pattern (Nemotron-H), attn_type_list (MiniMax),
//          layer_types, full_attention_interval (Qwen3-Next: layer i is
//          attention when (i + 1) % n == 0);
//   window layer_types or the family's rule (model_families.h WindowRule);
//          Llama 4's chunked attention on the layers with rotary embeddings
//          (no_rope_layers, default every 4th layer global: transformers
//          configuration_llama4.py);
//   MoE    moe_layers, first_k_dense_replace and moe_layer_freq (DeepSeek:
//          layer >= k and layer % freq == 0, modeling_deepseek.py; Megatron's
//          0/1 list), interleave_moe_layer_step (Llama 4: (i + 1) % step ==
//          0), decoder_sparse_step and mlp_only_layers (Qwen MoE), 'E' in a
//          hybrid pattern.
#include "job/model_layers.h"

namespace lostflops {

LayerPattern read_layer_pattern(YamlSection& s, Reader& r, const ModelFamily& fam, int L, bool moe) {
    LayerPattern out;
    std::vector<LayerPlan>& plan = out.plan;
    plan.resize(static_cast<size_t>(L));
    const auto pattern = s.str_opt("hybrid_override_pattern");
    out.hybrid_pattern = pattern.has_value();
    const auto attn_types = r.int_list("attn_type_list", 0, 1, L);
    const auto layer_types = r.str_list("layer_types", L);
    const auto full_every = s.int_opt("full_attention_interval", 1, 100'000);
    if (pattern) {
        if (static_cast<int>(pattern->size()) != L)
            r.fail("hybrid_override_pattern",
                   fmt::format("{} characters; expected one per layer ({})", pattern->size(), L));
        for (int i = 0; i < L; ++i) {
            LayerPlan& p = plan[static_cast<size_t>(i)];
            switch ((*pattern)[static_cast<size_t>(i)]) {
                case 'M': p.mixer = MixerChoice::mamba; p.ffn = LayerPlan::Ffn::none; break;
                case '*': p.mixer = MixerChoice::attention; p.ffn = LayerPlan::Ffn::none; break;
                case '-': p.mixer = MixerChoice::none; p.ffn = LayerPlan::Ffn::dense; break;
                case 'E': p.mixer = MixerChoice::none; p.ffn = LayerPlan::Ffn::moe; break;
                default:
                    r.fail("hybrid_override_pattern",
                           fmt::format("character {} is '{}'; expected M (Mamba-2), * (attention), - (MLP) or E (MoE)",
                                       i, (*pattern)[static_cast<size_t>(i)]));
            }
        }
    }
    for (int i = 0; i < L; ++i) {
        LayerPlan& p = plan[static_cast<size_t>(i)];
        if (attn_types) p.mixer = (*attn_types)[static_cast<size_t>(i)] == 0 ? MixerChoice::linear : MixerChoice::attention;
        else if (full_every && !pattern) p.mixer = (i + 1) % *full_every == 0 ? MixerChoice::attention : MixerChoice::linear;
        if (!layer_types) continue;
        const std::string& t = (*layer_types)[static_cast<size_t>(i)];
        if (t == "full_attention" || t == "attention") p.mixer = MixerChoice::attention;
        else if (t == "sliding_attention") p.mixer = MixerChoice::attention, p.window = true;
        else if (t == "chunked_attention") p.mixer = MixerChoice::attention, p.chunk = true;
        else if (t == "linear_attention") p.mixer = MixerChoice::linear;
        else
            throw InputError(s.file(), fmt::format("model.layer_types[{}]", i),
                             fmt::format("unknown layer type '{}'; expected full_attention, sliding_attention, "
                                         "chunked_attention or linear_attention", t));
    }

    // Sliding windows by the family's rule, unless layer_types said.
    const int64_t window = out.window = r.alias_int({"sliding_window", "sliding_window_size"}, 1, 1'000'000'000).value_or(0);
    const bool use_window = s.bool_or("use_sliding_window", fam.window != WindowRule::qwen);
    const int64_t max_window_layers = s.int_opt("max_window_layers", 0, 100'000).value_or(28);  // Qwen2Config default
    const int64_t window_pattern =  // Gemma3TextConfig default 6
        r.alias_int({"sliding_window_pattern", "_sliding_window_pattern"}, 1, 100'000).value_or(6);
    if (window > 0 && use_window && !layer_types) {
        for (int i = 0; i < L; ++i) {
            bool on = false;
            switch (fam.window) {
                case WindowRule::every_layer: on = true; break;
                case WindowRule::qwen: on = i >= max_window_layers; break;
                case WindowRule::alternate: on = i % 2 == 0; break;
                case WindowRule::pattern: on = (i + 1) % window_pattern != 0; break;
            }
            plan[static_cast<size_t>(i)].window = on;
        }
    }
    // Llama 4: chunked attention where rotary embeddings are used.
    const int64_t chunk = out.chunk = s.int_opt("attention_chunk_size", 1, 1'000'000'000).value_or(0);
    const auto no_rope = r.int_list("no_rope_layers", 0, 1, L);
    if (chunk > 0 && !layer_types)
        for (int i = 0; i < L; ++i)
            plan[static_cast<size_t>(i)].chunk = no_rope ? (*no_rope)[static_cast<size_t>(i)] == 1 : (i + 1) % 4 != 0;

    const auto first_dense = s.int_opt("first_k_dense_replace", 0, 100'000);
    std::optional<int64_t> freq;
    std::optional<std::vector<int64_t>> freq_list;
    if (const YAML::Node f = s.raw("moe_layer_freq"); f && f.IsSequence()) freq_list = r.int_list("moe_layer_freq", 0, 1, L);
    else freq = s.int_opt("moe_layer_freq", 1, 100'000);
    const auto interleave = s.int_opt("interleave_moe_layer_step", 1, 100'000);
    const auto sparse_step = s.int_opt("decoder_sparse_step", 1, 100'000);
    // Index lists as masks: O(layers + list length).
    const auto mask = [&](const char* key) {
        std::optional<std::vector<char>> m;
        if (const auto list = r.int_list(key, 0, L - 1, -1)) {
            m.emplace(static_cast<size_t>(L), 0);
            for (const int64_t i : *list) (*m)[static_cast<size_t>(i)] = 1;
        }
        return m;
    };
    const auto mlp_only = mask("mlp_only_layers");
    const auto moe_layers = mask("moe_layers");
    for (int i = 0; i < L && moe && !pattern; ++i) {
        bool on = true;
        if (moe_layers) on = (*moe_layers)[static_cast<size_t>(i)] != 0;
        if (first_dense) on = on && i >= *first_dense;
        if (freq) on = on && i % *freq == 0;
        if (freq_list) on = on && (*freq_list)[static_cast<size_t>(i)] == 1;
        if (interleave) on = on && (i + 1) % *interleave == 0;
        if (sparse_step) on = on && (i + 1) % *sparse_step == 0;
        if (mlp_only) on = on && (*mlp_only)[static_cast<size_t>(i)] == 0;
        plan[static_cast<size_t>(i)].ffn = on ? LayerPlan::Ffn::moe : LayerPlan::Ffn::dense;
    }
    // Mamba-1 families (model_families.h SsmRule). Jamba's defaults:
    // JambaConfig attn_layer_period 8, attn_layer_offset 4,
    // expert_layer_period 2, expert_layer_offset 1.
    if (fam.ssm == SsmRule::mamba1) {
        for (LayerPlan& p : plan) p.mixer = MixerChoice::mamba1, p.ffn = LayerPlan::Ffn::none;
    } else if (fam.ssm == SsmRule::jamba) {
        const int64_t attn_period = s.int_opt("attn_layer_period", 1, 100'000).value_or(8);
        const int64_t attn_offset = s.int_opt("attn_layer_offset", 0, attn_period - 1).value_or(4);
        const int64_t expert_period = s.int_opt("expert_layer_period", 1, 100'000).value_or(2);
        const int64_t expert_offset = s.int_opt("expert_layer_offset", 0, expert_period - 1).value_or(1);
        for (int i = 0; i < L; ++i) {
            LayerPlan& p = plan[static_cast<size_t>(i)];
            p.mixer = i % attn_period == attn_offset ? MixerChoice::attention : MixerChoice::mamba1;
            p.ffn = moe && i % expert_period == expert_offset ? LayerPlan::Ffn::moe : LayerPlan::Ffn::dense;
        }
    }
    return out;
}

// A Mamba-1 mixer (MixerKind::mamba1): d_inner channels, each its own
// "head" of width 1. MambaConfig: intermediate_size = expand x hidden
// (expand default 2), time_step_rank "auto" = ceil(hidden / 16), state 16,
// conv 4 with bias, no projection bias (use_bias); FalconMambaConfig keeps
// a given intermediate_size; Jamba's mamba_* keys (JambaConfig defaults
// expand 2, d_state 16, d_conv 4, dt_rank auto, conv bias, no proj bias).
LinearMixer read_mamba1_mixer(YamlSection& s, Reader& r, const ModelFamily& fam, int64_t given_inner, int64_t h) {
    LinearMixer mamba1;
    const bool jamba = fam.ssm == SsmRule::jamba;
    const int64_t expand = s.int_opt(jamba ? "mamba_expand" : "expand", 1, 1000).value_or(2);
    const int64_t inner = given_inner > 0 ? given_inner : expand * h;
    const char* rank_key = jamba ? "mamba_dt_rank" : "time_step_rank";
    int64_t dt_rank = (h + 15) / 16;  // "auto"
    if (const YAML::Node v = s.raw(rank_key); v && !(v.IsScalar() && v.Scalar() == "auto"))
        dt_rank = s.int_req(rank_key, 1, kMaxSize);
    if (inner > 100'000'000) r.fail(jamba ? "mamba_expand" : "expand", "d_inner over 100 million channels");
    mamba1.heads = static_cast<int>(inner);
    mamba1.head_dim = 1;
    mamba1.groups = 1;
    mamba1.state_dim = s.int_or(jamba ? "mamba_d_state" : "state_size", 16, 1, kMaxSize);
    mamba1.conv_kernel = static_cast<int>(s.int_or(jamba ? "mamba_d_conv" : "conv_kernel", 4, 1, 1024));
    mamba1.conv_bias = s.bool_or(jamba ? "mamba_conv_bias" : "use_conv_bias", true);
    mamba1.proj_bias = s.bool_or(jamba ? "mamba_proj_bias" : "use_bias", false);
    mamba1.dt_rank = dt_rank;
    mamba1.inner_norms = jamba;
    // state-spaces/mamba csrc/selective_scan: the forward kernel scans in
    // chunks of kNThreads x kNItems = 2048 tokens and saves the state at
    // each chunk's end for the backward.
    mamba1.chunk = 2048;
    return mamba1;
}

}  // namespace lostflops
