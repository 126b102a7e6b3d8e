// Megatron-LM's MIMO example trainer (examples/mimo/train.py): it builds its
// language model in Python from --model-provider (default mock), not from
// the model flags its scripts pass ("TODO: ... these are not used. model
// provider sets the config and spec for LLM", examples/mimo/scripts/
// run_mock_train.sh), and packs each sample to --total-seq-length tokens
// (default 512), the language model's sequence. The providers' language
// models are a table (megatron_mimo.cpp) with their source files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interop/job_draft.h"
#include "shell/shell_eval.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

// The language model one provider builds.
struct MimoProvider {
    const char* name;  // --model-provider
    int layers, hidden, heads, ffn;
    const char* act;   // the job file's hidden_act: gelu, silu (gated)
    int vocab;         // GPTModel's vocab_size, as the provider passes it (not padded further)
    const char* source;
};

// True when `program` is the MIMO trainer (a path ending in mimo/train.py).
bool is_mimo_trainer(const std::string& program);

// The MIMO flags of `words` (the last of each counts, as argparse takes it):
// the provider (mock when not given) and the sequence (512 when not given).
// Removes the "unknown flag" notes of the MIMO flags it reads. Throws
// InputError(source, "--model-provider", ...) for a provider not in the table
// and for a value the script could not evaluate.
struct MimoRun {
    const MimoProvider* provider = nullptr;
    int seq_length = 512;
    std::string seq_from;  // "--total-seq-length", or the default
};
MimoRun mimo_run(const std::vector<ShellField>& words, const std::string& source, std::vector<ImportNote>& notes);

// Writes d.model from the provider (its uniform decoder layers); returns the layers.
int mimo_model(const MimoProvider& p, JobDraft& d);

}  // namespace lostflops::interop
