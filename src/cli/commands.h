// Subcommands of the lostflops executable. Each add_*_command registers one
// CLI11 subcommand whose callback stores its exit status in `exit_code`.
// Callbacks may throw lostflops::InputError; main() reports it (error_report.h)
// and exits 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/search.h"
#include "lostflops/search_listing.h"
#include "lostflops/spec.h"
#include "lostflops/validate.h"

namespace lostflops::cli {

enum class Format { table, json };

// Options shared by every command that reads a job.
struct JobOptions {
    std::string job_path;                // empty: the built-in default job
    std::vector<std::string> overrides;  // --set section.key=value
    std::string calibration_path;        // --calibration FILE
    Format format = Format::table;
    bool best = false;                   // --best: the search's best plan instead of the job's
};

void add_job_options(CLI::App* cmd, JobOptions& opts);
// `--headroom GIB|PCT%`: appends --set cluster.memory_headroom=VALUE.
void add_headroom_option(CLI::App* cmd, std::vector<std::string>& overrides);
// `--format {table,json}` (default table), the same spelling and help in every
// subcommand that has it.
CLI::Option* add_format_option(CLI::App* cmd, Format& format);
// The --format the command line asked of the subcommand that ran (the deepest
// parsed subcommand first, then its parents); table when none. Read from
// CLI11's record of the arguments, so it also answers after a parse error or
// an exception thrown by a callback.
Format requested_format(const CLI::App& app);
Job load_job_for(const JobOptions& opts);
// The job's --set overrides, with the search's best plan appended as
// parallel.* and training.micro_batch_size keys when `best` (--best) or when
// the job has no parallel section (a job without a plan is searched, not
// refused; the search keeps the keys the job gives fixed and the job's
// framework's launch rules); a note on stderr names the plan. Otherwise the
// overrides as given.
std::vector<std::string> overrides_with_plan(const std::string& job_path, const std::vector<std::string>& overrides,
                                             const std::string& calibration_path, bool best);
// "--best": the flag and its help, the same in every command that has it.
void add_best_flag(CLI::App* cmd, bool& best);
// --strict (a global flag, main.cpp): a model key that changes the cost but is
// not modelled is an error instead of a warning; so is, for estimate, a plan
// that breaks a rule of its framework (lostflops/framework_rules.h).
extern bool g_strict;
// Warns "lostflops: warning: not modelled: KEY (why)" on standard error for
// each such key of the job's model (once per key and run), or throws
// InputError naming the first under --strict. Returns `job`.
const Job& check_model_keys(const Job& job);
Calibration load_calibration_for(const std::string& path);
// fit_set_runs: lostflops/command_reports.h.
// --gpus: "512..16384" (doubling) or "512,1024,4096"; InputError("--gpus", ...) otherwise.
std::vector<int> gpu_list(const std::string& text);
// A whole count written as digits only, from lo to hi (no sign, no space, no
// fraction, as CLI11 reads the integer options); nullopt otherwise.
std::optional<long> strict_count(const std::string& text, long lo, long hi);

// A check for a real-valued option: a finite number in [lo, hi]. CLI::Range
// lets NaN through (every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);
// A check for a count option, before its CLI::Range: digits only (strtoll,
// CLI11's reading, skips leading space and takes a sign or 0x: " 5", "+5" and
// "0x5" were 5, where every real-valued option refuses them).
CLI::Validator whole_number();
// A check for a file option or argument: not empty. "" was read as not
// given: the built-in job or calibration, no --job comparison, no
// --summary-out, where the readers of tables and traces say "empty file name".
CLI::Validator file_name();
// A check for an option whose empty value meant "not given" (search --gpus '',
// --fix '', --compare '', --top ''; report --gpus ''): blank is refused,
// "empty; expected <expected>".
CLI::Validator not_empty(const std::string& expected);

// InputError(flag) when `output` is the same file as one of `inputs` (same
// device and inode, so a link or another spelling of the path counts): the
// write would destroy what was read. A missing output, "-" and empty paths
// pass.
void check_output_not_input(const std::string& output, const std::string& flag,
                            const std::vector<std::string>& inputs);
// Flushes standard output; when a write to it failed (a full disk, a closed
// pipe, /dev/full) prints why on stderr and returns ExitCode::bad_input's
// code (an error code of 2 or more is kept), else `code`. main() ends every
// command through it.
int finish_stdout(int code);

void add_estimate_command(CLI::App& app, int& exit_code);
void add_validate_command(CLI::App& app, int& exit_code);
void add_trace_command(CLI::App& app, int& exit_code);
// `trace diff A B` (cmd_trace_diff.cpp), under the trace subcommand; the
// parent's --format applies unless diff has its own.
void add_trace_diff_command(CLI::App* trace_cmd, Format& parent_format, int& exit_code);
// `trace synth DIR` (cmd_trace_synth.cpp): generated traces with known answers.
void add_trace_synth_command(CLI::App* trace_cmd, int& exit_code);
void add_calibrate_command(CLI::App& app, int& exit_code);
// `calibrate components` (cmd_calibrate_components.cpp), under the calibrate subcommand.
void add_calibrate_components_command(CLI::App* calibrate, int& exit_code);
// `calibrate residuals` (cmd_calibrate_residuals.cpp).
void add_calibrate_residuals_command(CLI::App* calibrate, int& exit_code);
void add_search_command(CLI::App& app, int& exit_code);
void add_explain_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_goodput_command(CLI::App& app, int& exit_code);
// Megatron-LM / torchtitan settings in and out (cmd_import.cpp, cmd_export.cpp).
void add_import_command(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code);
// `list gpus` (cmd_list.cpp): the built-in catalogs.
void add_list_command(CLI::App& app, int& exit_code);

}  // namespace lostflops::cli
