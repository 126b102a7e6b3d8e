// The `model:` section of a job: Hugging Face config.json keys, optionally on
// top of a catalog preset (`preset:`, data/catalog/models.yaml) or a real
// config.json (`hf_config:`), the user's own keys winning; the keys are read
// into a layer stack by job/model_read.cpp (every key's use: model_keys.h).
// A config.json key lostflops does not know is kept out of the model and
// noted as not modelled. The model's printed name says when the user's keys
// changed the preset's or config's shape, so a report never labels an 8B
// shape "llama3-70b".
#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "job/did_you_mean.h"
#include "job/job_sections.h"
#include "job/model_keys.h"
#include "job/model_read.h"
#include "job/text_input.h"
#include "job/yaml_document.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace {

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
}

// The keys that decide the shape (read keys of model_keys.h) that `user`
// gives a value different from `base`'s, in the table's order. model_type
// among them: it picks the family whose rules read the rest
// (`--set model.model_type=mamba` made llama3-70b's 80 layers Mamba ones,
// 35.7 B parameters, under the preset's name).
std::vector<std::string> changed_keys(const YAML::Node& base, const YAML::Node& user) {
    std::vector<std::string> out;
    for (const auto& row : kModelKeys) {
        if (row.use != KeyUse::read) continue;
        const YAML::Node u = user[row.key];
        if (!u || u.IsNull()) continue;
        const YAML::Node b = base[row.key];
        if (!b || !b.IsScalar() || !u.IsScalar() || b.Scalar() != u.Scalar()) out.push_back(row.key);
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
    YAML::Node node;                 // the keys read_model_shape reads
    std::string hf_path;             // the config.json, when there is one
    std::set<std::string> hf_keys;   // keys whose value came from it
    std::vector<Model::NotModelled> notes;  // its keys lostflops does not know
};

ResolvedModel apply_preset(YAML::Node node, const std::string& file) {
    const std::string name = preset_name(node["preset"], file, "model");
    auto yaml = model_preset_yaml(name);
    if (!yaml) {
        std::string all;
        for (const auto& n : model_names()) all += (all.empty() ? "" : ", ") + n;
        throw InputError(file, "model.preset",
                         "unknown model '" + name + "'; known: " + all + did_you_mean(name, model_names()));
    }
    const YAML::Node base = YAML::Load(*yaml);
    ResolvedModel r;
    // The job's own text_config contradicting its own keys is noted, as
    // under a config.json or no preset (it was dropped without a word).
    node = flatten_model_node(node, file, /*keep_nulls=*/true, &r.notes);
    const auto changed = changed_keys(base, node);
    r.node = flatten_model_node(merged(base, node, "preset", file, "model"), file);
    if (!r.node["name"]) r.node["name"] = model_label(name, "preset", changed);
    return r;
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
        hf = load_yaml_document(read_text_file(r.hf_path, kMaxJobBytes, "config.json (Hugging Face)"), r.hf_path, "",
                                Duplicates::same_ok);
        if (!hf.IsMap()) throw InputError(r.hf_path, "", "expected a JSON object (config.json)");
    } catch (const InputError& e) {
        // Named from the job's side too: which job, which key pointed here.
        throw InputError(file, "model.hf_config", e.what());
    }
    // Every key of the config: known ones go to the reader (which notes the
    // ones it does not model); unknown ones are noted here and left out.
    hf = flatten_model_node(hf, r.hf_path, false, &r.notes);
    YAML::Node keep(YAML::NodeType::Map);
    for (const auto& kv : hf) {
        const std::string& k = kv.first.Scalar();
        if (model_key_row(k) == nullptr) {
            static const std::vector<std::string> known = [] {
                std::vector<std::string> v;
                for (const auto& row : kModelKeys) v.emplace_back(row.key);
                return v;
            }();
            r.notes.push_back(
                {k, "a config.json key lostflops does not know (" + r.hf_path + ")" + did_you_mean(k, known)});
            continue;
        }
        keep[k] = kv.second;
        if (!node[k]) r.hf_keys.insert(k);
    }
    node = flatten_model_node(node, file, /*keep_nulls=*/true, &r.notes);
    const auto changed = changed_keys(keep, node);
    r.node = flatten_model_node(merged(keep, node, "hf_config", file, "model"), file);
    // Named after its folder (.../Meta-Llama-3-8B/config.json), or the file (deepseek-v3.json).
    const std::string label = p.filename() == "config.json" ? p.parent_path().filename().string() : p.stem().string();
    if (!r.node["name"]) r.node["name"] = model_label(label, "config.json", changed);
    return r;
}

ResolvedModel resolve_model_node(YAML::Node node, const std::string& file) {
    if (!node || node.IsNull()) throw InputError(file, "model", "missing section");
    if (!node.IsMap()) throw InputError(file, "model", "expected a mapping");
    // A null preset or hf_config is its default, none (`--set model.preset=null
    // --set model.hf_config=PATH` swaps a job's preset for a config.json).
    if ((node["preset"] && node["preset"].IsNull()) || (node["hf_config"] && node["hf_config"].IsNull())) {
        node = YAML::Clone(node);
        for (const char* k : {"preset", "hf_config"})
            if (node[k] && node[k].IsNull()) node.remove(k);
    }
    if (node["preset"] && node["hf_config"])
        throw InputError(file, "model.preset",
                         "given together with model.hf_config; give one of them (and your own keys on top)");
    if (node["preset"]) return apply_preset(node, file);
    if (node["hf_config"]) return apply_hf_config(node, file);
    ResolvedModel plain;
    plain.node = flatten_model_node(node, file, false, &plain.notes);
    return plain;
}

}  // namespace

Model read_model(YAML::Node node, const std::string& file) {
    const ResolvedModel r = resolve_model_node(std::move(node), file);
    try {
        return read_model_shape(r.node, file, r.notes);
    } catch (const InputError& e) {
        // A bad value the config.json gave: name the config and its key.
        // A key inside one (block_configs[3].ffn.ffn_mult) is the config's when its root is.
        const std::string prefix = "model.";
        const std::string key = e.key().rfind(prefix, 0) == 0 ? e.key().substr(prefix.size()) : "";
        const std::string root = key.substr(0, key.find('['));
        if (!r.hf_path.empty() && e.file() == file && !key.empty() && (r.hf_keys.count(key) || r.hf_keys.count(root)))
            throw InputError(file, "model.hf_config", fmt::format("{}: {}: {}", r.hf_path, key, e.message()));
        throw;
    }
}

}  // namespace lostflops
