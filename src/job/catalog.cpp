// Built-in catalogs (include/lostflops/catalog.h): GPUs, model presets and
// cluster presets, read from data/catalog/*.yaml embedded in the binary
// (cmake/embed.cmake). Each file is parsed once, on first use (function-local
// statics). Every figure's public source is in the data files themselves.
#include "lostflops/catalog.h"

#include <map>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "lostflops/embedded.h"
#include "lostflops/error.h"
#include "job/gpu_parse.h"
#include "job/yaml_document.h"

namespace lostflops {

namespace {

using Entries = std::map<std::string, YAML::Node>;

// The entries of one embedded catalog file, keyed by name. A file missing from
// the build is a bug (logic_error); a malformed one throws InputError naming it.
Entries load_catalog(const std::string& name) {
    const auto text = embedded_file(name);
    if (!text) throw std::logic_error("catalog file not embedded: " + name);
    // Duplicate keys inside an entry would silently keep the first figure.
    const YAML::Node root = load_yaml_document(std::string(*text), name);
    if (!root.IsMap()) throw InputError(name, "", "expected a mapping of names to entries");
    Entries c;
    for (const auto& kv : root) {
        if (!kv.first.IsScalar()) throw InputError(name, "", "entry names must be strings");
        if (!kv.second.IsMap())
            throw InputError(name, kv.first.Scalar(), "expected a mapping");
        if (!c.emplace(kv.first.Scalar(), kv.second).second)
            throw InputError(name, kv.first.Scalar(), "duplicate entry");
    }
    return c;
}

// The entry as YAML text, without the documentation-only `source` keys.
std::string without_source(const YAML::Node& entry) {
    YAML::Node copy = YAML::Clone(entry);
    copy.remove("source");
    for (auto kv : copy)
        if (kv.second.IsMap() && kv.second["source"]) kv.second.remove("source");
    YAML::Emitter out;
    out << copy;
    return out.c_str();
}

// Presets are kept as text, so after the one-time (thread-safe) initialisation
// nothing shared is a yaml-cpp node that concurrent readers could touch.
struct Preset {
    std::string yaml;    // the entry without its `source` keys
    std::string source;  // the entry's top-level `source:`, "" when absent
};
using Presets = std::map<std::string, Preset>;

Presets load_presets(const std::string& name) {
    Presets out;
    for (const auto& [key, node] : load_catalog(name)) {
        const YAML::Node src = node["source"];
        out.emplace(key, Preset{without_source(node), src && src.IsScalar() ? src.Scalar() : ""});
    }
    return out;
}

const Presets& models() {
    static const Presets p = load_presets("catalog/models.yaml");
    return p;
}

const Presets& clusters() {
    static const Presets p = load_presets("catalog/clusters.yaml");
    return p;
}

const std::map<std::string, Gpu>& gpus() {
    static const std::map<std::string, Gpu> all = [] {
        const std::string file = "catalog/gpus.yaml";
        std::map<std::string, Gpu> out;
        for (const auto& [name, node] : load_catalog(file)) {
            Gpu g = parse_gpu_node(node, file, name);
            g.name = name;
            out.emplace(name, std::move(g));
        }
        return out;
    }();
    return all;
}

// std::map iterates in sorted order, so the names come out sorted.
template <typename Map>
std::vector<std::string> keys(const Map& m) {
    std::vector<std::string> out;
    for (const auto& kv : m) out.push_back(kv.first);
    return out;
}

std::optional<std::string> preset_yaml(const Presets& p, const std::string& name) {
    const auto it = p.find(name);
    if (it == p.end()) return std::nullopt;
    return it->second.yaml;
}

std::optional<std::string> preset_source(const Presets& p, const std::string& name) {
    const auto it = p.find(name);
    if (it == p.end()) return std::nullopt;
    return it->second.source;
}

}  // namespace

std::optional<Gpu> find_gpu(const std::string& name) {
    const auto& all = gpus();
    const auto it = all.find(name);
    if (it == all.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> gpu_names() { return keys(gpus()); }
std::vector<std::string> model_names() { return keys(models()); }
std::vector<std::string> cluster_names() { return keys(clusters()); }

std::optional<std::string> model_preset_yaml(const std::string& name) {
    return preset_yaml(models(), name);
}

std::optional<std::string> cluster_preset_yaml(const std::string& name) {
    return preset_yaml(clusters(), name);
}

std::optional<std::string> model_preset_source(const std::string& name) {
    return preset_source(models(), name);
}

std::optional<std::string> cluster_preset_source(const std::string& name) {
    return preset_source(clusters(), name);
}

}  // namespace lostflops
