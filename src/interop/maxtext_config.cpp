// The values of a MaxText config (maxtext_config.h), as MaxText's pyconfig
// reads them (AI-Hypercomputer/maxtext src/maxtext/configs/base.yml and
// pyconfig.py, @e591f30, 2026): numbers as YAML 1.1 and Python write them
// (32_000), true or false; the mesh: ici_<axis>_parallelism inside a slice,
// dcn_<axis>_parallelism across slices, the product over axes = chips per
// slice and slices, one axis of each may be -1, "the rest" (base.yml:
// ici_fsdp_parallelism: -1, dcn_data_parallelism: -1), each axis onto the
// job's setting of maxtext_keys.h; global_parameter_scale S (a power of two)
// doubles heads and MLP width, the embedding and the layers in turn
// (pyconfig.get_individual_scales: log2 S = 3 b + r; heads and MLP x2^(b +
// [r > 0]), embedding x2^(b + [r > 1]), layers x2^b).
#include "interop/maxtext_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "interop/maxtext_keys.h"
#include "job/did_you_mean.h"
#include "lostflops/error.h"

namespace lostflops::interop::maxtext {

std::string Config::where(const std::string& key) const {
    const auto it = values_.find(key);
    return it == values_.end() ? source_ : it->second.from;
}

std::optional<std::string> Config::text(const std::string& key) {
    used_.insert(key);
    const auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second.value;
}

std::optional<double> Config::number(const std::string& key, double lo, double hi) {
    const auto t = text(key);
    if (!t) return std::nullopt;
    std::string s = *t;
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());  // YAML 1.1 / Python 32_000
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
        throw InputError(from(key), key, "expected a number, got '" + *t + "'");
    if (v < lo || v > hi) throw InputError(from(key), key, fmt::format("{} is out of range; expected {} to {}", *t, lo, hi));
    return v;
}

std::optional<int64_t> Config::integer(const std::string& key, int64_t lo, int64_t hi) {
    const auto v = number(key, static_cast<double>(lo), static_cast<double>(hi));
    if (!v) return std::nullopt;
    if (*v != std::floor(*v)) throw InputError(from(key), key, "expected a whole number");
    return static_cast<int64_t>(*v);
}

bool Config::flag(const std::string& key, bool fallback) {
    const auto t = text(key);
    if (!t) return fallback;
    std::string s = *t;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s == "true") return true;
    if (s == "false") return false;
    throw InputError(from(key), key, "expected true or false, got '" + *t + "'");
}

std::vector<ImportNote> Config::leftovers() const {
    std::vector<ImportNote> notes;
    // Every key the importer asks for, given or not: a typo of one is named.
    const std::vector<std::string> asked(used_.begin(), used_.end());
    for (const auto& [key, v] : values_) {
        if (used_.count(key)) continue;
        if (const char* why = interop::maxtext_nocost_reason(key))
            notes.push_back({NoteKind::ignored, key, why});
        else
            notes.push_back({NoteKind::not_modelled, key,
                             "a MaxText setting lostflops does not model" + did_you_mean(key, asked)});
    }
    return notes;
}

std::map<std::string, int64_t> mesh(Config& c, const char* level, int64_t total, std::vector<ImportNote>& notes) {
    std::map<std::string, int64_t> out;
    std::string rest_key;
    int64_t product = 1;
    std::vector<std::pair<std::string, int64_t>> axes;
    for (const auto& a : interop::maxtext_mesh_axes()) {
        const std::string key = fmt::format("{}_{}_parallelism", level, a.name);
        auto v = c.integer(key, -1, 1 << 20);
        // base.yml's defaults: ici_fsdp_parallelism -1, dcn_data_parallelism
        // -1, every other axis 1.
        const bool rest_by_default = std::string_view(level) == "ici" ? std::string_view(a.name) == "fsdp"
                                                                      : std::string_view(a.name) == "data";
        if (!v && rest_by_default) v = -1;
        if (!v) continue;
        if (*v == 0) throw InputError(c.where(key), key, "expected a positive degree or -1 (the rest)");
        if (*v == -1) {
            if (!rest_key.empty()) throw InputError(c.where(key), key, "a second -1; " + rest_key + " is already the rest");
            rest_key = key;
        } else {
            product *= *v;
            if (product > total) {  // also keeps the product far from overflowing
                throw InputError(c.where(key), key,
                                 fmt::format("the {} axes multiply to more than {}; expected {} ({})", level, total, total,
                                             *level == 'i' ? "chips per slice" : "slices"));
            }
        }
        axes.emplace_back(key, *v);
    }
    for (auto& [key, v] : axes) {
        if (v == -1) {
            if (total % product != 0)
                throw InputError(c.where(key), key, fmt::format("-1: the other {} axes take {} of the {} {}; it does not divide",
                                                                level, product, total, *level == 'i' ? "chips of a slice" : "slices"));
            v = total / product;
            product = total;
        }
    }
    if (product != total) {
        const std::string key = axes.empty() ? std::string(level) + "_*_parallelism" : axes.back().first;
        throw InputError(axes.empty() ? c.source() : c.where(key), key,
                         fmt::format("the {} axes multiply to {}; expected {} ({})", level, product, total,
                                     *level == 'i' ? "chips per slice" : "slices"));
    }
    for (const auto& [key, v] : axes) {
        const std::string axis = key.substr(4, key.size() - 4 - std::string("_parallelism").size());
        const auto a = std::find_if(interop::maxtext_mesh_axes().begin(), interop::maxtext_mesh_axes().end(),
                                     [&](const auto& m) { return axis == m.name; });
        const std::string to = a->maps_to;
        if (to.empty()) {
            if (v != 1) notes.push_back({NoteKind::not_modelled, key, "this mesh axis is not modelled; priced as data parallelism"});
            out["dp"] = out.count("dp") ? out["dp"] * v : v;
            continue;
        }
        out[to] = out.count(to) ? out[to] * v : v;
    }
    return out;
}

void scale_model(Config& c, std::map<std::string, int64_t>& dims) {
    const auto s = c.integer("global_parameter_scale", 1, 1 << 20);
    if (!s || *s == 1) return;
    if ((*s & (*s - 1)) != 0)
        throw InputError(c.where("global_parameter_scale"), "global_parameter_scale", "expected a power of two (pyconfig)");
    const int log2 = static_cast<int>(std::log2(static_cast<double>(*s)) + 0.5);
    const int base = log2 / 3, rem = log2 % 3;
    const int heads = base + (rem > 0 ? 1 : 0), emb = base + (rem > 1 ? 1 : 0);
    dims["base_num_query_heads"] <<= heads;
    dims["base_num_kv_heads"] <<= heads;
    dims["base_mlp_dim"] <<= heads;
    dims["base_emb_dim"] <<= emb;
    dims["base_num_decoder_layers"] <<= base;
}

}  // namespace lostflops::interop::maxtext
