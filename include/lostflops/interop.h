// Other frameworks' words for a job, in and out: Megatron-LM / Megatron-Core
// launch flags and torchtitan's TOML job config to our job file (YAML text),
// and a Job's plan back to each.
//
// Contract: import returns the job file's text and a note for every setting it
// read but could not carry over; it never drops a setting silently. Settings
// that change the cost but that lostflops does not model are NoteKind::
// not_modelled, settings that do not change the cost (paths, logging, seeds,
// learning rate, ...) are NoteKind::ignored, settings it does not know are
// NoteKind::unknown; a choice the input left open is NoteKind::assumed. Bad input (a flag without its value, a value that is not
// a number, two flags that contradict each other) throws InputError whose key
// is the flag ("--tensor-model-parallel-size") or the TOML key
// ("parallelism.tensor_parallel_degree").
//
// The frameworks do not name the hardware: the job file's `cluster:` holds
// `num_gpus` and `gpus_per_node` when the input gives them (torchrun's
// --nnodes x --nproc-per-node, or torchtitan's explicit degrees) and a comment
// asking for the rest (`--set cluster.preset=dgx-h100` completes it).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

// assumed: the input did not say and the importer chose (named in the note).
enum class NoteKind { not_modelled, ignored, unknown, assumed };

struct ImportNote {
    NoteKind kind = NoteKind::ignored;
    std::string setting;  // "--overlap-param-gather", "training.compile"
    std::string message;  // why, or what was assumed
};

struct ImportResult {
    std::string job_yaml;            // a job file (docs/job-file.md)
    std::vector<ImportNote> notes;   // in input order
};

struct ImportOptions {
    int num_gpus = 0;       // 0: from the input when it says (torchrun, explicit degrees)
    int gpus_per_node = 0;  // 0: from the input when it says
    // Launch scripts (evaluated, never run: docs/interop.md).
    std::string script_path;  // the script's path: `$0`, and its folder is where `source` may read; empty: none
    std::vector<std::pair<std::string, std::string>> env;   // environment (the script's assignments win)
    std::vector<std::pair<std::string, std::string>> vars;  // fixed values (the script's assignments skipped)
    std::vector<std::string> args;                          // the script's arguments $1, $2, ...
    // A setting lostflops does not model (NoteKind::not_modelled) or does not
    // know (NoteKind::unknown) is an error instead of a note.
    bool strict = false;
    // MaxText (import_maxtext): the slice type ("v5p-128") and number of
    // slices (0: the config's num_slices, else 1), and its KEY=VALUE
    // overrides as train.py takes them after the config.
    std::string tpu;
    int slices = 0;
    std::vector<std::string> overrides;
};

// Megatron-LM / Megatron-Core: a launch script, evaluated as bash would
// without running anything (variables, arrays, `${VAR:-default}`, `$(( ))`,
// `if` / `case` on known values, `source` of files beside it, `sbatch` and
// `srun ... sh -c`), whose training command (torchrun, python -m
// torch.distributed.run, python X.py under srun, deepspeed) gives the flags
// and the GPU count; a bare argument list; or Megatron's CI
// model_config.yaml (MODEL_ARGS). Flags as Megatron's argparse reads them:
// `--flag value`, `--flag=value`, the last of a repeated flag counts.
// `source` names the text in errors.
ImportResult import_megatron(const std::string& text, const std::string& source,
                             const ImportOptions& options = {});
// torchtitan job config (TOML): [model] name/flavor, [training], [parallelism]
// (or the degrees under [training], as torchtitan had them in 2024),
// [activation_checkpoint], [float8].
ImportResult import_torchtitan(const std::string& text, const std::string& source,
                               const ImportOptions& options = {});

// MaxText config (base.yml-style flat keys, `options.overrides` over them):
// model keys or model_name, per_device_batch_size, max_target_length,
// remat_policy, dtype / quantization, the ici_* / dcn_* mesh (docs/tpu.md).
// Needs options.tpu. Every key is read, on the no-cost list
// (interop/maxtext_keys.cpp), or a not_modelled note.
ImportResult import_maxtext(const std::string& text, const std::string& source,
                            const ImportOptions& options = {});

// The settings of a job's plan in the framework's words. `notes` receives
// what could not be said in them (key: the job's dotted key).
struct ExportResult {
    std::string text;
    std::vector<ImportNote> notes;
    // The command that starts it when `text` is a configuration (torchtitan:
    // `torchrun ... -m torchtitan.train --job.config_file CONFIG_FILE`, also
    // written in its header); empty when `text` is the launch itself.
    std::string launch;
};
// Every export starts with a comment block that tells lostflops's plan from
// the user's part; what the plan does not say (data, tokenizer, learning
// rate, checkpoints, the rendezvous host of a multi-node launch) is an
// UPPERCASE placeholder marked `# yours` (docs/interop.md "Exports").
// Megatron: a bash script in Megatron-LM's own layout, flags in arrays
// (MODEL_ARGS, PARALLEL_ARGS, ...) and `torchrun "${DISTRIBUTED_ARGS[@]}"
// pretrain_gpt.py "${MODEL_ARGS[@]}" ...` (pretrain_hybrid.py for a hybrid
// stack): --standalone on one node, a c10d
// rendezvous on several. Throws InputError for a job Megatron cannot run as
// planned (ZeRO-2; an FSDP or DeepSpeed framework) and for GPUs that are not
// whole nodes.
ExportResult export_megatron(const Job& job);
// A torchtitan TOML job config. Throws InputError when the model is not one
// of torchtitan's flavours (llama2 / llama3 presets) or the plan is not one
// torchtitan runs (ZeRO 1/2, a Megatron framework is said in a note).
ExportResult export_torchtitan(const Job& job);

const char* to_string(NoteKind k);

}  // namespace lostflops
