// torchtitan flavours <-> lostflops model presets. The flavours are those of
// torchtitan/models/llama3/__init__.py (llama3_configs: 8B, 70B, 405B, whose
// ffn widths 14336 / 28672 / 53248 follow from multiple_of and
// ffn_dim_multiplier and match the Hugging Face configs) and of torchtitan's
// llama2 model (7B, 13B, 70B); the shapes are read from the presets of
// data/catalog/models.yaml, so a flavour and its preset cannot drift apart.
#include "interop/torchtitan_flavors.h"

#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "lostflops/catalog.h"

namespace lostflops::interop {

namespace {

const TorchtitanFlavor kFlavors[] = {
    {"llama3", "8B", "llama3-8b"},   {"llama3", "70B", "llama3-70b"}, {"llama3", "405B", "llama3.1-405b"},
    {"llama2", "7B", "llama2-7b"},   {"llama2", "13B", "llama2-13b"}, {"llama2", "70B", "llama2-70b"},
};

}  // namespace

std::optional<TorchtitanFlavor> flavor_by_name(const std::string& name, const std::string& flavor) {
    for (const auto& f : kFlavors)
        if (f.name == name && f.flavor == flavor) return f;
    return std::nullopt;
}

Model preset_shape(const std::string& preset) {
    const auto text = model_preset_yaml(preset);
    if (!text) throw std::logic_error("torchtitan flavour table names an unknown preset " + preset);
    const YAML::Node n = YAML::Load(*text);
    Model m;
    m.name = preset;
    m.layers = n["num_hidden_layers"].as<int>();
    m.hidden = n["hidden_size"].as<int64_t>();
    m.ffn = n["intermediate_size"].as<int64_t>();
    m.heads = n["num_attention_heads"].as<int>();
    m.kv_heads = n["num_key_value_heads"] ? n["num_key_value_heads"].as<int>() : m.heads;
    m.vocab = n["vocab_size"].as<int64_t>();
    const std::string act = n["hidden_act"].as<std::string>();
    m.mlp = act == "silu" || act == "swiglu" ? MlpKind::gated : MlpKind::gelu;
    m.tied_embeddings = n["tie_word_embeddings"] ? n["tie_word_embeddings"].as<bool>() : true;
    return m;
}

std::optional<TorchtitanFlavor> flavor_of(const Model& m) {
    if (m.is_moe()) return std::nullopt;
    for (const auto& f : kFlavors) {
        const Model p = preset_shape(f.preset);
        if (p.layers == m.layers && p.hidden == m.hidden && p.ffn == m.ffn && p.heads == m.heads &&
            p.kv_heads == m.kv_heads && p.vocab == m.vocab && p.mlp == m.mlp && p.tied_embeddings == m.tied_embeddings)
            return f;
    }
    return std::nullopt;
}

std::string known_flavors() { return "llama3 8B/70B/405B, llama2 7B/13B/70B"; }

}  // namespace lostflops::interop
