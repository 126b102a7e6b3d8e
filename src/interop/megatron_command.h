// The Megatron training command of an input: a launch script evaluated by
// shell_eval.h (its training command found by launch_command.h), a bare
// argument list, or Megatron's CI test configuration (model_config.yaml,
// tests/functional_tests/test_cases/*/*/model_config.yaml: a MODEL_ARGS
// mapping of flag to value, `true` for a flag without value).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shell/shell_eval.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

struct MegatronCommand {
    std::vector<ShellField> words;   // Megatron's arguments
    std::string program;             // "pretrain_gpt.py", "" for a bare argument list or a CI config
    std::optional<int> num_gpus, gpus_per_node;
    std::string gpus_from;           // how the launcher gives the GPU count
    std::string gpus_unknown;        // why it does not
};

// Throws InputError for a script without a training command (saying why: an
// `exit` before it, a command it could not evaluate), for a program that is
// not a decoder-only language model's (BERT, T5), and for a malformed CI
// configuration.
MegatronCommand megatron_command(const std::string& text, const std::string& source, const ImportOptions& options,
                                 std::vector<ImportNote>& notes);

// True when the text is a Megatron CI model_config.yaml (a top-level
// MODEL_ARGS key).
bool is_megatron_ci_config(const std::string& text);

}  // namespace lostflops::interop
