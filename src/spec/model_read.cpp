// Model keys -> Model: the global sizes; the attention (MHA/GQA/MQA, MLA when
// kv_lora_rank is given), MLP, expert and linear-mixer shapes with the
// family's fixed structure (src/spec/model_families.h); which kind each layer
// is (model_layers.cpp); then the stack of layer kinds. Key meanings in
// src/spec/model_keys.h.
#include "spec/model_read.h"

#include <algorithm>
#include <set>

#include "spec/model_keys.h"
#include "spec/model_layers.h"

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

}  // namespace

YAML::Node flatten_model_node(const YAML::Node& node, const std::string& file) {
    if (!node.IsMap()) return node;
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw InputError(file, "model", "keys must be plain strings");
        const std::string& k = kv.first.Scalar();
        if ((k == "ffn_config" || k == "attn_config") && kv.second.IsMap()) {
            for (const auto& in : kv.second) {
                if (!in.first.IsScalar()) throw InputError(file, "model." + k, "keys must be plain strings");
                out[k + "." + in.first.Scalar()] = in.second;
            }
        } else if (k != "text_config") {
            out[k] = kv.second;
        }
    }
    const YAML::Node text = node["text_config"];
    if (text && text.IsMap())
        for (const auto& kv : text) {
            if (!kv.first.IsScalar()) throw InputError(file, "model.text_config", "keys must be plain strings");
            if (!out[kv.first.Scalar()]) out[kv.first.Scalar()] = kv.second;
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
    const ModelFamily& fam = found != nullptr ? *found : kDefaultFamily;

    m.layers = static_cast<int>(r.alias_req({"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, 1, 100'000));
    const int L = m.layers;
    m.hidden = r.alias_req({"hidden_size", "d_model", "n_embd"}, 1, 1'000'000);
    m.vocab = s.int_req("vocab_size", 1, 100'000'000);
    m.tied_embeddings = s.bool_or("tie_word_embeddings", fam.tied);
    m.norm = fam.norm;
    m.mtp_layers = static_cast<int>(r.alias_int({"num_nextn_predict_layers", "mtp_num_layers"}, 0, 1000).value_or(0));
    const int64_t h = m.hidden;

    // Attention shape shared by the attention layers.
    const auto heads = r.alias_int({"num_attention_heads", "n_head", "n_heads"}, 1, 100'000);
    auto kv_heads = r.alias_int({"num_key_value_heads", "num_kv_heads", "n_head_kv", "attn_config.kv_n_heads"}, 1, 100'000);
    const bool multi_query = s.bool_or("multi_query", false);
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
    const int64_t ffn = r.alias_int({"intermediate_size", "ffn_hidden_size", "n_inner"}, 1, kMaxSize).value_or(4 * h);
    const int64_t dense_ffn = s.int_opt("intermediate_size_mlp", 1, kMaxSize).value_or(ffn);

    // Activation and MLP form.
    std::vector<std::string> act_names;
    for (const auto& a : kActivations) act_names.push_back(a.name);
    const auto act_key = r.alias_str({"hidden_act", "hidden_activation", "mlp_hidden_act", "activation_function"});
    const ActivationName* act = nullptr;
    if (act_key) {
        for (const auto& a : kActivations)
            if (*act_key == a.name) act = &a;
        if (act == nullptr) {
            std::string list;
            for (const auto& n : act_names) list += (list.empty() ? "" : ", ") + n;
            r.fail("hidden_act", fmt::format("unknown value '{}'; expected one of: {}", *act_key, list));
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
    const bool attention_bias = s.bool_or("attention_bias", false);
    const bool mlp_bias_key = s.bool_or("mlp_bias", false);
    const bool all_bias = s.bool_or("bias", false) || s.bool_or("use_bias", false) || fam.bias == BiasRule::all_always;
    mlp.bias = mlp_bias_key || all_bias;

    Attention attn;
    attn.qkv_bias = attention_bias || all_bias || fam.bias == BiasRule::qkv_always;
    attn.out_bias = (attention_bias && fam.bias != BiasRule::qkv_by_key && fam.bias != BiasRule::qkv_always) || all_bias;
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
    const LayerPattern lp = read_layer_pattern(s, r, fam, L, moe);
    const std::vector<LayerPlan>& plan = lp.plan;
    const bool pattern = lp.hybrid_pattern;
    const int64_t window = lp.window, chunk = lp.chunk;
    const bool noaux = s.str_opt("topk_method").value_or("") == "noaux_tc";

    // The experts.
    const auto top_k = r.alias_int({"num_experts_per_tok", "experts_per_token", "ffn_config.moe_top_k"}, 1, 100'000);
    const auto moe_ffn = r.alias_int({"moe_intermediate_size", "ffn_config.ffn_hidden_size"}, 1, kMaxSize);
    const auto n_shared = s.int_opt("n_shared_experts", 0, 100'000);
    const auto shared_total = r.alias_int({"shared_expert_intermediate_size", "shared_intermediate_size",
                                           "moe_shared_expert_intermediate_size"}, 0, kMaxSize);
    Moe moe_shape;
    if (moe) {
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
        if (const auto e = s.int_opt("expand", 1, 1000); e && *e * h != mamba.inner())
            r.fail("expand", fmt::format("expand x hidden_size = {} disagrees with mamba_num_heads x mamba_head_dim = {}",
                                         *e * h, mamba.inner()));
    }
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

    // Keys known to change the cost that are not modelled: read, and noted.
    for (const auto& row : kModelKeys)
        if (row.use == KeyUse::not_modelled && s.has(row.key)) {
            s.raw(row.key);
            notes.push_back({row.key, row.note});
        }
    std::set<std::string> tolerated;
    for (const auto& row : kModelKeys)
        if (row.use == KeyUse::ignored) tolerated.insert(row.key);
    tolerated.insert("preset");
    tolerated.insert("hf_config");
    s.finish(tolerated);

    LayerStackBuilder b;
    for (int i = 0; i < L; ++i) {
        const LayerPlan& p = plan[static_cast<size_t>(i)];
        LayerKind k;
        k.norms = pattern ? 1 : norms;
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
            case MixerChoice::none: k.mixer = MixerKind::none; break;
        }
        if (p.ffn == LayerPlan::Ffn::moe) {
            k.moe = moe_shape;
        } else if (p.ffn == LayerPlan::Ffn::dense) {
            k.mlp = mlp;
            k.mlp.ffn = moe ? dense_ffn : ffn;
        }
        b.add(k);
    }
    m.stack = b.build();
    if (!notes.empty()) m.not_modelled = std::make_shared<const std::vector<Model::NotModelled>>(std::move(notes));
    return m;
}

}  // namespace lostflops
