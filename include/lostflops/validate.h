// Validation against published runs: a CSV table shaped like
// shared/reference/published-runs.csv (columns `name` and
// `tokens_per_s_per_gpu` required; `name` names runs/NAME.json beside the
// table), each run predicted and compared.
#pragma once

#include <optional>
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
    double measured_tokens_per_s_per_gpu = 0;  // the table's tokens_per_s_per_gpu; 0: none (oom, or no column)
    Job job;
    bool oom = false;                          // tokens_per_s_per_gpu "oom": the run ran out of memory
    // Measured peak memory per GPU, bytes; 0: not measured. Allocated:
    // torch.cuda.max_memory_allocated (column peak_allocated_GiB); reserved:
    // max_memory_reserved (column measured_peak_GiB, torchtitan's figure).
    double measured_allocated_bytes = 0;
    double measured_reserved_bytes = 0;
    bool has_throughput() const { return measured_tokens_per_s_per_gpu > 0; }
};

// The rows of `runs` with a measured throughput (the ones validate_runs and
// the fits compare), in order.
std::vector<MeasuredRun> throughput_runs(const std::vector<MeasuredRun>& runs);

// Measured memory against the prediction: each row with a measured peak or
// an out-of-memory verdict.
struct MemoryValidationRow {
    std::string name;
    bool reserved = false;        // the measurement is max reserved (else max allocated)
    double measured_bytes = 0;    // 0: none (an oom row)
    double predicted_bytes = 0;   // Memory::reserved_bytes or allocated_bytes, as measured
    double error_pct = 0;         // (predicted - measured) / measured * 100
    bool measured_oom = false;
    bool predicted_fits = true;
};
struct MemoryValidation {
    std::vector<MemoryValidationRow> rows;
    int measured = 0;              // rows with a measured peak
    int within_5_pct = 0, within_10_pct = 0;
    double mape_pct = 0, mean_signed_pct = 0, max_abs_error_pct = 0;
    int ran_but_does_not_fit = 0;  // rows that ran (no oom) predicted "does not fit"
    int oom_rows = 0, oom_predicted = 0;  // oom rows, and those predicted "does not fit"
};
MemoryValidation validate_memory(const std::vector<MeasuredRun>& runs, const Calibration& cal);

// Reads the table and loads each row's job (runs/NAME.json, else
// runs/NAME.yaml, beside the table), in table order. Columns: name;
// tokens_per_s_per_gpu (a positive number, or "oom"), peak_allocated_GiB or
// measured_peak_GiB (at least one of the three); optional recipe (the H200
// table's: autocast = training.framework hf, zero 0, fused AdamW; fsdp2 =
// framework hf, zero 3, foreach AdamW; shared/reference/h200/README.md) and
// compiled (0 or 1: training.compile), applied over the job file. Throws
// InputError (file and line or key) for a missing/malformed table or job
// file, a missing column, a non-positive measurement, an unknown recipe, or a
// table without runs, and a num_gpus or gpu cell (a catalog GPU's name) that
// its run file contradicts. Other columns are notes; one a typo away from a
// read column ("recipie") adds a warning to `warnings` when given.
std::vector<MeasuredRun> load_run_table(const std::string& csv_path, std::vector<std::string>* warnings = nullptr);

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
// `row_lines`, when given, receives the line of `text` (1-based) on which
// each returned row starts: blank lines are skipped and a quoted field may
// span lines, so a row's index is not its line.
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& source,
                                                std::vector<std::size_t>* row_lines = nullptr);
// A table's number cell: a decimal as a table writes it ("1297", "-4.5",
// "2.5e3"), finite, with nothing before or after it; nullopt otherwise (strtod,
// used before, took "0x2448" for 9288 and " 12" for 12).
std::optional<double> parse_table_number(const std::string& text);

}  // namespace lostflops
