// Validation against published runs: a CSV table shaped like
// shared/reference/published-runs.csv (columns `name` and
// `tokens_per_s_per_gpu` required; `name` names runs/NAME.json beside the
// table), each run predicted and compared.
#pragma once

#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/spec.h"

namespace lostflops {

struct ValidationRow {
    std::string name;
    std::string gpu;
    int num_gpus = 0;
    double published_tokens_per_s_per_gpu = 0;
    double predicted_tokens_per_s_per_gpu = 0;
    double error_pct = 0;  // (predicted - published) / published * 100
    double mfu = 0;        // predicted
    bool fits = true;      // predicted memory verdict
};

struct ValidationResult {
    std::vector<ValidationRow> rows;
    double mape_pct = 0;           // mean |error_pct|
    double mean_signed_pct = 0;    // mean error_pct (> 0: too fast on average)
    double max_abs_error_pct = 0;
};

// The source family of a run: its name up to the first '-' (the tables name
// runs SOURCE-..., e.g. narayanan21, megatron24, vtrain, nemo2407, tt2412).
// Runs of one family share a paper, a framework release and its conventions,
// so they are held out together.
std::string source_family(const std::string& run_name);

// One row of a runs table with its job loaded (load_job), ready for any
// number of estimate() calls.
struct MeasuredRun {
    std::string name;
    double measured_tokens_per_s_per_gpu = 0;  // the table's tokens_per_s_per_gpu
    Job job;
};

// Reads the table and loads each row's job (runs/NAME.json, else
// runs/NAME.yaml, beside the table), in table order. Throws InputError (file
// and line or key) for a missing/malformed table or job file, a missing
// column, a non-positive measurement, or a table without runs.
std::vector<MeasuredRun> load_run_table(const std::string& csv_path);

// Predicts each run with `cal`; runs that do not fit in memory are still
// predicted and counted in the MAPE (ValidationRow::fits says which).
// Precondition: runs not empty.
ValidationResult validate_runs(const std::vector<MeasuredRun>& runs, const Calibration& cal);

// load_run_table + validate_runs. Throws InputError.
ValidationResult validate_table(const std::string& csv_path, const Calibration& cal);

// CSV with RFC 4180 quoting; first row is the header. Exposed for tests.
// Bounds of parse_csv (docs/reliability.md "Bad input and limits"): InputError beyond them.
inline constexpr std::size_t kMaxCsvFields = 1'000;   // fields in one row
inline constexpr std::size_t kMaxCsvRows = 100'000;   // rows, the header included
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& source);

}  // namespace lostflops
