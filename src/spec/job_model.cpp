// The `model:` section of a job: Hugging Face config.json keys, optionally on
// top of a catalog preset (`preset:`, data/catalog/models.yaml) or a real
// config.json (`hf_config:`), the user's own keys winning. The model's printed
// name says when the user's keys changed the preset's or config's shape, so a
// report never labels an 8B shape "llama3-70b".
#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "spec/job_sections.h"
#include "spec/text_input.h"
#include "spec/yaml_document.h"
#include "spec/yaml_reader.h"

namespace lostflops {

namespace {

// Hugging Face config.json keys that do not change the cost model; accepted in
// `model:` so a pasted config.json works.
const std::set<std::string> kTolerantModelKeys = {
    "architectures", "model_type", "torch_dtype", "transformers_version", "rope_theta",
    "rope_scaling", "max_position_embeddings", "rms_norm_eps", "layer_norm_eps",
    "layer_norm_epsilon", "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range",
    "use_cache", "attention_dropout", "attention_bias", "mlp_bias", "hidden_dropout",
    "pretraining_tp", "sliding_window", "use_sliding_window", "max_window_layers",
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "head_dim",
    "source", "name", "n_positions", "n_ctx", "activation_function", "resid_pdrop", "embd_pdrop",
    "attn_pdrop", "summary_type", "summary_use_proj", "vocab_file", "description"};

// The keys that decide the model's shape: all read_model_keys reads but `name`.
const std::vector<std::string> kShapeKeys = {
    "num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
    "vocab_size", "hidden_act", "tie_word_embeddings", "num_local_experts", "num_experts",
    "num_experts_per_tok", "moe_intermediate_size"};

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
}

// The shape keys `user` gives a value different from `base`'s.
std::vector<std::string> changed_keys(const YAML::Node& base, const YAML::Node& user) {
    std::vector<std::string> out;
    for (const auto& k : kShapeKeys) {
        const YAML::Node u = user[k];
        if (!u || u.IsNull()) continue;
        const YAML::Node b = base[k];
        if (!b || !b.IsScalar() || !u.IsScalar() || b.Scalar() != u.Scalar()) out.push_back(k);
    }
    return out;
}

// "llama3-70b" when the user's keys leave the preset's shape as it is, else
// "custom (llama3-70b preset with overrides: hidden_size, ...)".
std::string model_label(const std::string& what, const std::string& kind, const std::vector<std::string>& changed) {
    if (changed.empty()) return what;
    return fmt::format("custom ({} {} with overrides: {})", what, kind, join(changed));
}

struct ResolvedModel {
    YAML::Node node;                 // the keys read_model_keys reads
    std::string hf_path;             // the config.json, when there is one
    std::set<std::string> hf_keys;   // keys whose value came from it
};

YAML::Node apply_preset(YAML::Node node, const std::string& file) {
    const std::string name = node["preset"].IsScalar() ? node["preset"].Scalar() : "";
    auto yaml = model_preset_yaml(name);
    if (!yaml) {
        std::string all;
        for (const auto& n : model_names()) all += (all.empty() ? "" : ", ") + n;
        throw InputError(file, "model.preset", "unknown model '" + name + "'; known: " + all);
    }
    const YAML::Node base = YAML::Load(*yaml);
    const auto changed = changed_keys(base, node);
    YAML::Node out = merged(base, node, "preset", file, "model");
    if (!out["name"]) out["name"] = model_label(name, "preset", changed);
    return out;
}

ResolvedModel apply_hf_config(YAML::Node node, const std::string& file) {
    if (!node["hf_config"].IsScalar()) throw InputError(file, "model.hf_config", "expected a path");
    std::filesystem::path p = node["hf_config"].Scalar();
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    if (p == "-") p = "./-";  // "-" is standard input only for the job file itself
    ResolvedModel r;
    r.hf_path = p.string();
    YAML::Node hf;
    try {
        hf = load_yaml_document(read_text_file(r.hf_path, kMaxJobBytes, "config.json (Hugging Face)"), r.hf_path);
        if (!hf.IsMap()) throw InputError(r.hf_path, "", "expected a JSON object (config.json)");
    } catch (const InputError& e) {
        // Named from the job's side too: which job, which key pointed here.
        throw InputError(file, "model.hf_config", e.what());
    }
    // Keep only the keys the cost model reads; a config.json has many more.
    YAML::Node keep(YAML::NodeType::Map);
    for (const auto& k : kShapeKeys)
        if (hf[k]) keep[k] = hf[k];
    for (const auto& k : kShapeKeys)
        if (keep[k] && !node[k]) r.hf_keys.insert(k);
    const auto changed = changed_keys(keep, node);
    r.node = merged(keep, node, "hf_config", file, "model");
    if (!r.node["name"]) r.node["name"] = model_label(p.parent_path().filename().string(), "config.json", changed);
    return r;
}

ResolvedModel resolve_model_node(YAML::Node node, const std::string& file) {
    if (!node || node.IsNull()) throw InputError(file, "model", "missing section");
    if (!node.IsMap()) throw InputError(file, "model", "expected a mapping");
    if (node["preset"] && node["hf_config"])
        throw InputError(file, "model.preset",
                         "given together with model.hf_config; give one of them (and your own keys on top)");
    if (node["preset"]) return {apply_preset(node, file), "", {}};
    if (node["hf_config"]) return apply_hf_config(node, file);
    return {node, "", {}};
}

Model read_model_keys(const YAML::Node& node, const std::string& file) {
    YamlSection s(node, file, "model");
    Model m;
    m.name = s.str_opt("name").value_or("model");
    m.layers = static_cast<int>(s.int_req("num_hidden_layers", 1, 100'000));
    m.hidden = s.int_req("hidden_size", 1, 1'000'000);
    m.heads = static_cast<int>(s.int_req("num_attention_heads", 1, 100'000));
    m.kv_heads = static_cast<int>(s.int_or("num_key_value_heads", m.heads, 1, 100'000));
    m.ffn = s.int_or("intermediate_size", 4 * m.hidden, 1, 10'000'000);
    m.vocab = s.int_req("vocab_size", 1, 100'000'000);
    const auto act = s.choice_opt("hidden_act", {"silu", "swiglu", "gelu", "gelu_new", "gelu_fast",
                                                 "gelu_pytorch_tanh", "relu", "geglu"});
    m.mlp = (act && (*act == "silu" || *act == "swiglu" || *act == "geglu")) ? MlpKind::gated
                                                                              : MlpKind::gelu;
    // Hugging Face PretrainedConfig defaults tie_word_embeddings to true.
    m.tied_embeddings = s.bool_or("tie_word_embeddings", true);
    auto experts = s.int_opt("num_local_experts", 1, 100'000);
    if (!experts) experts = s.int_opt("num_experts", 1, 100'000);
    if (experts && *experts > 1) {
        m.experts = static_cast<int>(*experts);
        m.experts_per_token = static_cast<int>(s.int_req("num_experts_per_tok", 1, 100'000));
        m.moe_ffn = s.int_or("moe_intermediate_size", m.ffn, 1, 10'000'000);
    } else {
        s.int_opt("num_experts_per_tok", 1, 100'000);
        s.int_opt("moe_intermediate_size", 1, 10'000'000);
    }
    s.finish(kTolerantModelKeys);
    return m;
}

}  // namespace

Model read_model(YAML::Node node, const std::string& file) {
    const ResolvedModel r = resolve_model_node(std::move(node), file);
    try {
        return read_model_keys(r.node, file);
    } catch (const InputError& e) {
        // A bad value the config.json gave: name the config and its key.
        const std::string prefix = "model.";
        if (!r.hf_path.empty() && e.file() == file && e.key().rfind(prefix, 0) == 0 &&
            r.hf_keys.count(e.key().substr(prefix.size())))
            throw InputError(file, "model.hf_config",
                             fmt::format("{}: {}: {}", r.hf_path, e.key().substr(prefix.size()), e.message()));
        throw;
    }
}

}  // namespace lostflops
