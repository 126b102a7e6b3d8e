// torchtitan flavours <-> lostflops model presets. The flavours are those of
// torchtitan's model registries, each mapped to the catalog preset of the
// published model it loads (torchtitan's state-dict adapters convert those
// Hugging Face checkpoints, so the shapes agree), plus overrides where the
// flavour differs from the published model:
// - llama3 8B / 70B / 405B: torchtitan/models/llama3/__init__.py (llama3_configs;
//   ffn widths 14336 / 28672 / 53248 follow from multiple_of and
//   ffn_dim_multiplier and match the Hugging Face configs); llama2 7B / 13B / 70B.
// - deepseek_v3 671B: torchtitan/models/deepseek_v3/__init__.py
//   (pytorch/torchtitan@7a639a0cb453790e132598c33862e855ab8c5f7f,
//   deepseekv3_configs["671B"]: 61 layers, 3 dense, 256 experts top-8 + 1
//   shared, q/kv LoRA 1536/512); its model has no multi-token prediction
//   module, so the preset's is removed.
// - qwen3 8B / 32B / 30B-A3B / 235B-A22B: torchtitan/models/qwen3/__init__.py
//   (pytorch/torchtitan@cfb93265153094f99736547f26b5346410181102, qwen3_configs).
// - llama4 17bx16e / 17bx128e: torchtitan/models/llama4/__init__.py
//   (pytorch/torchtitan@1b230bb885ff7f3bc1ca5973720a4a3c00a26615): full
//   attention on every layer (the chunked, NoPE-every-4th layer attention of
//   the published models is the `_irope` flavours: 17bx16e_irope,
//   17bx128e_irope, with fixed_attn_block_size 8192).
// - gpt_oss 20b / 120b: torchtitan/models/gpt_oss/__init__.py
//   (pytorch/torchtitan@5a3bc91b8677d9a5a0c877f2020e97669f1e891f, gptoss_configs).
// The shapes are read from the presets of data/catalog/models.yaml, so a
// flavour and its preset cannot drift apart.
#include "interop/torchtitan_flavors.h"

#include "job/did_you_mean.h"
#include "job/job_sections.h"

#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "lostflops/catalog.h"

namespace lostflops::interop {

namespace {

const FlavorOverride kNoMtp{"num_nextn_predict_layers", "0", "torchtitan's deepseek_v3 has no multi-token prediction module"};
const FlavorOverride kNoChunks{"attention_chunk_size", "null",
                               "torchtitan's llama4 flavour attends over the whole sequence on every layer (the _irope flavours chunk)"};

const std::vector<TorchtitanFlavor>& flavors() {
    static const std::vector<TorchtitanFlavor> f = {
        {"llama3", "8B", "llama3-8b", {}},
        {"llama3", "70B", "llama3-70b", {}},
        {"llama3", "405B", "llama3.1-405b", {}},
        {"llama2", "7B", "llama2-7b", {}},
        {"llama2", "13B", "llama2-13b", {}},
        {"llama2", "70B", "llama2-70b", {}},
        {"deepseek_v3", "671B", "deepseek-v3", {kNoMtp}},
        {"qwen3", "8B", "qwen3-8b", {}},
        {"qwen3", "32B", "qwen3-32b", {}},
        {"qwen3", "30B-A3B", "qwen3-30b-a3b", {}},
        {"qwen3", "235B-A22B", "qwen3-235b-a22b", {}},
        {"llama4", "17bx16e", "llama4-scout", {kNoChunks}},
        {"llama4", "17bx128e", "llama4-maverick", {kNoChunks}},
        {"llama4", "17bx16e_irope", "llama4-scout", {}},
        {"llama4", "17bx128e_irope", "llama4-maverick", {}},
        {"gpt_oss", "20b", "gpt-oss-20b", {}},
        {"gpt_oss", "120b", "gpt-oss-120b", {}},
    };
    return f;
}

}  // namespace

std::optional<TorchtitanFlavor> flavor_by_name(const std::string& name, const std::string& flavor) {
    for (const auto& f : flavors())
        if (f.name == name && f.flavor == flavor) return f;
    return std::nullopt;
}

Model flavor_shape(const TorchtitanFlavor& f) {
    if (!model_preset_yaml(f.preset)) throw std::logic_error("torchtitan flavour table names an unknown preset " + f.preset);
    YAML::Node node(YAML::NodeType::Map);
    node["preset"] = f.preset;
    for (const auto& o : f.overrides) node[o.key] = YAML::Load(o.value);
    return read_model(node, "data/catalog/models.yaml");
}

std::optional<TorchtitanFlavor> flavor_of(const Model& m) {
    for (const auto& f : flavors())
        if (flavor_shape(f).same_shape(m)) return f;
    return std::nullopt;
}

namespace {

// The flavour whose preset, without its overrides, has this model's shape
// (none when the model is a flavour itself).
const TorchtitanFlavor* near_flavor(const Model& m) {
    if (flavor_of(m)) return nullptr;
    for (const auto& f : flavors()) {
        if (f.overrides.empty()) continue;
        TorchtitanFlavor preset_only = f;
        preset_only.overrides.clear();
        if (flavor_shape(preset_only).same_shape(m)) return &f;
    }
    return nullptr;
}

}  // namespace

std::optional<std::string> flavor_near_miss(const Model& m) {
    const TorchtitanFlavor* f = near_flavor(m);
    if (f == nullptr) return std::nullopt;
    std::string why;
    for (const auto& o : f->overrides) why += (why.empty() ? "" : "; ") + o.why + " (model." + o.key + ": " + o.value + ")";
    return "the preset " + f->preset + " is torchtitan's " + f->name + " " + f->flavor + " but for: " + why;
}

std::vector<std::string> flavor_near_miss_sets(const Model& m) {
    std::vector<std::string> out;
    if (const TorchtitanFlavor* f = near_flavor(m))
        for (const auto& o : f->overrides) out.push_back("model." + o.key + "=" + o.value);
    return out;
}

std::string known_flavors() {
    std::string out;
    for (size_t i = 0; i < flavors().size(); ++i) {
        const auto& f = flavors()[i];
        const bool first = i == 0 || flavors()[i - 1].name != f.name;
        out += first ? (i == 0 ? "" : ", ") + f.name + " " + f.flavor : "/" + f.flavor;
    }
    return out;
}

std::string flavor_did_you_mean(const std::string& name, const std::string& flavor) {
    std::vector<std::string> rows;
    for (const auto& f : flavors()) rows.push_back(f.name + " " + f.flavor);
    return did_you_mean(name + " " + flavor, rows);
}

}  // namespace lostflops::interop
