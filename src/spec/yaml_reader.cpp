// Strict typed reader over yaml-cpp nodes (see yaml_reader.h). yaml-cpp keeps
// scalars as text, so numbers are parsed here with full-match checks: "12abc",
// "1e400", "nan" and 2.5 for an integer key are all errors, never truncations.
#include "spec/yaml_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "lostflops/error.h"

namespace lostflops {

namespace {

std::string describe(double v) { return fmt::format("{:g}", v); }

std::optional<double> parse_double(const std::string& s) {
    if (s.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace

YamlSection::YamlSection(YAML::Node node, std::string file, std::string prefix)
    : node_(std::move(node)), file_(std::move(file)), prefix_(std::move(prefix)) {
    if (node_ && !node_.IsNull() && !node_.IsMap())
        throw InputError(file_, prefix_, "expected a mapping of keys to values");
}

std::string YamlSection::key_path(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
}

bool YamlSection::has(const std::string& key) const {
    if (!node_ || !node_.IsMap()) return false;
    YAML::Node v = node_[key];
    return v && !v.IsNull();
}

YAML::Node YamlSection::raw(const std::string& key) {
    used_.insert(key);
    if (!has(key)) return YAML::Node(YAML::NodeType::Undefined);
    return node_[key];
}

std::optional<double> YamlSection::num_opt(const std::string& key, double min, double max) {
    YAML::Node v = raw(key);
    if (!v) return std::nullopt;
    if (!v.IsScalar()) throw InputError(file_, key_path(key), "expected a number");
    auto d = parse_double(v.Scalar());
    if (!d) throw InputError(file_, key_path(key), "expected a number, got '" + v.Scalar() + "'");
    if (*d < min || *d > max)
        throw InputError(file_, key_path(key),
                         fmt::format("{} is out of range; expected {} to {}", v.Scalar(),
                                     describe(min), describe(max)));
    return d;
}

double YamlSection::num_req(const std::string& key, double min, double max) {
    auto v = num_opt(key, min, max);
    if (!v) throw InputError(file_, key_path(key), "missing; expected a number");
    return *v;
}

double YamlSection::num_or(const std::string& key, double fallback, double min, double max) {
    return num_opt(key, min, max).value_or(fallback);
}

std::optional<int64_t> YamlSection::int_opt(const std::string& key, int64_t min, int64_t max) {
    YAML::Node v = raw(key);
    if (!v) return std::nullopt;
    if (!v.IsScalar()) throw InputError(file_, key_path(key), "expected an integer");
    auto d = parse_double(v.Scalar());
    if (!d || std::floor(*d) != *d || std::fabs(*d) > 9.0e15)
        throw InputError(file_, key_path(key), "expected an integer, got '" + v.Scalar() + "'");
    if (*d < static_cast<double>(min) || *d > static_cast<double>(max))
        throw InputError(file_, key_path(key),
                         fmt::format("{} is out of range; expected {} to {}", v.Scalar(), min, max));
    return static_cast<int64_t>(*d);
}

int64_t YamlSection::int_req(const std::string& key, int64_t min, int64_t max) {
    auto v = int_opt(key, min, max);
    if (!v) throw InputError(file_, key_path(key), "missing; expected an integer");
    return *v;
}

int64_t YamlSection::int_or(const std::string& key, int64_t fallback, int64_t min, int64_t max) {
    return int_opt(key, min, max).value_or(fallback);
}

bool YamlSection::bool_or(const std::string& key, bool fallback) {
    YAML::Node v = raw(key);
    if (!v) return fallback;
    if (!v.IsScalar()) throw InputError(file_, key_path(key), "expected true or false");
    const std::string& s = v.Scalar();
    if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "False" || s == "no" || s == "off") return false;
    throw InputError(file_, key_path(key), "expected true or false, got '" + s + "'");
}

std::optional<std::string> YamlSection::str_opt(const std::string& key) {
    YAML::Node v = raw(key);
    if (!v) return std::nullopt;
    if (!v.IsScalar()) throw InputError(file_, key_path(key), "expected a string");
    return v.Scalar();
}

std::optional<std::string> YamlSection::choice_opt(const std::string& key,
                                                   const std::vector<std::string>& allowed) {
    auto s = str_opt(key);
    if (!s) return s;
    for (const auto& a : allowed)
        if (*s == a) return s;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw InputError(file_, key_path(key), "unknown value '" + *s + "'; expected one of: " + list);
}

void YamlSection::finish(const std::set<std::string>& tolerated) const {
    if (!node_ || !node_.IsMap()) return;
    for (const auto& kv : node_) {
        if (!kv.first.IsScalar()) throw InputError(file_, prefix_, "keys must be plain strings");
        const std::string& k = kv.first.Scalar();
        if (used_.count(k) == 0 && tolerated.count(k) == 0)
            throw InputError(file_, key_path(k), "unknown key");
    }
}

}  // namespace lostflops
