// `--set section.key=value` overrides of a job file: applied to the YAML tree
// before the sections are read, and remembered, so that an error about a key
// an override set is reported as coming from that --set, not from the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "lostflops/error.h"

namespace lostflops {

struct AppliedOverride {
    std::string expr;                  // as given: "parallel.tp=4"
    std::string path;                  // dotted key: "parallel.tp"
    std::vector<std::string> created;  // sections it created because the file lacked them ("a", "a.b")
    std::string source() const { return "--set " + expr; }  // InputError::file() of its errors
};

// Applies each "dotted.key=value" to `root` in order (later ones win). The
// value is parsed as YAML, so numbers and booleans keep their types and
// `key={a: 1}` replaces a whole section. InputError naming the --set for bad
// syntax, an empty value, or a path through a key that is not a section.
std::vector<AppliedOverride> apply_overrides(YAML::Node& root, const std::vector<std::string>& exprs);

// The override an error from `source` (the job file) is really about: the last
// one whose path is the error's key or lies above it (parallel.tp for
// parallel.tp, cluster.gpu for cluster.gpu.peak_tflops.bf16; a preset or
// hf_config for its whole section), or is one of the other keys a cross-field
// rule read (job/validate.h PlanError: --set parallel.pp=3 for "cluster.num_gpus:
// not divisible by tp*pp*cp"), or that created the section the key is in
// (a.b.c.d=1 created `a`: "a: unknown key"), or wrote into the section the
// error is about. nullptr when the error is the file's own. *by_related is
// set when the match is by a related key or a section, not by the error's
// own key: the caller then checks whether the file alone fails the same way
// (then the error is the file's).
const AppliedOverride* override_for(const InputError& e, const std::string& source,
                                    const std::vector<AppliedOverride>& applied, bool* by_related = nullptr);

}  // namespace lostflops
