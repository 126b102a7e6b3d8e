// A job file under construction by an importer: the four sections as ordered
// key/value lines with optional comments, rendered as YAML text
// (docs/job-file.md). Values are YAML scalars already formatted (numbers, true/false,
// plain words); the job loader does every check when the text is loaded.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "lostflops/interop.h"

namespace lostflops::interop {

struct DraftEntry {
    std::string key;
    std::string value;    // YAML scalar text; empty: the line is only a comment
    std::string comment;  // without the leading "# "
};

struct JobDraft {
    std::string name;
    std::string source;       // the job's top-level `source:` (what it was imported from)
    std::vector<std::string> header;  // comment lines above the job
    std::vector<DraftEntry> model, cluster, training, parallel;
};

void add(std::vector<DraftEntry>& section, std::string key, std::string value, std::string comment = "");
std::string render_yaml(const JobDraft& draft);
// A string as a double-quoted YAML scalar: the escaper of YAML values
// (control characters, C1 controls, U+2028/U+2029 and bytes that are not
// UTF-8 escaped; PyYAML and yaml-cpp read it back).
std::string quoted(const std::string& text);
// A name or label as text safe inside a one-line comment of a generated file
// (a shell script, TOML, YAML): the escaper of comments, terminal_text
// (lostflops/terminal_text.h): every control character, line separator and
// byte that is not UTF-8 written as a visible escape ("\n", "\x1b"), so that
// a job name with a newline cannot end the comment and inject a command, a
// table or a key, and the file stays valid UTF-8 (TOML 1.0, YAML 1.2).
std::string comment_text(const std::string& text);
// A whole-string integer in [1, 2^31): the value of a flag or key. Throws
// InputError(source, key, "expected a positive integer, got 'x'").
int positive_int(const std::string& text, const std::string& source, const std::string& key);
// A whole-string integer in [1, max] (a run's length in steps or sequences,
// past 2^31 in a long run): as positive_int, with max in the message.
int64_t positive_int64(const std::string& text, const std::string& source, const std::string& key, int64_t max);
// A number from lo to hi written whole (no sign, space or suffix after it),
// for a flag's value the draft writes into the job file: a value that is
// not one is an InputError naming the key, never text in the YAML.
double number_in(const std::string& text, const std::string& source, const std::string& key, double lo, double hi);
// The product of positive `factors` (nodes x GPUs per node, parallel
// degrees) as a GPU count, checked against the job file's range (1 to
// bounds::kMaxGpus) without overflowing; InputError(source, key, ...) naming
// `what` ("torchrun --nnodes x --nproc-per-node") otherwise.
int64_t gpu_count(std::initializer_list<int64_t> factors, const std::string& source, const std::string& key,
                  const std::string& what);
// --strict: InputError(source, setting, ...) for the first note of a setting
// not modelled or not known.
void refuse_unmodelled(const std::vector<ImportNote>& notes, const std::string& source);

}  // namespace lostflops::interop
