// Selective-recompute module names (Megatron-Core transformer_config.py
// recompute_modules: "core_attn", "moe_act", "layernorm", "mla_up_proj",
// "mlp", "moe", "shared_experts"; "gdn_norm_out", "gdp_in_proj", "gdp_qkv"
// and "mhc" belong to mixers and connections this tool does not model).
#include "job/recompute_modules.h"

#include <algorithm>

#include "lostflops/error.h"
#include "job/did_you_mean.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace {

const char* const kNotModelled[] = {"gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc"};

std::vector<std::string> known_names() {
    std::vector<std::string> out;
    for (int i = 0; i < kRecomputeModules; ++i) out.emplace_back(to_string(static_cast<RecomputeModule>(i)));
    return out;
}

std::string listed(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

}  // namespace

unsigned recompute_modules_of(const std::vector<std::string>& names, const std::string& file, const std::string& key) {
    const std::vector<std::string> known = known_names();
    unsigned bits = 0;
    for (const std::string& n : names) {
        const auto it = std::find(known.begin(), known.end(), n);
        if (it != known.end()) {
            bits |= 1u << static_cast<int>(it - known.begin());
            continue;
        }
        for (const char* nm : kNotModelled)
            if (n == nm) throw InputError(file, key, "'" + n + "': a Megatron-Core recompute module this tool does not model; one of " + listed(known));
        throw InputError(file, key, "unknown recompute module '" + n + "'; expected one of " + listed(known) + did_you_mean(n, known));
    }
    return bits;
}

unsigned read_recompute_modules(YamlSection& s, Recompute recompute) {
    const std::string key = s.key_path("recompute_modules");
    const YAML::Node v = s.raw("recompute_modules");
    if (!v || v.IsNull()) return kDefaultRecomputeModules;  // null: the key's default, as for every key
    std::vector<std::string> names;
    if (v.IsScalar()) {
        names.push_back(v.Scalar());
    } else if (v.IsSequence()) {
        for (size_t i = 0; i < v.size(); ++i) {
            if (!v[i].IsScalar()) throw InputError(s.file(), key, "expected a list of module names");
            names.push_back(v[i].Scalar());
        }
    } else {
        throw InputError(s.file(), key, "expected a list of module names (Megatron-Core --recompute-modules)");
    }
    // With recompute none or full the list is read, checked and left unused
    // (a warning, job/job_warnings.cpp), as Megatron-Core reads it only with
    // --recompute-granularity selective.
    (void)recompute;
    return recompute_modules_of(names, s.file(), key);
}

std::vector<std::string> recompute_module_names(unsigned modules) {
    std::vector<std::string> out;
    for (int i = 0; i < kRecomputeModules; ++i)
        if ((modules >> i) & 1u) out.emplace_back(to_string(static_cast<RecomputeModule>(i)));
    return out;
}

}  // namespace lostflops
