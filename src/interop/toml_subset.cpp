// Strict TOML-subset reader (toml_subset.h), following TOML v1.0.0
// (https://toml.io/en/v1.0.0) for the forms it accepts: comments, table
// headers, bare keys, basic and literal strings with the basic escapes,
// decimal integers with underscores, floats, booleans, one-line arrays.
// Debian 12 ships libcpptoml-dev (TOML v0.5, unmaintained since 2018); this
// reader exists so that every error names the file, the line and the key.
#include "interop/toml_subset.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

constexpr int kMaxTomlArrayDepth = 16;
constexpr size_t kMaxTomlKeys = 100'000;

class LineParser {
public:
    LineParser(const std::string& s, const std::string& source, int line) : s_(s), source_(source), line_(line) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(source_, "line " + std::to_string(line_), what);
    }
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    }
    bool at_end_or_comment() {
        skip_ws();
        return i_ >= s_.size() || s_[i_] == '#';
    }
    std::string bare_key() {
        skip_ws();
        const size_t start = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '-')) ++i_;
        if (i_ == start) fail("expected a key (letters, digits, _ and -)");
        return s_.substr(start, i_ - start);
    }
    std::string dotted_key() {
        std::string key = bare_key();
        skip_ws();
        while (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            key += '.';
            key += bare_key();  // not "." + key: gcc 12 -O3 warns falsely (-Wrestrict) on that
            skip_ws();
        }
        return key;
    }
    void expect(char c, const char* what) {
        skip_ws();
        if (i_ >= s_.size() || s_[i_] != c) fail(std::string("expected ") + what);
        ++i_;
    }
    TomlValue value() {
        skip_ws();
        if (i_ >= s_.size()) fail("expected a value after '='");
        const char c = s_[i_];
        if (c == '"') return {basic_string(), line_};
        if (c == '\'') return {literal_string(), line_};
        if (c == '[') return {array(), line_};
        if (c == '{') fail("inline tables are not supported here");
        return scalar();
    }

private:
    std::string basic_string() {
        if (s_.compare(i_, 3, "\"\"\"") == 0) fail("multi-line strings are not supported here");
        std::string out;
        for (++i_; i_ < s_.size() && s_[i_] != '"'; ++i_) {
            if (s_[i_] != '\\') {
                out += s_[i_];
                continue;
            }
            if (++i_ >= s_.size()) break;
            switch (s_[i_]) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                default: fail(std::string("unsupported escape \\") + s_[i_]);
            }
        }
        if (i_ >= s_.size()) fail("unterminated string");
        ++i_;
        return out;
    }
    std::string literal_string() {
        const size_t end = s_.find('\'', i_ + 1);
        if (end == std::string::npos) fail("unterminated string");
        std::string out = s_.substr(i_ + 1, end - i_ - 1);
        i_ = end + 1;
        return out;
    }
    std::vector<TomlValue> array() {
        // Each level is a recursion here and in the value's destructor: 30,000
        // '[' overflowed the stack. torchtitan's lists are flat.
        if (++depth_ > kMaxTomlArrayDepth)
            fail("arrays nested deeper than " + std::to_string(kMaxTomlArrayDepth) +
                 " levels; torchtitan's configs use flat lists");
        std::vector<TomlValue> out;
        ++i_;
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ']') {
            ++i_;
            return out;
        }
        for (;;) {
            out.push_back(value());
            skip_ws();
            if (i_ < s_.size() && s_[i_] == ',') {
                ++i_;
                skip_ws();
                if (i_ < s_.size() && s_[i_] == ']') {
                    ++i_;
                    --depth_;
                    return out;
                }
                continue;
            }
            if (i_ < s_.size() && s_[i_] == ']') {
                ++i_;
                --depth_;
                return out;
            }
            fail("expected ',' or ']' in an array (arrays must be on one line here)");
        }
    }
    TomlValue scalar() {
        const size_t start = i_;
        while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ']' && s_[i_] != '#' && s_[i_] != ' ' && s_[i_] != '\t') ++i_;
        const std::string word = s_.substr(start, i_ - start);
        if (word == "true") return {true, line_};
        if (word == "false") return {false, line_};
        std::string digits;
        for (size_t k = 0; k < word.size(); ++k) {
            if (word[k] != '_') {
                digits += word[k];
                continue;
            }
            const bool between = k > 0 && k + 1 < word.size() && std::isdigit(static_cast<unsigned char>(word[k - 1])) &&
                                 std::isdigit(static_cast<unsigned char>(word[k + 1]));
            if (!between) fail("'" + word + "' is not a TOML value");
        }
        const char* b = digits.data() + (digits.size() > 0 && digits[0] == '+' ? 1 : 0);
        const char* e = digits.data() + digits.size();
        int64_t iv = 0;
        if (auto [p, ec] = std::from_chars(b, e, iv); ec == std::errc() && p == e && b != e) return {iv, line_};
        double dv = 0;
        if (auto [p, ec] = std::from_chars(b, e, dv); ec == std::errc() && p == e && b != e &&
                                                       digits.find_first_of(".eE") != std::string::npos)
            return {dv, line_};
        fail("'" + word + "' is not a TOML value (string, integer, float, boolean or array)");
    }

    const std::string& s_;
    const std::string& source_;
    int line_;
    size_t i_ = 0;
    int depth_ = 0;
};

}  // namespace

TomlTable parse_toml_subset(const std::string& text, const std::string& source) {
    TomlTable out;
    std::map<std::string, int> tables;
    std::string table;
    int line_no = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        LineParser p(line, source, line_no);
        if (p.at_end_or_comment()) continue;
        if (line.find_first_not_of(" \t") != std::string::npos && line[line.find_first_not_of(" \t")] == '[') {
            p.expect('[', "'['");
            if (line.find("[[") != std::string::npos) p.fail("arrays of tables are not supported here");
            table = p.dotted_key();
            p.expect(']', "']' closing the table header");
            if (!p.at_end_or_comment()) p.fail("text after the table header");
            const auto [it, fresh] = tables.emplace(table, line_no);
            if (!fresh)
                throw InputError(source, table, "table given twice (lines " + std::to_string(it->second) + " and " +
                                                    std::to_string(line_no) + ")");
            continue;
        }
        const std::string key = p.dotted_key();
        p.expect('=', "'=' after the key");
        TomlValue v = p.value();
        if (!p.at_end_or_comment()) p.fail("text after the value of " + key);
        const std::string full = table.empty() ? key : table + "." + key;
        if (out.count(full))
            throw InputError(source, full, "given twice (lines " + std::to_string(out[full].line) + " and " +
                                               std::to_string(line_no) + ")");
        if (out.size() >= kMaxTomlKeys)
            throw InputError(source, "line " + std::to_string(line_no),
                             "more than " + std::to_string(kMaxTomlKeys) +
                                 " keys; a torchtitan config has about a hundred — is this the right file?");
        out.emplace(full, std::move(v));
    }
    return out;
}

std::optional<std::vector<std::string>> toml_string_list(const TomlValue& value) {
    std::vector<std::string> names;
    if (const auto* text = std::get_if<std::string>(&value.v)) {
        for (size_t at = 0; at <= text->size();) {
            const size_t comma = std::min(text->find(',', at), text->size());
            std::string name = text->substr(at, comma - at);
            name.erase(0, name.find_first_not_of(" \t"));
            name.erase(name.find_last_not_of(" \t") + 1);
            if (!name.empty()) names.push_back(std::move(name));
            at = comma + 1;
        }
        return names;
    }
    const auto* items = std::get_if<std::vector<TomlValue>>(&value.v);
    if (!items) return std::nullopt;
    for (const TomlValue& item : *items) {
        const auto* name = std::get_if<std::string>(&item.v);
        if (!name) return std::nullopt;
        names.push_back(*name);
    }
    return names;
}

}  // namespace lostflops::interop
