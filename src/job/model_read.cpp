// Model keys -> Model: the global sizes; the attention (MHA/GQA/MQA, MLA when
// kv_lora_rank is given), MLP, expert and linear-mixer shapes with the
// family's fixed structure (src/job/model_families.h); which kind each layer
// is (model_layers.cpp); positions, rotary and dropout (model_positions.cpp);
// then the stack of layer kinds. Key meanings in
// src/job/model_keys.h.
#include "job/model_read.h"

#include <algorithm>
#include <set>

#include "job/hardware_bounds.h"
#include "job/model_keys.h"
#include "job/model_layers.h"

namespace lostflops {

namespace {


struct ActivationName {
    const char* name;
    Activation act;
    bool gated_by_name;  // a gated MLP when the family decides by the activation
};
// Hugging Face ACT2FN names (transformers/activations.py) and Megatron's.
constexpr ActivationName kActivations[] = {
    {"silu", Activation::silu, true},          {"swish", Activation::silu, true},
    {"swiglu", Activation::silu, true},        {"geglu", Activation::gelu, true},
    {"gelu", Activation::gelu, false},         {"gelu_python", Activation::gelu, false},
    {"gelu_new", Activation::gelu_tanh, false}, {"gelu_fast", Activation::gelu_tanh, false},
    {"gelu_pytorch_tanh", Activation::gelu_tanh, false}, {"gelu_accurate", Activation::gelu_tanh, false},
    {"quick_gelu", Activation::quick_gelu, false}, {"relu", Activation::relu, false},
    {"relu2", Activation::relu2, false},       {"squared_relu", Activation::relu2, false},
};

// The MLP's activation and the key it came from: the key the family's code
// reads (ModelFamily::act_key) when given, else the first of the names given.
// A name that disagrees is left out, as that code leaves it out, and said (a
// warning, not an error: StarCoder2's activation_function beside hidden_act).
std::optional<std::string> read_activation(YamlSection& s, const ModelFamily& fam,
                                           std::vector<Model::NotModelled>& notes, const char*& from) {
    constexpr const char* kKeys[] = {"hidden_act", "hidden_activation", "mlp_hidden_act", "activation_function"};
    std::optional<std::string> out = s.str_opt(fam.act_key);
    from = fam.act_key;
    for (const char* k : kKeys) {
        if (std::string_view(k) == fam.act_key) continue;
        const auto v = s.str_opt(k);
        if (!v) continue;
        if (!out) {
            out = v, from = k;
        } else if (*v != *out) {
            const std::string reader = *fam.model_type != '\0' && std::string_view(from) == fam.act_key
                                           ? fmt::format("the key {}'s modelling code reads", fam.model_type)
                                           : "the first activation key given";
            notes.push_back({k, fmt::format("'{}' disagrees with {} '{}': the MLP uses {} ({}), and {} is left out", *v,
                                            from, *out, from, reader, k),
                             Model::NotModelled::Kind::ignored});
        }
    }
    return out;
}

}  // namespace

YAML::Node flatten_model_node(const YAML::Node& node, const std::string& file, bool keep_nulls,
                              std::vector<Model::NotModelled>* notes) {
    if (!node.IsMap()) return node;
    YAML::Node out(YAML::NodeType::Map);
    // DBRX's attn_config: {clip_qkv: 8} and a literal "attn_config.clip_qkv"
    // key are one key: the one later in the file won without a word. (A
    // config.json may repeat a key with the same value: Duplicates::same_ok.)
    const auto put = [&](const std::string& key, const YAML::Node& value) {
        if (out[key] && YAML::Dump(out[key]) == YAML::Dump(value)) return;
        if (out[key])
            throw InputError(file, "model." + key,
                             "given twice: as a dotted key and inside its section (" + key.substr(0, key.find('.')) +
                                 "); give it once");
        out[key] = value;
    };
    // A null value is the key absent, as a Hugging Face config class reads it
    // (attn_logit_softcapping: null, n_inner: null, q_lora_rank: null).
    for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw InputError(file, "model", "keys must be plain strings");
        const std::string& k = kv.first.Scalar();
        if (kv.second.IsNull() && !keep_nulls) continue;
        if ((k == "ffn_config" || k == "attn_config") && kv.second.IsMap()) {
            for (const auto& in : kv.second) {
                if (!in.first.IsScalar()) throw InputError(file, "model." + k, "keys must be plain strings");
                if (!in.second.IsNull() || keep_nulls) put(k + "." + in.first.Scalar(), in.second);
            }
        } else if (k != "text_config") {
            put(k, kv.second);
        }
    }
    // transformers 5 saves a config's rotary settings in rope_parameters
    // (GPTNeoXConfig, PhiConfig: partial_rotary_factor moved there): its
    // factor, as the dotted key rope_parameters.partial_rotary_factor, is
    // the model's where the config does not give one outside
    // (model_positions.cpp), and an error names it where it stands.
    const YAML::Node rope = node["rope_parameters"];
    if (rope && rope.IsMap()) {
        const YAML::Node factor = rope["partial_rotary_factor"];
        if (factor && (!factor.IsNull() || keep_nulls)) out["rope_parameters.partial_rotary_factor"] = factor;
    }
    // A multimodal config's text model: its keys where the outer config has
    // none, and its model_type (gemma3_text, llama4_text) as the family. One
    // the outer config gives otherwise is noted as left out (it was dropped
    // without a word).
    const YAML::Node text = node["text_config"];
    if (text && text.IsMap())
        for (const auto& kv : text) {
            if (!kv.first.IsScalar()) throw InputError(file, "model.text_config", "keys must be plain strings");
            if (kv.second.IsNull()) continue;
            const std::string& k = kv.first.Scalar();
            if (!out[k] || k == "model_type") {
                out[k] = kv.second;
            } else if (notes && YAML::Dump(out[k]) != YAML::Dump(kv.second)) {
                notes->push_back({"text_config." + k,
                                  fmt::format("'{}' disagrees with the outer {} '{}': the outer one is used, and "
                                              "text_config.{} is left out",
                                              YAML::Dump(kv.second), k, YAML::Dump(out[k]), k),
                                  Model::NotModelled::Kind::ignored});
            }
        }
    else if (text && !text.IsNull())
        throw InputError(file, "model.text_config", "expected a mapping of the text model's keys");
    return out;
}

Model read_model_shape(const YAML::Node& node, const std::string& file, std::vector<Model::NotModelled> notes) {
    YamlSection s(node, file, "model");
    Reader r(s, file);
    Model m;
    m.name = s.str_opt("name").value_or("model");
    const std::string model_type = s.str_opt("model_type").value_or("");
    const ModelFamily* found = model_family(model_type);
    if (found != nullptr && found->refused != nullptr)
        throw InputError(file, s.key_path("model_type"), fmt::format("'{}': {}", model_type, found->refused));
    if (found == nullptr && !model_type.empty())
        notes.push_back({"model_type", fmt::format("'{}' is not known: {}", model_type, kUnknownFamilyReading),
                         Model::NotModelled::Kind::assumed});
    const ModelFamily& fam = found != nullptr ? *found : model_type.empty() ? kDefaultFamily : kUnknownFamily;

    m.layers = static_cast<int>(r.alias_req({"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, 1, bounds::kMaxLayers));
    const int L = m.layers;
    m.hidden = r.alias_req({"hidden_size", "d_model", "n_embd"}, 1, 1'000'000);
    m.vocab = r.alias_req({"vocab_size", "padded_vocab_size"}, 1, 100'000'000);
    m.tied_embeddings = s.bool_or("tie_word_embeddings", fam.tied);
    m.norm = fam.norm;
    if (s.has("rmsnorm"))  // ChatGLM: RMSNorm, or torch LayerNorm with bias
        m.norm = s.bool_or("rmsnorm", true) ? NormKind::rms : NormKind::layer_bias;
    m.mtp_layers = static_cast<int>(r.alias_int({"num_nextn_predict_layers", "mtp_num_layers"}, 0, 1000).value_or(0));
    const int64_t h = m.hidden;

    // Attention shape shared by the attention layers.
    const auto heads = r.alias_int({"num_attention_heads", "n_head", "n_heads"}, 1, 100'000);
    auto kv_heads = r.alias_int({"num_key_value_heads", "num_kv_heads", "n_head_kv", "attn_config.kv_n_heads"}, 1, 100'000);
    const bool multi_query = s.bool_or("multi_query", false);
    // ChatGLM: multi_query_attention with multi_query_group_num key/value heads.
    const auto groups = s.int_opt("multi_query_group_num", 1, 100'000);
    if (s.bool_or("multi_query_attention", false)) {
        if (!groups) r.missing("multi_query_group_num", "multi_query_attention needs it");
        kv_heads = groups;
    }
    const bool new_arch = s.bool_or("new_decoder_architecture", false);
    const bool parallel_attn = s.bool_or("parallel_attn", false);
    s.bool_or("use_qk_norm", false);  // Llama 4's L2 norm has no parameters
    const bool qk_layernorm = s.bool_or("qk_layernorm", false);
    if (multi_query && !new_arch) kv_heads = 1;
    auto head_dim = r.alias_int({"head_dim", "attention_head_dim", "kv_channels"}, 1, kMaxSize);
    if (!head_dim && heads) {
        if (h % *heads != 0)
            r.fail("hidden_size", fmt::format("{} is not divisible by num_attention_heads {} (give head_dim)", h, *heads));
        head_dim = h / *heads;
    }
    const int64_t ffn = r.alias_int({"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"}, 1, kMaxSize).value_or(4 * h);
    const int64_t dense_ffn = s.int_opt("intermediate_size_mlp", 1, kMaxSize).value_or(ffn);

    // Activation and MLP form: the key the family's code reads, else the
    // first name given, else the family's default.
    const char* act_from = "hidden_act";
    auto act_key = read_activation(s, fam, notes, act_from);
    if (!act_key && fam.default_act != nullptr) act_key = fam.default_act;
    const ActivationName* act = nullptr;
    if (act_key) {
        for (const auto& a : kActivations)
            if (*act_key == a.name) act = &a;
        if (act == nullptr) {
            std::string list;
            for (const auto& a : kActivations) list += (list.empty() ? "" : ", ") + std::string(a.name);
            r.fail(act_from, fmt::format("unknown value '{}'; expected one of: {}", *act_key, list));
        }
    }
    Mlp mlp;
    mlp.act = act != nullptr ? act->act : (fam.mlp == MlpRule::gated ? Activation::silu : Activation::gelu);
    mlp.fused_gate_up = fam.fused_gate_up;
    // transformers' Python activations (activations.py NewGELUActivation,
    // FastGELUActivation, AccurateGELUActivation, QuickGELUActivation,
    // GELUActivation(use_gelu_python)): a chain of PyTorch operators.
    if (act_key) {
        for (const char* composite : {"gelu_new", "gelu_fast", "gelu_accurate", "quick_gelu", "gelu_python"})
            if (*act_key == composite) mlp.act_composite = true;
    }
    switch (fam.mlp) {
        case MlpRule::by_activation: mlp.kind = act != nullptr && act->gated_by_name ? MlpKind::gated : MlpKind::dense; break;
        case MlpRule::gated: mlp.kind = MlpKind::gated; break;
        case MlpRule::dense: mlp.kind = MlpKind::dense; break;
    }

    // Biases: each key on its own, and what the family's code fixes.
    // ChatGLM's add_qkv_bias / add_bias_linear, StableLM's use_qkv_bias, OPT's enable_bias.
    const bool attention_bias = s.bool_or("attention_bias", false);
    const bool mlp_bias_key = s.bool_or("mlp_bias", false);
    const bool bias_key = s.bool_or("bias", false);
    const bool attn_only = fam.bias == BiasRule::attn_by_bias_key;
    const bool all_bias = (bias_key && !attn_only) || s.bool_or("use_bias", false) ||
                          s.bool_or("enable_bias", fam.bias == BiasRule::all_always);
    const bool linear_bias = s.bool_or("add_bias_linear", false);
    const bool qkv_key = s.bool_or("add_qkv_bias", false) || s.bool_or("use_qkv_bias", false);
    mlp.bias = mlp_bias_key || all_bias || linear_bias || fam.bias == BiasRule::mlp_always;

    Attention attn;
    attn.qkv_bias = attention_bias || all_bias || qkv_key || (bias_key && attn_only) || fam.bias == BiasRule::qkv_always;
    attn.out_bias = (attention_bias && fam.bias != BiasRule::qkv_by_key && fam.bias != BiasRule::qkv_always) ||
                    all_bias || linear_bias || (bias_key && attn_only);
    attn.sinks = fam.sinks;
    attn.qk_norm = fam.qk_norm || qk_layernorm;
    attn.output_gate = fam.output_gate;
    attn.fused_qkv = fam.fused_qkv;
    if (heads) {
        attn.heads = static_cast<int>(*heads);
        attn.kv_heads = static_cast<int>(kv_heads.value_or(*heads));
        attn.head_dim = *head_dim;
        attn.v_head_dim = *head_dim;
    }
    // Multi-latent attention.
    const auto kv_lora = s.int_opt("kv_lora_rank", 1, kMaxSize);
    const auto q_lora = s.int_opt("q_lora_rank", 1, kMaxSize);
    const auto qk_nope = s.int_opt("qk_nope_head_dim", 1, kMaxSize);
    const auto qk_rope = s.int_opt("qk_rope_head_dim", 1, kMaxSize);
    const auto v_head = s.int_opt("v_head_dim", 1, kMaxSize);
    if (kv_lora) {
        if (!qk_nope || !qk_rope || !v_head)
            r.fail("kv_lora_rank", "multi-latent attention needs qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
        attn.kv_lora_rank = *kv_lora;
        attn.q_lora_rank = q_lora.value_or(0);
        attn.qk_rope_head_dim = *qk_rope;
        attn.head_dim = *qk_nope + *qk_rope;
        attn.v_head_dim = *v_head;
        attn.kv_heads = attn.heads;
        attn.qkv_bias = attn.out_bias = false;
    }

    // Per-layer types, windows, chunks and which layers are MoE (model_layers.cpp).
    const int64_t experts = r.alias_int({"num_local_experts", "num_experts", "n_routed_experts",
                                         "ffn_config.moe_num_experts"}, 0, 100'000).value_or(0);
    const bool moe = experts > 1;
    const bool linear_is_lightning = model_type == "minimax" || model_type == "minimax_m1";
    LayerPattern lp = read_layer_pattern(s, r, fam, L, moe);
    // Nemotron-NAS: per layer, attention or none, an MLP of its own width or none.
    const auto blocks = read_block_configs(s, L, h, static_cast<int>(heads.value_or(1)));
    if (blocks)
        for (int i = 0; i < L; ++i) {
            const NasBlock& b = (*blocks)[static_cast<size_t>(i)];
            if (!b.attention) lp.plan[static_cast<size_t>(i)].mixer = MixerChoice::none;
            if (!b.ffn) lp.plan[static_cast<size_t>(i)].ffn = LayerPlan::Ffn::none;
        }
    const std::vector<LayerPlan>& plan = lp.plan;
    const bool pattern = lp.hybrid_pattern;
    const int64_t window = lp.window, chunk = lp.chunk;
    const bool noaux = s.str_opt("topk_method").value_or("") == "noaux_tc";

    // The experts. Their keys are read only for a mixture of experts: on a
    // dense model they stay unread and are warned as doing nothing below.
    Moe moe_shape;
    if (moe) {
        const auto top_k = r.alias_int({"num_experts_per_tok", "experts_per_token", "ffn_config.moe_top_k"}, 1, 100'000);
        const auto moe_ffn = r.alias_int({"moe_intermediate_size", "ffn_config.ffn_hidden_size"}, 1, kMaxSize);
        const auto n_shared = s.int_opt("n_shared_experts", 0, 100'000);
        const auto shared_total = r.alias_int({"shared_expert_intermediate_size", "shared_intermediate_size",
                                               "moe_shared_expert_intermediate_size"}, 0, kMaxSize);
        if (!top_k) r.missing("num_experts_per_tok", "a mixture of experts needs it");
        moe_shape.experts = static_cast<int>(experts);
        moe_shape.top_k = static_cast<int>(*top_k);
        moe_shape.expert = mlp;
        moe_shape.expert.bias = fam.expert_bias;
        moe_shape.expert.ffn = moe_ffn.value_or(ffn);
        if (shared_total) moe_shape.shared_ffn = *shared_total;
        else if (n_shared) moe_shape.shared_ffn = *n_shared * moe_shape.expert.ffn;
        else if (fam.shared_is_ffn) moe_shape.shared_ffn = ffn;
        moe_shape.shared_gate = fam.shared_gate && moe_shape.shared_ffn > 0;
        moe_shape.router_bias = fam.router_bias;
        moe_shape.score_bias = fam.score_bias || noaux;
    } else {
        for (auto& p : plan)
            if (p.ffn == LayerPlan::Ffn::moe) r.fail("hybrid_override_pattern", "'E' layers need num_experts > 1");
    }

    // Linear mixers.
    LinearMixer mamba;
    if (std::any_of(plan.begin(), plan.end(), [](const LayerPlan& p) { return p.mixer == MixerChoice::mamba; })) {
        mamba.heads = static_cast<int>(s.int_req("mamba_num_heads", 1, 100'000));
        mamba.head_dim = s.int_req("mamba_head_dim", 1, kMaxSize);
        mamba.groups = static_cast<int>(s.int_or("n_groups", 1, 1, 100'000));
        mamba.state_dim = s.int_req("ssm_state_size", 1, kMaxSize);
        mamba.conv_kernel = static_cast<int>(s.int_or("conv_kernel", 4, 1, 1024));  // Mamba2Config default
        mamba.chunk = s.int_or("chunk_size", 256, 1, kMaxSize);                     // Mamba2Config default
        mamba.conv_bias = s.bool_or("use_conv_bias", true);                          // Mamba2Config default
        mamba.proj_bias = s.bool_or("mamba_proj_bias", false);
        // transformers' NemotronHMamba2Mixer: intermediate_size = mamba_num_heads * mamba_head_dim; expand unread.
        if (const auto e = s.int_opt("expand", 1, 1000); e && *e * h != mamba.inner())
            notes.push_back({"expand",
                             fmt::format("expand x hidden_size = {} disagrees with mamba_num_heads x mamba_head_dim = "
                                         "{}; the mixer is mamba_num_heads x mamba_head_dim wide, as transformers' "
                                         "NemotronHMamba2Mixer builds it, and expand is left out",
                                         *e * h, mamba.inner()),
                             Model::NotModelled::Kind::ignored});
    }
    LinearMixer mamba1;
    if (std::any_of(plan.begin(), plan.end(), [](const LayerPlan& p) { return p.mixer == MixerChoice::mamba1; }))
        mamba1 = read_mamba1_mixer(s, r, fam, model_type == "falcon_mamba" && s.has("intermediate_size") ? ffn : 0, h);
    LinearMixer linear;
    const bool has_linear = std::any_of(plan.begin(), plan.end(), [](const LayerPlan& p) { return p.mixer == MixerChoice::linear; });
    if (has_linear && linear_is_lightning) {
        if (!heads) r.missing("num_attention_heads", "lightning attention needs it");
        linear.heads = attn.heads;
        linear.head_dim = *head_dim;
        linear.groups = attn.heads;
        linear.state_dim = *head_dim;
        linear.chunk = s.int_or("block_size", 256, 1, kMaxSize);  // MiniMaxConfig default block_size
    } else if (has_linear) {
        linear.heads = static_cast<int>(s.int_req("linear_num_value_heads", 1, 100'000));
        linear.head_dim = s.int_req("linear_value_head_dim", 1, kMaxSize);
        linear.groups = static_cast<int>(s.int_req("linear_num_key_heads", 1, 100'000));
        linear.state_dim = s.int_req("linear_key_head_dim", 1, kMaxSize);
        linear.conv_kernel = static_cast<int>(s.int_or("linear_conv_kernel_dim", 4, 1, 1024));  // Qwen3NextConfig default
        linear.chunk = 64;  // flash-linear-attention chunk_gated_delta_rule's chunk size
    }
    if (!heads && std::any_of(plan.begin(), plan.end(), [](const LayerPlan& p) { return p.mixer == MixerChoice::attention; }))
        r.missing("num_attention_heads", "expected an integer");

    // Norms per layer: the family's; Falcon's parallel block has one unless
    // the new decoder architecture gives attention and MLP one each.
    int norms = fam.norms;
    if (parallel_attn && !new_arch) norms = 1;
    if (s.bool_or("use_parallel_residual", false) && fam.one_norm_if_parallel) norms = 1;
    if (const double drop = s.num_or("layerdrop", 0, 0, 1); drop > 0)
        notes.push_back({"layerdrop", fmt::format("{:g}: OPT's LayerDrop skips layers at random in training; every "
                                                  "layer is costed", drop)});

    // Positions, rotary's share, attention's scores and block dropout (model_positions.cpp).
    read_positions(s, r, fam, found != nullptr, !model_type.empty(), head_dim, m, notes);

    // Keys known to change the cost that are not modelled: read, and noted.
    for (const auto& row : kModelKeys)
        if (row.use == KeyUse::not_modelled && s.has(row.key)) {
            s.raw(row.key);
            notes.push_back({row.key, row.note});
        }
    std::set<std::string> tolerated;
    for (const auto& row : kModelKeys)
        if (row.use == KeyUse::ignored) tolerated.insert(row.key);
    // Keys read for layers this model does not have (mamba_proj_bias without
    // Mamba-2 layers): said, not refused.
    for (const auto& row : kModelKeys)
        if (row.use == KeyUse::read && s.has(row.key) && !s.used(row.key)) {
            notes.push_back({row.key, fmt::format("does nothing for this model ({})", row.note),
                             Model::NotModelled::Kind::ignored});
            tolerated.insert(row.key);
        }
    tolerated.insert("preset");
    tolerated.insert("hf_config");
    s.finish(tolerated);

    LayerStackBuilder b;
    for (int i = 0; i < L; ++i) {
        const LayerPlan& p = plan[static_cast<size_t>(i)];
        LayerKind k;
        k.norms = pattern ? 1 : norms;
        const NasBlock* nas = blocks ? &(*blocks)[static_cast<size_t>(i)] : nullptr;
        if (nas) k.norms = (nas->attention ? 1 : 0) + (nas->ffn ? 1 : 0);
        switch (p.mixer) {
            case MixerChoice::attention:
                k.mixer = kv_lora ? MixerKind::mla : MixerKind::attention;
                k.attention = attn;
                if (p.window) k.attention.window = window;
                if (p.chunk) k.attention.chunk = chunk;
                break;
            case MixerChoice::linear:
                k.mixer = linear_is_lightning ? MixerKind::lightning : MixerKind::gated_deltanet;
                k.linear = linear;
                break;
            case MixerChoice::mamba: k.mixer = MixerKind::mamba2, k.linear = mamba; break;
            case MixerChoice::mamba1: k.mixer = MixerKind::mamba1, k.linear = mamba1; break;
            case MixerChoice::none: k.mixer = MixerKind::none; break;
        }
        if (p.ffn == LayerPlan::Ffn::moe) {
            k.moe = moe_shape;
        } else if (p.ffn == LayerPlan::Ffn::dense) {
            k.mlp = mlp;
            k.mlp.ffn = nas ? nas->ffn_width : moe ? dense_ffn : ffn;
        }
        if (nas && nas->attention) k.attention.kv_heads = nas->kv_heads;
        b.add(k);
    }
    m.stack = b.build();
    if (!notes.empty()) m.not_modelled = std::make_shared<const std::vector<Model::NotModelled>>(std::move(notes));
    return m;
}

}  // namespace lostflops
