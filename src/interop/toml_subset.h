// A strict reader of the TOML subset torchtitan's job configs use (TOML
// v1.0.0): comments, [table] and [dotted.table] headers, `key = value` with
// bare keys, values basic "strings" and 'literal strings', integers
// (decimal, with `_` between digits), floats, booleans and one-line arrays of
// those. Anything else (inline tables, multi-line strings, dates, a table or
// key given twice) is an InputError naming the file and the line; so are
// arrays nested deeper than 16 levels and more than 100,000 keys (bounds of
// stack and memory: docs/reliability.md "Bad input and limits").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace lostflops::interop {

struct TomlValue {
    std::variant<std::string, int64_t, double, bool, std::vector<TomlValue>> v;
    int line = 0;
};

// Keys are "table.key" ("training.seq_len"; a key before any header has no
// table part), in a map for lookup.
using TomlTable = std::map<std::string, TomlValue>;

TomlTable parse_toml_subset(const std::string& text, const std::string& source);

// A torchtitan string-list setting (model.converters, ...): an array of
// strings, or a string of comma-separated names as torchtitan's 2025 configs
// wrote them (converters = "float8"; torchtitan config_manager.py string_list
// and check_string_list_argument split it on commas, names trimmed, empty ones
// dropped). nullopt for any other value.
std::optional<std::vector<std::string>> toml_string_list(const TomlValue& value);

}  // namespace lostflops::interop
