// A torchtitan job config read key by key (torchtitan_import.cpp): the first
// of a setting's names present (a key moved between torchtitan versions),
// typed and bounded, each key read remembered; the keys left over become
// notes (ignored, not modelled, unknown, with the nearest key looked for or
// known: "did you mean"). Internal to src/interop.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "interop/toml_subset.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

class Config {
public:
    Config(TomlTable t, std::string source) : t_(std::move(t)), source_(std::move(source)) {}

    // The first of the given keys present (a key moved between torchtitan versions).
    const TomlValue* find(std::initializer_list<const char*> keys, std::string* which = nullptr) {
        const TomlValue* found = nullptr;
        for (const char* k : keys) {
            asked_.emplace_back(k);
            const auto it = t_.find(k);
            if (it == t_.end()) continue;
            if (found) throw InputError(source_, k, "the same setting as " + *which + "; give one");
            found = &it->second;
            if (which) *which = k;
            used_.push_back(k);
        }
        return found;
    }
    int64_t integer(std::initializer_list<const char*> keys, int64_t fallback, int64_t min = 1) {
        std::string key;
        const TomlValue* v = find(keys, &key);
        if (!v) return fallback;
        const auto* i = std::get_if<int64_t>(&v->v);
        if (!i) throw InputError(source_, key, "expected an integer");
        if (*i < min || *i > INT32_MAX)
            throw InputError(source_, key, "expected an integer from " + std::to_string(min) + " to " +
                                               std::to_string(INT32_MAX) + " (2^31 - 1), got " + std::to_string(*i));
        return *i;
    }
    std::string text(std::initializer_list<const char*> keys, const std::string& fallback) {
        std::string key;
        const TomlValue* v = find(keys, &key);
        if (!v) return fallback;
        if (const auto* s = std::get_if<std::string>(&v->v)) return *s;
        if (const auto* i = std::get_if<int64_t>(&v->v)) return std::to_string(*i);
        throw InputError(source_, key, "expected a string");
    }
    bool flag(std::initializer_list<const char*> keys) {
        std::string key;
        const TomlValue* v = find(keys, &key);
        if (!v) return false;
        const auto* b = std::get_if<bool>(&v->v);
        if (!b) throw InputError(source_, key, "expected true or false");
        return *b;
    }
    // Notes for every key not read above.
    std::vector<ImportNote> leftovers() const;
    const std::string& source() const { return source_; }

private:
    TomlTable t_;
    std::string source_;
    std::vector<std::string> used_;
    std::vector<std::string> asked_;  // every key looked for: an unknown key's "did you mean"
};


}  // namespace lostflops::interop
