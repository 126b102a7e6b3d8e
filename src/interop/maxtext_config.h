// A MaxText config as the importer reads it (internal to src/interop): its
// flat keys with where each was given (the config or a --set), read as typed
// values with their ranges, and the keys never read; the degrees of the mesh
// axes and the model scaled by global_parameter_scale. maxtext_import.cpp
// makes the job file of them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lostflops/interop.h"

namespace lostflops::interop::maxtext {

class Config {
public:
    // Where a key was given; the config itself for a key at its default.
    std::string where(const std::string& key) const;
    Config(std::string source) : source_(std::move(source)) {}

    void set(const std::string& key, const std::string& value, const std::string& from) {
        values_[key] = {value, from};
    }
    bool has(const std::string& key) const { return values_.count(key) > 0; }
    const std::string& from(const std::string& key) const { return values_.at(key).from; }

    // The value of a key as given, nullopt when not given; the typed reads
    // throw InputError (naming where the key was given) for a value not of
    // the type or outside [lo, hi]. Every key asked for counts as read.
    std::optional<std::string> text(const std::string& key);
    std::optional<double> number(const std::string& key, double lo, double hi);
    std::optional<int64_t> integer(const std::string& key, int64_t lo, int64_t hi);
    bool flag(const std::string& key, bool fallback);
    // Keys never read: a note each (no cost, or not modelled).
    std::vector<ImportNote> leftovers() const;
    const std::string& source() const { return source_; }

private:
    struct Value {
        std::string value, from;
    };
    std::string source_;
    std::map<std::string, Value> values_;
    std::set<std::string> used_;
};

// ici_* or dcn_* degrees over the mesh axes, with one -1 resolved to
// `total` / the rest. Returns the degree of each lostflops setting.
std::map<std::string, int64_t> mesh(Config& c, const char* level, int64_t total, std::vector<ImportNote>& notes);

// global_parameter_scale applied to the model's dimensions (base_* keys).
void scale_model(Config& c, std::map<std::string, int64_t>& dims);

}  // namespace lostflops::interop::maxtext
