// The policy of `lostflops search`, shared by the command line and the Python
// module (python/module.cpp) so both give the same answer: how many plans a
// listing keeps and sorts, the whole-run re-scoring of the first plans for
// --by time-to-train | cost (rescore_by_run), the price the listing quotes,
// and the sweeps over cluster sizes (--gpus, --min-gpus). The renderings are
// in search_report.h; the library prints nothing.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/error.h"
#include "lostflops/framework_rules.h"
#include "lostflops/search_report.h"

namespace lostflops {

// --by time-to-train | cost on a job with training.train_tokens: the first
// this many plans of the throughput ranking are re-estimated and re-ordered
// by the whole run (run_cost.h). A listing of fewer still sorts this many.
inline constexpr size_t kRunRescored = 20;
// JSON "top" details at most this many plans (each re-estimated for its walls).
inline constexpr size_t kJsonTopDetails = 5;

enum class ListingFormat { table, json, csv };

struct ListingRequest {
    RankBy by = RankBy::throughput;
    size_t top = 5;            // plans listed; 0: every plan (--top all)
    ListingFormat format = ListingFormat::json;
    bool keep_every_plan = false;  // --compare: every evaluated plan kept and sorted
};

// A search run for a listing: the result and the view to render it with.
struct Listing {
    SearchResult result;
    SearchView view;
    SearchOptions options;  // as searched (for listing_plans)
    bool streamed = false;  // --top all in JSON / CSV: the plans are searched again chunk by chunk
};

// Searches `job` with `opts` (its fix, threads, progress and cancel are kept;
// by, sort_top, keep_best and shape_ranks are set from `req`), re-scores the
// first kRunRescored plans by the whole run when req.by is time-to-train or
// cost and job.training.train_tokens > 0 (view.runs), and sets the view: the
// price is job.run.price_per_gpu_hour, JSON details the first
// min(top, kJsonTopDetails) plans (kJsonTopDetails for every plan).
Listing search_listing(const Job& job, const Calibration& cal, SearchOptions opts, const ListingRequest& req);
// The plans of a streamed listing (every_plan), else empty (the result's own).
// `listing` must outlive the returned function.
PlanChunks listing_plans(const Job& job, const Calibration& cal, const Listing& listing);

// The job on `num_gpus` GPUs (loaded again with cluster.num_gpus=N: the
// presets and checks see the new count).
using JobOnGpus = std::function<Job(int num_gpus)>;

// The best plan of the job on one cluster size (`job` already on that size).
SweepPoint sweep_point(const Job& job, const Calibration& cal, SearchOptions opts);
// `search --gpus`: the best plan at each size; `on_size(i)` is called before
// size i is searched (a progress line may name it). Stops early when
// opts.cancel turns true.
std::vector<SweepPoint> sweep_sizes(const JobOnGpus& job_on, const Calibration& cal, const SearchOptions& opts,
                                    const std::vector<int>& sizes,
                                    const std::function<void(size_t)>& on_size = {});
// `search --min-gpus`: node counts upward from one node (or `job`'s GPUs when
// fewer) to 1,000,000 GPUs; the first on which a plan fits (empty: none, or
// cancelled). A count the job's own plan keys cannot lay out, or that
// job_on refuses, is passed over (job_on's error is thrown after 1,024
// refused counts in a row).
std::vector<SweepPoint> min_gpus_sweep(const Job& job, const JobOnGpus& job_on, const Calibration& cal,
                                       const SearchOptions& opts);
// `export KIND --best`: the job with the search's best plan (by throughput)
// among those `target` can launch (framework_rules.h; none: the job's own
// stack, training.framework); `source` names the job in the error when no
// such plan fits. A job's own setting that no plan of that stack can run (a
// DualPipe schedule under Megatron-Core: the DeepSeek-V3 example) is searched
// without, and named in `dropped` (unlaunchable_fixes) for the caller to say so.
//
// `takes`, when given (export maxtext: a stack with no launch rules here),
// says whether the exporter can write a plan: it throws InputError when it
// cannot. The first of the first kTakesWithin plans of the ranking it takes
// wins, and `taken_note` (when given) says which rank when it is not the
// first; NoPlanFits names takes.who when no plan fits, InputError when none
// of those it takes (a plan further down may be one). When the job's fixed
// keys leave no layout to evaluate (`--set parallel.tp=3` with 64 heads) it
// throws InputError starting with kNoPlanCanBeSearched: bad input, not a job
// too large; a caller that can load the job with its plan names the rule.
struct PlanTaker {
    std::string who;  // "MaxText"
    std::function<void(const Job&)> check;
};
inline constexpr size_t kTakesWithin = 1000;
inline constexpr std::string_view kNoPlanCanBeSearched = "no plan can be searched: ";
// `export maxtext --best` (command line and Python alike): the plans
// export_maxtext (src/interop/maxtext_export.h) can write.
PlanTaker maxtext_plan_taker();
Job best_launchable_plan(const SearchJob& sj, const Calibration& cal, std::optional<LaunchStack> target,
                         const std::string& source, std::vector<UnlaunchableFix>* dropped = nullptr,
                         const PlanTaker& takes = {}, std::string* taken_note = nullptr);

// The job reader's refusal of a job without a `parallel:` section
// (job/job_sections.cpp): estimate, explain, report, goodput and export
// search such a job's plan as --best does, on the command line and in Python.
bool is_missing_plan(const InputError& e);
// "SOURCE: --best searched without KEY: RULE": a setting of the job the
// stack the search launches cannot run (best_launchable_plan's `dropped`).
std::string dropped_setting_note(const std::string& source, const UnlaunchableFix& u);

// A job whose plan the search sets (--best, or a job without a `parallel:`
// section): the search's best plan among those the job's own stack
// launches (best_launchable_plan) as --set arguments to add to the job's
// (plan_set_arguments; a 1F1B-family winner of a job that named another
// schedule also gets parallel.pipeline_schedule=null), the plan in `won`,
// the job's settings the search went without in `dropped`. The command line
// (src/cli/common.cpp overrides_with_plan) and the Python module alike.
struct SearchedPlan {
    std::vector<std::string> sets;
    PlanScore won;
    std::vector<UnlaunchableFix> dropped;
};
SearchedPlan searched_plan(const SearchJob& sj, const Calibration& cal, const std::string& source);
// A note of a searched plan: the command line writes "lostflops: note: TEXT"
// to standard error, the Python module a warning (kind "note", the setting,
// the text).
struct PlanNote {
    std::string setting;  // what it is about: "parallel", a dropped setting's key, "training.framework"
    std::string text;     // what follows "lostflops: note: " (most begin "SOURCE: ")
};
// What both write of a searched plan, in this order: for each dropped
// setting "SOURCE: --best searched without KEY: RULE" (setting KEY), then
// "SOURCE: the plan is the search's best[ (the job has no parallel
// section)]: PLAN (lostflops search lists the others)" (setting parallel).
std::vector<PlanNote> searched_plan_notes(const SearchedPlan& p, const std::string& source, bool missing);

// The framework that prices `export KIND --best`'s plan, so that the plan
// exported is the best under the cost of the stack that will run it: torchtitan
// is fsdp (FSDP2), megatron the job's Megatron stack or else megatron-core;
// maxtext (or any other kind) the job's own. nullopt when that is the job's own
// framework (the caller loads the job again with training.framework set).
std::optional<Framework> export_framework(const std::string& kind, Framework job_framework);

// What `search --gpus | --min-gpus --format json` prints:
// {"schema_version", "sweep": sweep_json(points)}, indented by 2.
std::string sweep_json_text(const std::vector<SweepPoint>& points);

}  // namespace lostflops
