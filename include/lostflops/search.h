// Search: every parallel plan of a job, pruned, evaluated with estimate()'s
// model and ranked (`lostflops search`, docs/search.md).
//
// A plan is a layout (tp, cp, pp, dp, vpp, ep, micro-batch size) and its knobs
// (zero, recompute none / selective / full / full on the first k layers of
// each virtual stage for five k from the fewest that fit (search/knobs.h), sequence parallelism, tp_comm_overlap,
// overlap_grad_reduce). Every plan is counted once as enumerated, then is
// either pruned for divisibility (job/validate.cpp's rules), pruned for
// memory (estimate's peak over the first and last pipeline rank exceeds the
// usable HBM), evaluated, or skipped: a listing (SearchOptions::keep_best)
// does not evaluate the plans of a layout whose floor, a lower bound of
// their steps (search/step_floor.h), ranks after every plan it keeps:
//   enumerated == pruned_divisibility + pruned_memory + evaluated + skipped.
// Evaluated plans carry estimate()'s figures to the bit (tests hold the two
// together). The ranking is a total order: the criterion, then step time,
// then the plan's place in the enumeration (tp, cp, pp, micro-batch, vpp, ep,
// zero, recompute, sequence parallelism, tp_comm_overlap,
// overlap_grad_reduce ascending), so the same input gives the same ranking
// whatever the thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/framework_rules.h"
#include "lostflops/job.h"
#include "lostflops/spec.h"

namespace lostflops {

// Settings the search may not change (from the job file's parallel section
// or --fix). Unset: searched.
struct PlanFix {
    std::optional<int> tp, cp, pp, dp, vpp, ep, zero;
    std::optional<int> etp;                      // expert tensor parallel (resolved: tp when the job leaves it out)
    std::optional<MoeDispatcher> moe_dispatcher;
    std::optional<CpCommType> cp_comm_type;
    std::optional<bool> moe_a2a_overlap;         // Megatron-Core's expert all-to-all overlap
    std::optional<int64_t> micro_batch;
    std::optional<Recompute> recompute;
    std::optional<int> recompute_layers;  // with recompute full; -1: every layer
    std::optional<bool> sequence_parallel, tp_comm_overlap, overlap_grad_reduce;
    // The schedule a plan runs (effective_schedule) and its first / last stage
    // layers (-1: the even split): plan_fix_all sets them so that --rank-plan
    // matches the job's own plan, not a schedule twin or a stage variant of
    // its layout; --fix does not take them and the enumeration reads neither.
    std::optional<PipelineSchedule> schedule;
    std::optional<int> first_stage_layers, last_stage_layers;
    // Only plans this stack can launch (lostflops/framework_rules.h): a
    // layout that breaks one of its rules is pruned for divisibility, a ZeRO
    // stage it lacks is not enumerated. plan_fix_from sets the job's own
    // (training.framework); unset: every plan the checks of job/validate.cpp pass.
    std::optional<LaunchStack> launch;
};

enum class RankBy { throughput, time_to_train, cost, memory };
const char* to_string(RankBy by);

// One evaluated plan: `plan` and `micro_batch` as a job file gives them.
struct PlanScore {
    ParallelPlan plan;
    int64_t micro_batch = 0;
    double step_time_s = 0;
    double tokens_per_s_per_gpu = 0;
    double mfu = 0;
    double peak_bytes = 0;
};

// An evaluated plan as the search keeps it (24 bytes; millions fit).
struct RankedPlan {
    uint64_t order = 0;  // layout index << 32 | knob code: the plan's place in the enumeration
    double step_time_s = 0;
    double peak_bytes = 0;
};

// The first and last evaluated plan of one layout in the ranking; `any`
// false when none of its plans fits.
struct LayoutSpan {
    RankedPlan best, worst;
    bool any = false;
};

struct SearchCounts {
    int64_t layouts = 0;  // valid layouts
    int64_t enumerated = 0;
    int64_t pruned_divisibility = 0;
    int64_t pruned_memory = 0;
    int64_t evaluated = 0;
    int64_t skipped = 0;  // plans of layouts whose floor ranks after the kept plans: neither checked nor timed
};

struct SearchOptions {
    PlanFix fix;
    RankBy by = RankBy::throughput;
    // Worker threads; 0: std::thread::hardware_concurrency().
    int threads = 0;
    // Called from the calling thread about ten times a second with the share
    // of layouts done (0..1); may be empty.
    std::function<void(double)> progress;
    // How many of the ranked plans to sort (the rest stay evaluated, unsorted);
    // 0: all.
    size_t sort_top = 0;
    // Which evaluated plans to keep. 0: every one (--compare, a table's
    // --top all). N > 0: each worker keeps at least its N best and every plan
    // ranked before the best plan it dropped, so `ranked` holds exactly the
    // plans ranked before SearchResult::first_dropped (at least N):
    // the first min(sort_top, N) plans are exact, and so are the ranks of the
    // first `shape_ranks` other shapes and of those within kSimplerWithin
    // of the best (when one of those ranks after a
    // dropped plan, the search runs again counting the plans before each:
    // SearchResult::other_shape_ranks). A listing needs no more, and the
    // search writes a few MiB instead of 24 bytes per evaluated plan.
    size_t keep_best = 0;
    size_t shape_ranks = 5;
    // When it turns true the search stops at the next layout and returns what
    // it has (SearchResult::cancelled).
    const std::atomic<bool>* cancel = nullptr;
    // Keep only the plans ranked after this one (every plan is still counted):
    // the next chunk of a ranking streamed by for_each_ranked.
    std::optional<RankedPlan> after;
    // Record SearchResult::spans.
    bool record_spans = false;
    // For each of these plans, count the evaluated plans ranked before it
    // (SearchResult::counted_before).
    std::vector<RankedPlan> count_before;
    // The spans of an earlier search of the same job and options: a layout
    // is skipped (neither evaluated nor counted) when it has no plan that
    // fits, all its plans rank before `after`, or its best ranks after the
    // best plan the worker has dropped (keep_best).
    const std::vector<LayoutSpan>* spans = nullptr;
};

// How the GPUs and the batch are cut; dp = num_gpus / (tp * cp * pp).
struct SearchLayout {
    int tp = 1, cp = 1, pp = 1, dp = 1, vpp = 1, ep = 1;
    int64_t micro_batch = 1;
    int etp = 1;  // expert tensor parallel (MoE models; 1 for dense ones)
    MoeDispatcher dispatcher = MoeDispatcher::alltoall;
    CpCommType cp_comm_type = CpCommType::p2p;  // cp > 1: the variant (search/cp_comm_choice.h)
    // moe_a2a_overlap: a Megatron-Core MoE layout with ep > 1 runs both ways
    // (search/enumerate.cpp), each its own layout.
    bool a2a_overlap = false;
    // The pipeline schedule where the search tries one beside the 1F1B
    // family: a layout of vpp 2 runs torchtitan's DualPipeV too
    // (search/enumerate.cpp schedule_twin), its own layout. one_f_one_b: the
    // job's own schedule (given or the 1F1B family), left as it is.
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    // The first and the last pipeline rank's layers where the search tries a
    // stage layout beside the even split (search/enumerate.cpp
    // stage_variants: the embedding's or the loss's rank one or two layers a
    // chunk shorter); -1: not given (the job's split). The job's
    // parallel.first_stage_layers / last_stage_layers.
    int first_stage_layers = -1, last_stage_layers = -1;
    bool stage_variant() const { return first_stage_layers >= 0 || last_stage_layers >= 0; }
};

// Plans within this share of the best's step time are not told apart by the
// model (its step time is within 5.7 % of published runs, leave one source
// out: `lostflops validate`), so a simpler one among them is worth a line of
// the listing (report/runner_up.h); the search prices the best plan of every
// such shape exactly (SearchResult::other_shapes).
inline constexpr double kSimplerWithin = 0.01;
// ... and the most of those shapes a listing weighs (their ranks exact, as
// the first SearchOptions::shape_ranks').
inline constexpr size_t kSimplerShapesMax = 64;

struct SearchResult {
    std::vector<RankedPlan> ranked;  // every kept plan; the first `sorted` in rank order
    size_t sorted = 0;
    // With keep_best: the best plan a worker dropped (every plan ranked before
    // it is in `ranked`); empty when every evaluated plan was kept.
    std::optional<RankedPlan> first_dropped;
    // Best plan of each shape (tp, cp, pp, ep) other than the winner's, best first.
    std::vector<RankedPlan> other_shapes;
    // With keep_best, when `ranked` does not hold every plan before them:
    // the ranks (1-based) of the first shape_ranks other shapes (and of
    // those within kSimplerWithin of the best, at most kSimplerShapesMax),
    // counted by a second search; empty otherwise (count them in `ranked`).
    std::vector<size_t> other_shape_ranks;
    std::vector<int64_t> counted_before;  // SearchOptions::count_before
    SearchCounts counts;
    bool cancelled = false;
    double wall_s = 0;
    // What plan_score needs to decode `order`.
    std::vector<SearchLayout> layouts;
    // With SearchOptions::record_spans: per layout, its first and last plan.
    std::vector<LayoutSpan> spans;
};

// Preconditions: job's model, cluster and training passed load_job's checks
// (job.plan supplies only the settings no knob covers: grad_fp32 and the
// ZeRO-3 engine's zero_* keys). Throws InputError when a fixed value is
// outside what any plan could take.
SearchResult search_plans(const Job& job, const Calibration& cal, const SearchOptions& options);

// Every evaluated plan in rank order without holding them all: emit(r, n)
// gets the next n plans, r.ranked[0, n) sorted. The first chunk is what
// `first` (a search under `options`, sorted, with keep_best and
// record_spans) holds exactly: its plans ranked before first_dropped; then
// the search runs again for each further chunk, keeping the best `chunk`
// plans per worker ranked after the last one emitted and evaluating only the
// layouts whose span reaches into that window. Memory: about 2 x chunk plans
// per worker; time: up to one search per chunk. Stops early when a search is
// cancelled.
void for_each_ranked(const Job& job, const Calibration& cal, const SearchOptions& options, const SearchResult& first,
                     size_t chunk, const std::function<void(const SearchResult&, size_t)>& emit);
// How many of r.ranked (sorted) are the first plans of the whole ranking:
// those ranked before first_dropped, or all without one.
size_t exact_prefix(const SearchResult& r, RankBy by);

// The full figures of a kept plan (decoded from its order; tokens/s and MFU
// as estimate() computes them from the step time).
PlanScore plan_score(const Job& job, const SearchResult& result, const RankedPlan& plan);

// `job` with the plan and micro-batch of `score`.
Job job_with_plan(const Job& job, const PlanScore& score);

// The ranking's total order under `by` (true when a ranks above b).
bool ranks_before(const RankedPlan& a, const RankedPlan& b, RankBy by);

}  // namespace lostflops

namespace lostflops {

// The settings a search job fixes: each key present under its `parallel:`.
PlanFix plan_fix_from(const SearchJob& job);
// The fitting plan that changes the fewest settings of job's plan (tp, cp,
// pp, dp, vpp, ep, micro-batch, zero, recompute, recompute_layers, sequence
// parallelism, tp_comm_overlap, overlap_grad_reduce), ties to the faster,
// then to the plan's place in the enumeration: the plan a scan of every
// evaluated plan of the search picks. Visits the layouts nearest the job's
// first and stops once no unvisited plan can be nearer
// (src/search/nearest_plan.cpp).
struct NearestPlan {
    PlanScore plan;
    int changes = 0;
    std::vector<std::string> set;  // --set overrides that make it ("parallel.zero=3")
};
struct NearestSearch {
    std::optional<NearestPlan> plan;  // none: no plan fits (when complete)
    // False: stopped before it could decide, the plans it had still to
    // evaluate being more than max_plans; `plan` is then empty.
    bool complete = true;
    int64_t plans = 0;    // with max_plans: plans of the layouts visited (what the bound counts)
    SearchCounts counts;  // of the plans evaluated
};
// max_plans > 0: stop rather than evaluate more plans than that (counted
// layout by layout before evaluating them). threads: 0 every core.
NearestSearch nearest_fitting_plan(const Job& job, const Calibration& cal, int64_t max_plans = 0, int threads = 0);

// Every setting of the job's plan and micro-batch (to place that exact plan).
PlanFix plan_fix_all(const Job& job);
// Adds the settings of "key=value,key=value" (--fix, --compare) to `fix`;
// keys: tp cp pp dp vpp ep zero micro_batch_size recompute recompute_layers
// sequence_parallel tp_comm_overlap overlap_grad_reduce. Throws InputError
// (file `source`, the key, what was expected), also for a setting given
// twice with two values; `given` (key -> value) carries the settings of
// earlier texts (each --fix of one command line), null: this text alone.
void add_plan_fix(PlanFix& fix, const std::string& text, const std::string& source,
                  std::map<std::string, std::string>* given = nullptr);
// Whether `score` agrees with every setting of `fix`.
bool plan_matches(const PlanFix& fix, const PlanScore& score);
// Throws InputError when a fixed pipeline schedule or ZeRO stage breaks a rule
// of fix.launch's framework for every plan (search_plans calls it).
void check_fix_launchable(const Job& job, const PlanFix& fix);
// The same settings, each with the rule it breaks for every plan: key
// ("parallel.pipeline_schedule", "parallel.zero", "parallel.moe_a2a_overlap")
// and the rule's text; empty when fix.launch can run them.
struct UnlaunchableFix {
    std::string key, rule;
};
std::vector<UnlaunchableFix> unlaunchable_fixes(const Job& job, const PlanFix& fix);
// "tp 8, cp 1, pp 16 (vpp 1), dp 128, mbs 1, zero 1, recompute selective, sp, tp-overlap, dp-overlap"
std::string plan_words(const PlanScore& score);

}  // namespace lostflops
