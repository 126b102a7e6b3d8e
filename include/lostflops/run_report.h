// Rendering a whole-run cost (run_cost.h) for people and programs: the
// `goodput` command's output and the run summary of `estimate` when
// training.train_tokens is given. Returns strings and JSON; the CLI prints.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>  // declarations only: a .cpp that builds or reads JSON includes json.hpp

#include "lostflops/run_cost.h"

namespace lostflops {

// Keys (docs/whole-run.md): wall_time_s, time_to_train_days, goodput
// (fraction), expected_failures, mtbf_s, checkpoint_interval_s,
// checkpoint_interval_steps, checkpoint_interval_auto, checkpoints,
// checkpoint_bytes, checkpoint_block_s, checkpoint_persist_s,
// checkpoint_read_s, recovery_s, data_stall_per_step_s, split {useful_s,
// checkpoint_overhead_s, lost_work_s, restart_s, data_stall_s}, gpu_hours,
// cost (null without a price), energy_kwh, utilisation [{name, definition,
// value}], effective_utilisation; with a simulation `simulation` {samples,
// seed, mean_wall_time_s, p10/p50/p90_wall_time_s, mean_goodput,
// p10/p50/p90_goodput, mean_failures, closed_form_error_pct}.
nlohmann::json run_json(const RunCost& run, const std::optional<RunSimulation>& sim = std::nullopt);
// `device`: what one device is called (lostflops/accelerator.h device_noun):
// "GPU-hours (N GPUs)", or "chip-hours (N chips)" for a TPU job.
std::string run_table(const RunCost& run, const std::optional<RunSimulation>& sim = std::nullopt,
                      std::string_view device = "GPU");

// The job's `run:` section as resolved (every default decided, checkpoint
// size derived), for the resolved-job JSON (job_json).
nlohmann::json run_spec_json(const Job& job);

}  // namespace lostflops
