// Strict typed reader over yaml-cpp nodes (see yaml_reader.h). yaml-cpp keeps
// scalars as text, so numbers are parsed here against the YAML 1.2 core schema
// (https://yaml.org/spec/1.2.2/#1032-tag-resolution): "12abc", "1e400", ".nan",
// "1_000" and 2.5 for an integer key are all errors, each with its own message
// and the accepted range, never truncations.
#include "job/yaml_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cctype>
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "job/did_you_mean.h"

namespace lostflops {

namespace {

// How a scalar's text reads as a number (YAML 1.2 core schema, section 10.3.2).
enum class Form { decimal, hex, octal, infinite, nan, separators, invalid };

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// [-+]? ( \.[0-9]+ | [0-9]+ ( \.[0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool is_decimal(const std::string& s) {
    size_t i = 0;
    const size_t n = s.size();
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t whole = 0, frac = 0;
    while (i < n && is_digit(s[i])) ++i, ++whole;
    if (i < n && s[i] == '.') {
        ++i;
        while (i < n && is_digit(s[i])) ++i, ++frac;
    }
    if (whole == 0 && frac == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        size_t exp = 0;
        while (i < n && is_digit(s[i])) ++i, ++exp;
        if (exp == 0) return false;
    }
    return i == n;
}

bool all_chars(const std::string& s, size_t from, bool (*ok)(char)) {
    if (from >= s.size()) return false;
    for (size_t i = from; i < s.size(); ++i)
        if (!ok(s[i])) return false;
    return true;
}

Form classify(const std::string& s) {
    if (is_decimal(s)) return Form::decimal;
    if (s.size() > 2 && s[0] == '0' && s[1] == 'x' &&
        all_chars(s, 2, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
        return Form::hex;
    if (s.size() > 2 && s[0] == '0' && s[1] == 'o' && all_chars(s, 2, [](char c) { return c >= '0' && c <= '7'; }))
        return Form::octal;
    // .inf / .nan (YAML) and the inf / infinity / nan of C's strtod, any case.
    std::string word;
    for (char c : s) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!word.empty() && (word[0] == '+' || word[0] == '-')) word.erase(0, 1);
    if (!word.empty() && word[0] == '.') word.erase(0, 1);
    if (word == "inf" || word == "infinity") return Form::infinite;
    if (word == "nan") return Form::nan;
    if (s.find('_') != std::string::npos) {
        std::string plain;
        for (char c : s)
            if (c != '_') plain += c;
        if (is_decimal(plain)) return Form::separators;
    }
    return Form::invalid;
}

// A scalar is resolved by the core schema only when plain (yaml-cpp tags it
// "?"); a quoted one ("8", '8') is a string (tag "!"; YAML 1.2.2 section
// 6.9.1: non-plain scalars get the non-specific tag "!", resolved to a
// string). An explicit tag is honoured when it is one of `tags`.
bool plain_or_tagged(const YAML::Node& node, std::initializer_list<const char*> tags) {
    const std::string& tag = node.Tag();
    if (tag == "?" || tag.empty()) return true;
    for (const char* t : tags)
        if (tag == t) return true;
    return false;
}

std::string show(double v) { return fmt::format("{}", v); }

// "expected 1 to 1000000" for the messages.
std::string range_text(double min, double max, bool integer) {
    if (min == std::numeric_limits<double>::lowest() && max == std::numeric_limits<double>::max())
        return integer ? "expected an integer" : "expected a finite number";
    if (integer)
        return fmt::format("expected an integer from {} to {}", static_cast<int64_t>(min), static_cast<int64_t>(max));
    return fmt::format("expected {} to {}", show(min), show(max));
}

// The scalar's value, or an InputError saying how the text is wrong for a
// value in [min, max]. `integer` changes only the wording here.
double read_scalar(const YAML::Node& node, const std::string& file, const std::string& key, double min,
                   double max, bool integer) {
    const char* want = integer ? "an integer" : "a number";
    if (!node.IsScalar()) throw InputError(file, key, fmt::format("expected {}", want));
    const std::string& s = node.Scalar();
    if (!plain_or_tagged(node, {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}))
        throw InputError(file, key,
                         fmt::format("expected {}, got the string '{}' (quoted or tagged); YAML 1.2 reads a quoted "
                                     "scalar as a string: write it without quotes",
                                     want, s));
    const std::string range = range_text(min, max, integer);
    double v = 0;
    switch (classify(s)) {
        case Form::invalid:
            throw InputError(file, key, fmt::format("expected {}, got '{}'", want, s));
        case Form::separators:
            throw InputError(file, key,
                             fmt::format("expected {}, got '{}': YAML 1.2 numbers have no '_' digit separators",
                                         want, s));
        case Form::infinite: throw InputError(file, key, fmt::format("{} is infinite; {}", s, range));
        case Form::nan: throw InputError(file, key, fmt::format("{} is not a number (NaN); {}", s, range));
        case Form::hex:
        case Form::octal: {
            errno = 0;
            const unsigned long long u = std::strtoull(s.c_str() + 2, nullptr, classify(s) == Form::hex ? 16 : 8);
            if (errno == ERANGE) throw InputError(file, key, fmt::format("{} is out of range; {}", s, range));
            v = static_cast<double>(u);
            break;
        }
        case Form::decimal: {
            errno = 0;
            v = std::strtod(s.c_str(), nullptr);
            const bool overflow = std::isinf(v);
            // glibc sets ERANGE for results below DBL_MIN; a nonzero text that
            // reads as 0 or as a subnormal has lost its value either way.
            const bool nonzero_text = s.find_first_of("123456789") < s.find_first_of("eE");
            const bool underflow = !overflow && nonzero_text && std::fabs(v) < std::numeric_limits<double>::min();
            if (overflow)
                throw InputError(file, key,
                                 fmt::format("{} is out of range (beyond the largest double, 1.8e308); {}", s, range));
            if (underflow)
                throw InputError(file, key,
                                 fmt::format("{} is out of range (nonzero but below the smallest normal double, "
                                             "2.2e-308); {}",
                                             s, range));
            break;
        }
    }
    if (v < min || v > max) throw InputError(file, key, fmt::format("{} is out of range; {}", s, range));
    if (integer && std::floor(v) != v) throw InputError(file, key, fmt::format("expected an integer, got '{}'", s));
    return v;
}

}  // namespace

double scalar_number(const YAML::Node& node, const std::string& file, const std::string& key, double min,
                     double max) {
    return read_scalar(node, file, key, min, max, false);
}

int64_t scalar_integer(const YAML::Node& node, const std::string& file, const std::string& key, int64_t min,
                       int64_t max) {
    // Every range in use is far inside +-2^53, where doubles hold integers exactly.
    return static_cast<int64_t>(read_scalar(node, file, key, static_cast<double>(min), static_cast<double>(max), true));
}

YamlSection::YamlSection(YAML::Node node, std::string file, std::string prefix)
    : node_(std::move(node)), file_(std::move(file)), prefix_(std::move(prefix)) {
    if (node_ && !node_.IsNull() && !node_.IsMap())
        throw InputError(file_, prefix_, "expected a mapping of keys to values");
}

std::string YamlSection::key_path(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
}

bool YamlSection::has(const std::string& key) const {
    known_.insert(key);
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
    return scalar_number(v, file_, key_path(key), min, max);
}

double YamlSection::num_req(const std::string& key, double min, double max) {
    auto v = num_opt(key, min, max);
    if (!v) throw missing(key, "expected a number");
    return *v;
}

double YamlSection::num_or(const std::string& key, double fallback, double min, double max) {
    return num_opt(key, min, max).value_or(fallback);
}

std::optional<int64_t> YamlSection::int_opt(const std::string& key, int64_t min, int64_t max) {
    YAML::Node v = raw(key);
    if (!v) return std::nullopt;
    return scalar_integer(v, file_, key_path(key), min, max);
}

int64_t YamlSection::int_req(const std::string& key, int64_t min, int64_t max) {
    auto v = int_opt(key, min, max);
    if (!v) throw missing(key, "expected an integer");
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
    // YAML 1.2 core schema booleans (section 10.3.2): true|True|TRUE|false|False|FALSE.
    const bool plain = plain_or_tagged(v, {"tag:yaml.org,2002:bool"});
    if (plain && (s == "true" || s == "True" || s == "TRUE")) return true;
    if (plain && (s == "false" || s == "False" || s == "FALSE")) return false;
    if (!plain)
        throw InputError(file_, key_path(key),
                         "expected true or false, got the string '" + s + "' (quoted); write it without quotes");
    if (s == "yes" || s == "Yes" || s == "YES" || s == "on" || s == "On" || s == "ON" || s == "y" || s == "Y" ||
        s == "no" || s == "No" || s == "NO" || s == "off" || s == "Off" || s == "OFF" || s == "n" || s == "N")
        throw InputError(file_, key_path(key),
                         "expected true or false, got '" + s + "': a YAML 1.1 boolean, a string in YAML 1.2");
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
    throw InputError(file_, key_path(key), "unknown value '" + *s + "'; expected one of: " + list +
                                               did_you_mean(*s, allowed));
}

void YamlSection::finish(const std::set<std::string>& tolerated) const {
    if (!node_ || !node_.IsMap()) return;
    std::vector<std::string> names(known_.begin(), known_.end());
    names.insert(names.end(), tolerated.begin(), tolerated.end());
    for (const auto& kv : node_) {
        if (!kv.first.IsScalar()) throw InputError(file_, prefix_, "keys must be plain strings");
        const std::string& k = kv.first.Scalar();
        // A known key set to null is not given (`--set parallel.KEY=null`),
        // also where the reader only asked has() of it.
        if (used_.count(k) == 0 && tolerated.count(k) == 0 && !(known_.count(k) > 0 && kv.second.IsNull()))
            throw InputError(file_, key_path(k), "unknown key" + did_you_mean(k, names));
    }
}

void YamlSection::check_keys(const std::vector<std::string>& schema) const {
    known_.insert(schema.begin(), schema.end());  // missing() then offers none of them as a typo
    if (!node_ || !node_.IsMap()) return;
    for (const auto& kv : node_) {
        if (!kv.first.IsScalar()) throw InputError(file_, prefix_, "keys must be plain strings");
        const std::string& k = kv.first.Scalar();
        if (std::find(schema.begin(), schema.end(), k) == schema.end())
            throw InputError(file_, key_path(k), "unknown key" + did_you_mean(k, schema));
    }
}

InputError YamlSection::missing(const std::string& key, const std::string& expected) const {
    known_.insert(key);
    if (node_ && node_.IsMap())
        for (const auto& kv : node_) {
            if (!kv.first.IsScalar()) continue;
            const std::string& k = kv.first.Scalar();
            if (known_.count(k) || used_.count(k)) continue;
            const std::string hint = did_you_mean(k, {key});
            if (!hint.empty()) return InputError(file_, key_path(k), "unknown key" + hint);
        }
    return InputError(file_, key_path(key), "missing; " + expected);
}


}  // namespace lostflops
