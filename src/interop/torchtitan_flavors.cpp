// torchtitan flavours <-> lostflops model presets. The flavours are those of
// torchtitan/models/llama3/__init__.py (llama3_configs: 8B, 70B, 405B, whose
// ffn widths 14336 / 28672 / 53248 follow from multiple_of and
// ffn_dim_multiplier and match the Hugging Face configs) and of torchtitan's
// llama2 model (7B, 13B, 70B); the shapes are read from the presets of
// data/catalog/models.yaml, so a flavour and its preset cannot drift apart.
#include "interop/torchtitan_flavors.h"

#include "spec/job_sections.h"

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
    if (!model_preset_yaml(preset)) throw std::logic_error("torchtitan flavour table names an unknown preset " + preset);
    YAML::Node node(YAML::NodeType::Map);
    node["preset"] = preset;
    return read_model(node, "data/catalog/models.yaml");
}

std::optional<TorchtitanFlavor> flavor_of(const Model& m) {
    if (m.is_moe()) return std::nullopt;
    for (const auto& f : kFlavors) {
        const Model p = preset_shape(f.preset);
        if (p.same_shape(m)) return f;
    }
    return std::nullopt;
}

std::string known_flavors() { return "llama3 8B/70B/405B, llama2 7B/13B/70B"; }

}  // namespace lostflops::interop
