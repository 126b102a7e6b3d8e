// What `goodput`, `validate`, `list` and the `calibrate` commands compute and
// print, in the library so that the command line and the Python module
// (python/module.cpp) give the same answer: each returns values or text (JSON
// text as the command prints it with --format json, indented by 2, without
// the final newline); the library prints nothing. The renderings of the
// other commands are beside their computations (report.h, explain.h,
// search_report.h, trace_report.h, trace_diff.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lostflops/calibrate_components.h"
#include "lostflops/calibrate_runs.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/interval_coverage.h"
#include "lostflops/nccl_tests.h"
#include "lostflops/run_cost.h"
#include "lostflops/validate.h"

namespace lostflops {

// ---- goodput (src/report/goodput_report.cpp)
struct Goodput {
    Estimate estimate;
    RunCost run;
    std::optional<RunSimulation> simulation;  // samples > 0
};
// InputError (job.source, training.train_tokens) when the job has none; a
// plan that does not fit is still costed (estimate.memory.fits says so).
Goodput goodput(const Job& job, const Calibration& cal, int samples, uint64_t seed);
// What goodput warns when the plan does not fit (stderr and JSON alike).
inline constexpr const char* kGoodputDoesNotFit = "the plan does not fit in GPU memory (lostflops estimate says why)";
// run_json + schema_version, job, step_time_s, mfu, fits, and warnings: the
// model's and the job's ({key, message}, as estimate's JSON), then
// {"memory", kGoodputDoesNotFit} when the plan does not fit.
std::string goodput_json(const Job& job, const Goodput& g);
std::string goodput_table(const Job& job, const Goodput& g);

// ---- validate (src/report/validation_report.cpp)
// The runs a profile's fitted factors were fitted on: the `fit_on` tables,
// else the profile's fitted_on (paths from the repository root, read from the
// working directory). nullopt, with the reason in `why`, when the profile
// fits nothing or its tables are not at hand; InputError for a bad table.
std::optional<std::vector<MeasuredRun>> fit_set_runs(const std::vector<std::string>& fit_on, const Calibration& cal,
                                                     std::string& why);
struct ValidationReport {
    std::vector<MeasuredRun> runs;
    ValidationResult result;                 // in sample
    std::optional<LeaveOneSourceOut> loso;   // none: `why`
    std::string why;
    IntervalCoverage coverage;               // the 80 % interval, own source held out
    MemoryValidation memory;                 // the rows with a measured peak or an oom verdict
    std::vector<std::string> warnings;       // load_run_table's (a column a typo away from a read one)
    // What `estimate` would warn of each run's job file (estimate_warnings):
    // keys not modelled, plans a framework would refuse, settings that cost.
    struct RunWarning {
        std::string run, key, message;
    };
    std::vector<RunWarning> run_warnings;
};
ValidationReport validation_report(const std::string& table, const Calibration& cal,
                                   const std::vector<std::string>& fit_on);
std::string validation_json(const ValidationReport& v);
std::string validation_table(const ValidationReport& v);

// ---- list (src/report/catalog_list.cpp)
struct CatalogKind {
    const char* name;  // "gpus", "models", "clusters", "frameworks"
    const char* help;
};
const std::vector<CatalogKind>& catalog_kinds();
// `list KIND [--format json]`: the table text or the JSON text; InputError
// for an unknown kind.
std::string catalog_list(const std::string& kind, bool json);

// ---- calibrate (src/report/calibrate_commands.cpp)
// The profile each form writes (YAML) and what it was made of.
struct NcclCalibration {
    std::string yaml;
    std::vector<BusBwCurve> curves;
    std::vector<std::string> warnings;
    size_t profile_curves = 0;  // curves of the written profile (base's included)
};
// `calibrate nccl FILE...`: base "" is the built-in defaults.
NcclCalibration calibrate_nccl(const std::vector<std::string>& files, const NcclTestsOptions& parse,
                               const std::string& base);
struct RunsCalibration {
    std::string yaml;
    FitResult fit;
    std::optional<CrossValidation> cv;        // folds >= 2
    std::optional<LeaveOneSourceOut> loso;    // runs of 2 source families or more
    std::vector<MeasuredRun> runs;
    std::string base_name;
    std::vector<std::string> warnings;        // load_run_table's
};
// `calibrate runs TABLE`: folds none is min(5, runs); given, 2 to the runs
// (InputError otherwise).
RunsCalibration calibrate_runs(const std::string& table, const std::string& base, std::optional<int> folds);
struct ComponentsCalibration {
    std::string yaml;
    ComponentFit fit;
};
// `calibrate components`: each measured folder's rows (gpus: one catalog GPU
// per folder, or none: the folders' names) over the built-in tables.
ComponentsCalibration calibrate_components(const std::vector<std::string>& measured,
                                           const std::vector<std::string>& gpus, const std::string& base);
// `calibrate residuals TABLE...`: the residual CSV, and its summary.
struct ResidualTable {
    std::string csv;
    std::string note;  // why the profile's fit set was not used (empty: it was)
    size_t runs = 0, families = 0;
    double mape_pct = 0, mean_signed_pct = 0;
};
ResidualTable residual_table(const std::vector<std::string>& tables, const std::string& calibration,
                             const std::vector<std::string>& fit_on);

}  // namespace lostflops
