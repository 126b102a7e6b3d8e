// "Where did my FLOPs go?": the MFU waterfall of a job, the levers that win
// FLOPs back, and the self-contained HTML report (`lostflops explain`,
// `lostflops report`). Returns values and strings; the CLI prints them.
//
// Waterfall: the ideal step time is model FLOPs / (GPUs * dense peak); every
// other second of estimate()'s step time goes to exactly one named step, so
// 100 - sum(pp) == 100 * mfu (to rounding) with pp = 100 * s / step_time_s.
// Levers: single changes of the plan or hardware, each a --set list applied to
// the job as `estimate --set` would, kept when the changed job loads, fits in
// memory and gains MFU; mfu_after is estimate() of that changed job.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: a .cpp that builds or reads JSON includes json.hpp

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/spec.h"
#include "lostflops/trace.h"
#include "lostflops/trace_compare.h"
#include "lostflops/trace_report.h"

namespace lostflops {

// Where a job comes from, so that a lever can re-load it with more --set
// overrides: a file ("-" is not accepted: it cannot be read twice) or the
// built-in default job (empty path).
struct JobSource {
    std::string path;                    // empty: the built-in default job
    std::vector<std::string> overrides;  // the command line's --set, in order
    // The search's plan as --set overrides (--best, or a job without a
    // parallel section: cli overrides_with_plan), after `overrides`; a
    // lever's `set` repeats them, so that estimate reproduces it without
    // searching again.
    std::vector<std::string> plan = {};
};

// load_job / default_job with `overrides`, `plan`, then `extra`. Throws InputError.
Job load_job_source(const JobSource& src, const std::vector<std::string>& extra = {});

struct WaterfallStep {
    std::string key;   // stable identifier: "gemm", "attention", "memory_bound", ...
    std::string name;  // for people
    double pp = 0;     // percentage points of dense peak lost at this step
    double s = 0;      // seconds per step
};

// The steps of `e` = estimate(job, cal), in the order the losses are taken.
// Steps of zero seconds are left out. Attention can be negative when the
// kernel skips the causal mask's half that model FLOPs count (docs/model.md
// "Definitions").
std::vector<WaterfallStep> mfu_waterfall(const Job& job, const Calibration& cal, const Estimate& e);

struct Lever {
    std::string change;            // in words: "pp 8 (dp 16)"
    std::vector<std::string> set;  // the --set overrides that make it (added to the job's own; with the
                                   // searched plan's first, JobSource::plan, where the job was searched)
    double mfu_after = 0;          // estimate() of the changed job
    double step_time_s = 0;
    double tokens_per_s_per_gpu = 0;
};

// Every candidate (docs/explain-and-report.md lists them), best MFU first, at most
// `count`; only those that load, fit and raise the MFU.
std::vector<Lever> mfu_levers(const JobSource& src, const Job& job, const Calibration& cal, const Estimate& e,
                              int count = 3);

// An MoE job's expert walls (lostflops/expert_walls.h) as explain shows
// them: each wall's exposed seconds per step and share of the step, the main
// walls that hold it, and the single change of the plan (of the levers'
// candidates) that shrinks it most, re-estimated as a lever is: of those that
// fit and do not lengthen the step, else of all (src/explain/expert_levers.cpp).
struct ExpertWallLever {
    std::string change;
    std::vector<std::string> set;  // as Lever::set
    double wall_s_after = 0;       // this wall's seconds per step with the change
    double mfu_after = 0, step_time_s = 0;
    bool fits = true;  // false (or a longer step) only where no change that fits and keeps the step shrinks it
};
struct ExpertWallRow {
    std::string key;     // "router", "permute", "dispatch", "combine", "expert_gemm", "shared_experts", "expert_dp"
    std::string name;
    double s = 0;        // seconds per step on the critical path (exposed)
    double share = 0;    // s / step time
    double collective_s = 0;         // communication: the collectives' whole time per step, hidden or not
    std::vector<std::string> in;     // the main walls (walls.h names) that hold it
    bool has_lever = false;
    ExpertWallLever lever;
};
struct ExpertWallsView {
    bool moe = false;          // false for a dense job: nothing shown
    std::string dispatcher;    // alltoall, allgather, deepep
    std::vector<ExpertWallRow> walls;
};
ExpertWallsView expert_walls_view(const JobSource& src, const Job& job, const Calibration& cal, const Estimate& e);

struct Explanation {
    std::string job_name;
    double mfu = 0;              // == estimate's
    double step_time_s = 0;
    double ideal_s = 0;          // model FLOPs / (GPUs * dense peak)
    double peak_tflops = 0;      // dense, of the training precision
    bool fits = true;            // estimate's memory verdict (the waterfall is given either way)
    double peak_bytes = 0, capacity_bytes = 0;
    std::vector<WaterfallStep> waterfall;
    std::vector<Lever> levers;
    ExpertWallsView experts;     // MoE jobs: the expert walls apart
    std::vector<JobWarning> warnings;  // estimate's (report.h estimate_warnings)
};

Explanation explain(const JobSource& src, const Calibration& cal);
// The same for a job already loaded from `src` and its estimate.
Explanation explain(const JobSource& src, const Job& job, const Calibration& cal, const Estimate& e);

std::string explain_table(const Explanation& x);
std::string explain_markdown(const Explanation& x);
// {mfu, step_time_s, ideal_s, peak_tflops, job, fits, waterfall: [{key, name, pp, s}],
//  levers: [{change, set, mfu_after, step_time_s, tokens_per_s_per_gpu}],
//  MoE jobs only: expert_walls: {dispatcher, walls: [{key, name, s, share, collective_s, in,
//  lever: {change, set, wall_s_after, mfu_after, step_time_s, fits} or null}]},
//  warnings: [{key, message}]}
nlohmann::json explain_json(const Explanation& x);

// The whole report as one self-contained HTML document (inline CSS and SVG,
// no script, no external resource): waterfall, roofline, pipeline timeline of
// one step, memory per pipeline rank, with text tables beside each chart; and
// when `scaling_gpus` is not empty, the scaling curve: the best plan of the
// search at each of those GPU counts (the job's parallel section ignored).
// `progress`, when given, is called from the calling thread with the share
// of the scaling curve's searches done (0..1). `traces` (analyze()'s ranks
// of a trace recorded with profile_memory=True): the allocated and reserved
// timeline of the rank with the highest allocated peak drawn over the
// predicted memory over the step, and its peaks beside the predicted ones;
// throws InputError (naming the first trace) when none has [memory] events.
std::string html_report(const JobSource& src, const Calibration& cal, const std::vector<int>& scaling_gpus = {},
                        const std::function<void(double)>& progress = {},
                        const std::vector<trace::RankReport>& traces = {});

// The traces' report (`lostflops trace FILES --report F.html`, src/explain/
// trace_html.cpp), same page rules, with what the text output has.
std::string trace_html_report(const trace::TraceReport& t);

}  // namespace lostflops
