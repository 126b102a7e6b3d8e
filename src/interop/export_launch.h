// What every exporter writes around the plan (megatron_export.cpp,
// torchtitan_export.cpp, maxtext_export.cpp): the comment block that says
// which settings are lostflops's plan and which are the user's, the
// placeholders the user fills (an UPPERCASE word marked `# yours`, the same
// mark in every export), torchrun's options for the job's nodes, and the
// run's length in whole steps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops::interop {

// The mark after a placeholder ("--data-path DATA  # yours: ...").
inline constexpr const char* kYours = "# yours";

// A flag or key of an export. `yours` non-empty: a placeholder, and what the
// user puts there; `remark`: a comment on a plan line (how a value was rounded).
struct ExportLine {
    std::string text;
    std::string yours;
    std::string remark;
};
// "TEXT  # yours: WHY", "TEXT  # REMARK" or "TEXT".
std::string line_text(const ExportLine& l);

// torchrun's processes: `nodes` nodes of `per_node` each.
struct TorchrunShape {
    int nodes = 1;
    int per_node = 1;
};
// Throws InputError(job.source, "cluster.num_gpus", ...) when the GPUs are
// more than a node but not whole nodes: torchrun starts --nproc-per-node
// processes on every node the script runs on.
TorchrunShape torchrun_shape(const Job& job);
// torchrun's options, one per line: on one node `--standalone
// --nproc-per-node G` (a local rendezvous, nothing to fill); on N nodes
// `--nnodes N --nproc-per-node G --rdzv-backend c10d --rdzv-endpoint
// HOST:PORT`, HOST a placeholder.
std::vector<ExportLine> torchrun_options(const Job& job);
// The same on one line, without marks ("torchrun --nnodes 32 ... ").
std::string torchrun_line(const Job& job);

// The comment block at the top of an export, every line starting "#": the
// job's name and GPUs (and torchrun's nodes unless `kind` is "maxtext") and
// the exporter, then what is lostflops's plan (`plan`: "the model's shape,
// the batch, ...") and what is the user's (`yours`: "data, tokenizer, ...");
// `defaults` says what the export leaves to the framework's defaults
// (sentences wrapped to 88 columns), `launch` how to start it (lines as they are).
std::string export_header(const Job& job, const std::string& kind, const std::string& plan, const std::string& yours,
                          const std::string& defaults, const std::vector<std::string>& launch);

// The token budget in whole units of `per_unit` tokens (steps, sequences),
// rounded up; nullopt without a budget (training.train_tokens 0).
struct WholeCount {
    int64_t count = 0;
    double exact = 0;
    bool rounded() const { return exact != static_cast<double>(count); }
};
std::optional<WholeCount> whole_count(double tokens, double per_unit);
// "training.train_tokens 1e12 is 122,070.3 steps: rounded up" for a plan line's remark; "" when whole.
std::string rounded_remark(const WholeCount& c, const char* unit);

// Whether the plan was priced with FP8 dispatch copies (ParallelPlan::
// moe_fp8_dispatch with precision fp8, DeepEP, experts over more than one
// rank: estimate/stage_time.cpp, cost/expert_dispatch.cpp): no exporter
// writes that setting, so each says so.
bool moe_fp8_dispatch_priced(const Job& job);

}  // namespace lostflops::interop
