// Fitting the *fitted* factors of a calibration profile to measured runs
// (`lostflops calibrate runs TABLE.csv`).
//
// Which factors are fitted, and the range each is searched in, is the table
// kFittedFields of src/calibrate/fitted_fields.h; every other factor keeps the
// base profile's value. The objective is the mean absolute percentage error of
// tokens/s per GPU over the runs (runs that do not fit in memory included, as
// `validate` does). The search is deterministic: coordinate descent over an
// even grid inside each range, starting from the middle of each range (so the
// result does not depend on the profile it starts from, and a refit without
// some runs is the same procedure), then coordinate descent over finer local
// grids around the result; a candidate replaces the current value only if it
// lowers the error.
//
// Only system-level factors are fitted (fitted_fields.h); every device-family
// factor comes from component micro-benchmarks (calibrate_components.h). A
// factor is left at its base value when no run is sensitive to it (its lowest
// and highest value give the same prediction for every run).
//
// Contract: pure functions of their arguments (same input, same output), no
// I/O. Jobs are loaded once by the caller (load_run_table) and each evaluation
// is estimate() calls with a modified Calibration. Bad input (no runs, a
// number of folds outside [2, runs]) throws InputError.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/validate.h"

namespace lostflops {

struct FitOptions {
    int grid_points = 13;    // even grid over each range (>= 2)
    int max_sweeps = 6;      // coordinate-descent sweeps per grid, at most
    int refine_points = 9;   // local grid of each refinement round (>= 3)
    int refine_rounds = 2;   // each narrows the step by (refine_points - 1) / 2
    // A factor moves only when that lowers the MAPE by at least this many
    // percentage points: factors the runs cannot pin down keep their base
    // (documented) value instead of drifting along a flat objective.
    double min_gain_pct = 0.05;
};

enum class FactorStatus {
    fitted,        // searched within [lo, hi]
    insensitive,   // no run's prediction changes between lo and hi
};
const char* to_string(FactorStatus s);

struct FactorFit {
    std::string key;  // profile key, e.g. "kernel_overhead_us"
    double lo = 0;
    double hi = 0;
    double base = 0;   // value in the base profile
    double value = 0;  // value in the fitted profile (== base unless fitted)
    FactorStatus status = FactorStatus::fitted;
    bool at_bound = false;  // fitted and ended on lo or hi: the model may miss a mechanism
};

struct FitResult {
    Calibration calibration;         // base with the fitted factors replaced
    std::vector<FactorFit> factors;  // kFittedFields order
    ValidationResult before;         // the runs predicted with the base profile
    ValidationResult after;          // ... and with the fitted one
    long evaluations = 0;            // objective evaluations of the search
};

// Throws InputError if `runs` is empty or options are out of range.
FitResult fit_runs(const std::vector<MeasuredRun>& runs, const Calibration& base,
                   const FitOptions& options = {});

struct FoldResult {
    std::vector<std::size_t> held_out;  // indices into runs
    double mape_pct = 0;                // held-out runs predicted by the fit on the others
    double max_abs_error_pct = 0;
};

struct CrossValidation {
    int folds = 0;
    std::vector<FoldResult> per_fold;
    std::vector<double> held_out_error_pct;  // per run, table order: (pred - measured) / measured * 100
    double mape_pct = 0;                     // mean |held_out_error_pct|
    double max_abs_error_pct = 0;
    std::size_t worst_run = 0;               // index of the largest |held_out_error_pct|
};

// k-fold cross-validation: run i belongs to fold i % folds; each fold is
// predicted by fit_runs(other folds, base). Throws InputError unless
// 2 <= folds <= runs.size().
CrossValidation cross_validate(const std::vector<MeasuredRun>& runs, const Calibration& base, int folds,
                               const FitOptions& options = {});

// Leave-one-source-out error: the runs of each source family of `judged`
// (source_family, validate.h) predicted by fit_runs(`fit_set` without that
// family's runs, prior), where the prior is `base` with every fitted factor at
// the middle of its range: `base`'s own fitted values saw every source, so a
// factor the remaining runs cannot set takes the prior, never the held-out
// source's fit. A family absent from the fit set is predicted by the fit on
// the whole fit set (from the same prior). The honest error of a profile whose
// factors were fitted on `fit_set`: no run is predicted by a fit that saw its
// source.
struct SourceError {
    std::string family;
    int runs = 0;
    double mape_pct = 0;
    double mean_signed_pct = 0;
    double max_abs_error_pct = 0;
    // Fitted factors (kFittedFields keys) this family's runs feel but the fit
    // without it cannot set (its MAPE moves by less than min_gain_pct over
    // the factor's whole range): their prior, the middle of each range,
    // predicts the family. A large held-out error with a factor here means
    // only this source measures it. Empty for a family not in the fit set.
    std::vector<std::string> undetermined;
};
struct LeaveOneSourceOut {
    std::vector<double> held_out_error_pct;  // per judged run, table order
    std::vector<double> held_out_tokens_per_s_per_gpu;
    std::vector<SourceError> families;       // in order of first appearance
    double mape_pct = 0;
    double mean_signed_pct = 0;
    double max_abs_error_pct = 0;
    std::size_t worst_run = 0;
    int fits = 0;                            // fits made (one per family, plus one for families not in the fit set)
};
// Throws InputError if `judged` or `fit_set` is empty.
LeaveOneSourceOut leave_one_source_out(const std::vector<MeasuredRun>& fit_set,
                                       const std::vector<MeasuredRun>& judged, const Calibration& base,
                                       const FitOptions& options = {});

}  // namespace lostflops
