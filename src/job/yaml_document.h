// Loading a whole YAML (or JSON) document from user text, with the checks
// yaml-cpp leaves out: unique keys in every mapping (YAML 1.2.2 section 3.2.1.1:
// "the content of a mapping node is an unordered set of key/value node pairs,
// with the restriction that each of the keys is unique"; yaml-cpp keeps both
// and lookups return the first) and a nesting limit. Shared by the job loader,
// `hf_config:` files, the catalogs and calibration profiles.
#pragma once

#include <cstddef>
#include <string>

#include <yaml-cpp/yaml.h>

namespace lostflops {

// Deepest nesting of mappings and sequences accepted. The deepest real input is
// a calibration profile's nccl[i].points[j] (4 levels) or an inline GPU's
// cluster.gpu.peak_tflops (4); 64 leaves room for anything hand-written and
// stays far below yaml-cpp's own recursion guard (DepthGuard<500> in
// singledocparser.cpp), whose error text is only "bad file".
inline constexpr int kMaxYamlDepth = 64;

// Most YAML items (scalars, flow and block indicators) a document may hold
// before yaml-cpp reads it. yaml-cpp keeps a few hundred bytes per token and
// per node, and reads all of a flow collection's tokens before its parser's
// recursion guard can stop it (1 MiB of '[' took 250 MB), so the text is
// pre-scanned and refused beyond this or beyond kMaxYamlDepth flow levels.
// A job is a few hundred items, a config.json a few thousand; docs/reliability.md "Bad
// input and limits" states each reader's bound and its peak memory.
inline constexpr std::size_t kMaxYamlItems = 100'000;

// Parses `text`; InputError(source, "line N", ...) when it is not YAML, nests
// deeper than kMaxYamlDepth, holds more than `max_items` items (see
// kMaxYamlItems), repeats a key (naming the dotted key and both lines), or
// holds a second document that is not empty (after '---', or text after a
// JSON object's end: yaml-cpp's Load would drop it).
// `prefix` is the dotted path of the document's root in messages ("" for a
// file, "parallel.tp" for a --set value).
// `same_duplicates`: a key repeated with an identical value is accepted (a
// JSON object's names SHOULD be unique, RFC 8259 sec. 4, and a real
// config.json, Meta-Llama-3-8B-Instruct's, repeats `_name_or_path`); a key
// repeated with another value is still an error.
enum class Duplicates { error, same_ok };
YAML::Node load_yaml_document(const std::string& text, const std::string& source,
                              const std::string& prefix = "", Duplicates duplicates = Duplicates::error,
                              std::size_t max_items = kMaxYamlItems);

// The pre-scan alone: InputError when `text` holds more than `max_items`
// items or nests flow collections deeper than kMaxYamlDepth. A linear scan
// of the YAML 1.2 token syntax (quoted scalars, comments, block scalars,
// flow and block indicators); an over-count is possible only where a plain
// scalar's continuation line starts with an indicator.
void prescan_yaml(const std::string& text, const std::string& source, std::size_t max_items);

// The unique-key and depth checks alone, on a document already loaded.
void check_yaml_document(const YAML::Node& root, const std::string& source,
                         const std::string& prefix = "", Duplicates duplicates = Duplicates::error);

}  // namespace lostflops
