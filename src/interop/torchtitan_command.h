// torchtitan launched from a command line (interop.h import_torchtitan):
// `torchrun ... -m torchtitan.train` with, before February 2026, a TOML job
// config (`--job.config_file FILE`) and, since the config refactor
// (pytorch/torchtitan 9810191b, 2026-02-23, "TOML to Python Dataclass
// Registry"), a Python configuration (`--module llama3 --config llama3_8b`);
// both take `--section.key value` overrides on the command line. The Python
// configurations cannot be read without running Python: the ones lostflops
// knows are a table with their source; an override never needs one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interop/toml_subset.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

struct TorchtitanCommand {
    TomlTable table;             // the base configuration with the overrides applied
    std::string base;            // what the base was ("llama3_8b (torchtitan config_registry)", "FILE")
    std::optional<int> num_gpus; // from the launcher
    std::string gpus_from;
};

// True when the text reads as a TOML job config (a [table] header line).
bool looks_like_toml(const std::string& text);

// Throws InputError for a script without a torchtitan training command, a
// configuration name lostflops does not know, a --job.config_file outside
// the script's folder, or an override without a key.
TorchtitanCommand torchtitan_command(const std::string& text, const std::string& source, const ImportOptions& options,
                                     std::vector<ImportNote>& notes);

}  // namespace lostflops::interop
