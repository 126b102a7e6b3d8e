// Rendering an Estimate for people (text table) and programs (JSON), and the
// "does not fit" advice: each plan change evaluated by re-running the
// estimate. Returns values and strings; the CLI prints them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: a .cpp that builds or reads JSON includes json.hpp

#include "lostflops/collective_curves.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/host_speed.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/run_cost.h"

namespace lostflops {

// Version of the JSON objects `lostflops estimate|validate --format json`
// print (and of their error object). Raised when a key is renamed or removed
// or its meaning or unit changes; adding a key keeps it. docs/commands.md "JSON output".
inline constexpr int kJsonSchemaVersion = 1;

enum class Fit { fits, does_not_fit };

// One change of the plan and what it would do to the worst GPU's memory.
struct PlanChange {
    std::string change;                // "zero 3", "micro_batch_size 1", ...
    std::vector<std::string> set;      // the --set overrides that make it ("parallel.zero=3")
    double peak_bytes = 0;             // memory per GPU on the worst pipeline rank
    double capacity_bytes = 0;
    Fit fit = Fit::does_not_fit;
    double step_time_s = 0;            // estimated step time under the change
};

// The smallest number of the job's GPUs on which the model fits with some
// plan of the minimum-memory family (fit_advice below states the method).
struct MinGpus {
    int num_gpus = 0;              // 0: no count up to searched_up_to fits
    int searched_from = 0;         // the search's first count (lower bound: model states fully sharded)
    int searched_up_to = 0;        // the last count tried
    std::vector<std::string> set;  // --set overrides of the plan found (with cluster.num_gpus)
    std::string plan;              // that plan in words
    double peak_bytes = 0;
    double step_time_s = 0;
};

// The fitting plan with the fewest changed settings, from the full search.
struct NearestFit {
    int changes = 0;
    std::string plan;              // in words
    std::vector<std::string> set;  // --set overrides that make it
    double peak_bytes = 0;
    double step_time_s = 0;
};

struct FitAdvice {
    std::optional<NearestFit> nearest;
    // Only the changes that lower the peak by at least 0.05 GiB; those that
    // fit first (fastest first), then the others (lowest peak first).
    std::vector<PlanChange> changes;
    MinGpus min_gpus;
    // False when AdviceSearch::if_cheap left that search out (nearest / min_gpus empty).
    bool nearest_searched = true, min_gpus_searched = true;
};

// The two searches of the advice (the nearest fitting plan, the fewest GPUs):
// run to the end (full), or only while provably cheap (if_cheap: at most
// kCheapNearestPlans plans evaluated, counted before evaluating them, and at
// most kCheapMinGpusEstimates estimates), else left out and said so.
enum class AdviceSearch { if_cheap, full };
inline constexpr int64_t kCheapNearestPlans = 100'000;
inline constexpr int kCheapMinGpusEstimates = 200;

// Evaluates, from the job's plan, one change at a time (each a copy of the
// Job with plan fields changed, kept only when job/validate.cpp accepts it):
// ZeRO 1/2/3 above the current stage when dp*cp > 1; a smaller micro-batch
// (the largest divisor below it, and 1); recompute selective / full (every
// layer); more tp within a node (the smallest doubling that fits, else the
// lowest peak), dp shrinking; more pp likewise; sequence parallelism when
// tp > 1 and off. Then the GPU-count search (MinGpus): counts 1, 2, 4, ... up
// to a node, then whole nodes, from the count on which the fully sharded model
// states alone fill the memory; at each count every tp (power of two within a
// node) and pp (divisor) with micro-batch 1, full recompute, sequence
// parallelism, ZeRO-3 over dp*cp (ZeRO 0 when that is 1), vpp 1, the job's cp
// and ep; the first count where one fits, with the fastest plan that fits.
FitAdvice fit_advice(const Job& job, const Calibration& cal, AdviceSearch search = AdviceSearch::full);

// The single changes of fit_advice that lower the peak by at least 0.05 GiB,
// those that fit first (fastest first), then the others (lowest peak first):
// what to change if a plan that fits runs out of memory anyway.
std::vector<PlanChange> memory_savers(const Job& job, const Calibration& cal);

// A plan that leaves free less than this share of its usable memory (spare
// and headroom together) is tight: its estimate lists memory_savers. 10 %:
// the ledger's error on the published max reserved of torchtitan's runs,
// 7 of 8 within 10 %, 6.0 % mean absolute
// (`lostflops validate ../shared/reference/modern/measured-memory.csv`,
// docs/memory.md); on our own H200 runs it is within 2 %.
inline constexpr double kTightMarginShare = 0.10;
bool tight_fit(const Memory& m);
// The first `most` savers, one line each: change, peak, step time, --set flags.
std::string memory_savers_text(const std::vector<PlanChange>& savers, std::size_t most);

// What the report adds beyond the Estimate itself.
struct ReportExtras {
    std::vector<JobWarning> warnings;  // estimate_warnings(job, curves)
    std::optional<FitAdvice> advice;   // fit_advice(job, cal), when the plan does not fit
    std::vector<PlanChange> savers;    // memory_savers(job, cal), when it fits tightly (tight_fit)
    std::optional<RunCost> run;        // run_cost(job, e), when training.train_tokens > 0
    std::optional<PredictionInterval> interval;  // prediction_interval(job, e, cal)
    std::optional<HostSpeedRange> host_speed;    // host_speed_range(job, e, cal): host-bound jobs
    std::vector<CollectiveCurveUse> curves;      // collective_curves(job, cal): measured curves used
};

// What `estimate` warns of, in this order: the model reader's keys not
// modelled (model_warnings), the job's settings (job_warnings), the plan's
// breaks of its framework's launch rules (rule_breaks), one per measured
// collective curve `curves` take from another GPU. `explain` and `report`
// give the same list.
std::vector<JobWarning> estimate_warnings(const Job& job, const std::vector<CollectiveCurveUse>& curves);

// Everything `estimate` reports beside the Estimate, for the CLI and the
// Python module alike: the job's warnings (and one per measured nccl curve
// taken on another GPU), the advice when the plan does not fit, the whole run
// when training.train_tokens > 0, the 80 % interval and the curves used.
// `advice`: how far the advice searches; nullopt: no advice. `schedule`:
// the pipeline timing `e` was estimated with (the host-speed range's steps
// take it too).
ReportExtras estimate_extras(const Job& job, const Estimate& e, const Calibration& cal,
                             std::optional<AdviceSearch> advice, ScheduleModel schedule = ScheduleModel::closed_form);

std::string estimate_table(const Job& job, const Estimate& e, const ReportExtras& extras = {});
std::string fit_advice_text(const FitAdvice& a);

// The JSON contract (docs/commands.md "JSON output"), units in the key names: top level
// schema_version, job (the resolved job: job_json), step_time_s,
// tokens_per_s_per_gpu, with extras.interval step_time_s_range and
// tokens_per_s_per_gpu_range [lo, hi] and prediction_interval {regime,
// residuals, error_p10_pct, error_p90_pct}, with extras.curves
// collective_curves [...], mfu, hfu (fractions), ..., breakdown {cause_s},
// memory {..._bytes, fits, ...}, warnings [{key, message}], and when the plan
// does not fit advice [...] and min_gpus_to_fit {...}; with extras.run the
// whole run under `run` (run_report.h run_json).
nlohmann::json estimate_json(const Job& job, const Estimate& e, const ReportExtras& extras = {});

// `j` as text (`indent` as nlohmann's dump: -1 one line): a string that is
// not UTF-8 (a path's bytes: the job's source) is written with U+FFFD for
// its stray bytes, where nlohmann's default handler throws (an internal
// error, exit 3). Every JSON document the tool writes goes through it.
std::string json_text(const nlohmann::json& j, int indent = 2);

// The job as resolved: model shape, GPU and its specs, cluster topology, the
// full plan with every default and `auto` decided (attention kernel,
// framework, overlap_grad_reduce, tp_comm_overlap, ZeRO-3 engine settings).
nlohmann::json job_json(const Job& job);
// The job's `parallel:` section as a job file gives it (with the ZeRO-3 engine's resolved keys).
nlohmann::json parallel_json(const Job& job);

// {"advice": [{change, set, peak_bytes, capacity_bytes, fits, step_time_s}],
//  "min_gpus_to_fit": {num_gpus (null: none found), searched_from_gpus,
//  searched_up_to_gpus, plan, set, peak_bytes, step_time_s}}
nlohmann::json fit_advice_json(const FitAdvice& a);
// [{change, set, peak_bytes, capacity_bytes, fits, step_time_s}]: fit_advice's
// "advice" and a tight plan's "memory_savers".
nlohmann::json plan_changes_json(const std::vector<PlanChange>& list);

// Why a plan does not fit: the largest parts and which kind of memory has to
// shrink. Empty when it fits.
std::string memory_verdict(const Job& job, const Memory& m);

// The assumption the verdict rests on (activations in flight, ZeRO-3 live
// parameters) when the plan does not fit or is within 10 % of capacity;
// empty otherwise.
std::string memory_assumption(const Job& job, const Memory& m);

}  // namespace lostflops
