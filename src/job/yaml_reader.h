// Strict, typed access to one section of a YAML document.
//
// Every getter names the file and the dotted key in its InputError, checks the
// type and the allowed range, and records the key as used; finish() rejects
// keys nobody asked for, so a typo never silently keeps a default, and names
// the nearest key the section knows ("did you mean `global_batch_size`?"). A
// required key that is missing while an unknown key near it is present is
// reported as that unknown key, not as "missing".
//
// Scalars follow the YAML 1.2 core schema: a quoted scalar ('8', "true") is a
// string, never a number or a boolean; booleans are true/True/TRUE and
// false/False/FALSE (YAML 1.1's yes/no/on/off are errors that say so).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "lostflops/error.h"
#include "job/did_you_mean.h"

namespace lostflops {

// A YAML scalar as a number, in the YAML 1.2 core schema (section 10.3.2):
// decimal integers and floats with an optional sign and exponent, 0x hex and
// 0o octal integers. Each way of being wrong gets its own message, all with
// the accepted range: out of range (including overflow past a double),
// underflow (a nonzero value below the smallest normal double, 2.2e-308, as
// 5e-324), infinite (.inf), not a number (.nan), digit separators (1_000, a
// YAML 1.1 form), anything else "expected a number". [min, max] is inclusive.
double scalar_number(const YAML::Node& node, const std::string& file, const std::string& key,
                     double min, double max);
// Same, and the value must be a whole number (2.0 is 2; 1e3 is 1000).
int64_t scalar_integer(const YAML::Node& node, const std::string& file, const std::string& key,
                       int64_t min, int64_t max);

class YamlSection {
public:
    // node may be undefined/null (an absent section): then every key is absent.
    YamlSection(YAML::Node node, std::string file, std::string prefix);

    bool has(const std::string& key) const;
    YAML::Node raw(const std::string& key);  // marks the key used

    std::optional<int64_t> int_opt(const std::string& key, int64_t min, int64_t max);
    int64_t int_req(const std::string& key, int64_t min, int64_t max);
    int64_t int_or(const std::string& key, int64_t fallback, int64_t min, int64_t max);
    std::optional<double> num_opt(const std::string& key, double min, double max);
    double num_req(const std::string& key, double min, double max);
    double num_or(const std::string& key, double fallback, double min, double max);
    bool bool_or(const std::string& key, bool fallback);
    std::optional<std::string> str_opt(const std::string& key);
    // One of `allowed` (case-sensitive); the error lists them.
    std::optional<std::string> choice_opt(const std::string& key,
                                          const std::vector<std::string>& allowed);

    // Keys present but never read are an error, except those in `tolerated`;
    // the message names the nearest key the section asked for.
    void finish(const std::set<std::string>& tolerated = {}) const;
    // Every key present must be one of `schema` (checked at once, so a typo
    // in a section's name is reported before the section is missed).
    void check_keys(const std::vector<std::string>& schema) const;
    // The error for a required `key` that is absent: the unknown key present
    // nearest to it when there is one ("did you mean"), else
    // "missing; <expected>".
    InputError missing(const std::string& key, const std::string& expected) const;

    bool used(const std::string& key) const { return used_.count(key) > 0; }  // read by a getter or raw
    std::string key_path(const std::string& key) const;
    const std::string& file() const { return file_; }

private:
    YAML::Node node_;
    std::string file_;
    std::string prefix_;
    std::set<std::string> used_;
    mutable std::set<std::string> known_;  // every key asked about (has, raw, getters)
};

}  // namespace lostflops
