// Renderings of a search (`lostflops search`): table, JSON, CSV, and the
// sweep over cluster sizes. The library never prints: the table is returned,
// and the JSON / CSV of a whole ranking (millions of plans) are streamed
// through `write` in pieces.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: a .cpp that builds or reads JSON includes json.hpp

#include "lostflops/run_cost.h"
#include "lostflops/search.h"

namespace lostflops {

struct SearchView {
    RankBy by = RankBy::throughput;
    size_t top = 5;            // plans listed (table, JSON "top")
    size_t limit = 0;          // plans in JSON/CSV "plans" (of those the result holds); 0: every one it sorted
    size_t other_shapes = 5;   // runner-ups of other shapes listed
    double gpu_hour_price = 0; // money per GPU-hour for --by cost; 0: GPU-hours only
    // The whole run of the first plans (rescore_by_run), in rank order; empty: not re-scored.
    std::vector<RunCost> runs;
    // --set arguments before each plan's own in JSON "set" (search
    // --rank-plan: "parallel=null", the job's parallel section freed as the
    // search freed it, as the printed commands do).
    std::vector<std::string> set_first;
};

// Re-orders the first k sorted plans of `r` by the expected wall time of the
// whole run of job.training.train_tokens (run_cost.h: failures, checkpoints,
// restarts, data stalls), each plan re-estimated; returns their runs in the
// new order. For `search --by time-to-train | cost` (src/report/search_run.cpp).
std::vector<RunCost> rescore_by_run(const Job& job, const Calibration& cal, SearchResult& r, size_t k);

// The `--set` overrides that give `job` the plan of `s` (every setting the
// search chooses: tp, cp, pp, vpp, ep, etp and dispatcher for MoE models,
// zero, recompute and its depth, sequence parallelism, both overlaps, the
// micro-batch), so `estimate JOB --set ...` gives the plan's figures:
// {"parallel.tp=8", "parallel.cp=1", ...}.
std::vector<std::string> plan_set_arguments(const Job& job, const PlanScore& s);

// The wall (breakdown field other than compute) that costs the plan most.
struct Wall {
    std::string name;      // in text (lostflops/walls.h WallInfo::name): "pp_bubble", "kernel_overhead", ...
    std::string json_key;  // in search's JSON (WallInfo::search_key, schema v1): "pp_bubble", "overhead", ...
    double seconds = 0;
};
Wall costliest_wall(const Breakdown& b);

// The plans a JSON / CSV ranking lists, in rank order: calls sink(result, n)
// for each next chunk, result.ranked[0, n) (for_each_ranked streams a whole
// ranking this way). Empty: the result's own first v.limit plans.
using PlanSink = std::function<void(const SearchResult&, size_t)>;
using PlanChunks = std::function<void(const PlanSink&)>;

// How a listing of the first `top` plans of a ranking (0: every plan,
// streamed) and the ranks of `other_shapes` other shapes needs the search to
// keep its plans: sort_top, keep_best (at least kKeepBest, so the default
// listings cost little however many plans there are, and the search skips
// the layouts whose floor ranks after the kept plans: search/step_floor.h;
// an other shape ranked after them is counted by a second, floored search)
// and shape_ranks. 4,096: the DeepSeek-V3 example's listed shapes rank
// within the first 125 plans; 65,536 evaluated 2.0x the layouts (issue 37).
inline constexpr size_t kKeepBest = size_t{1} << 12;
void keep_for_listing(SearchOptions& o, size_t top, size_t other_shapes);
// Plans a worker keeps per chunk when a whole ranking is streamed
// (for_each_ranked): about 2 x 24 bytes each.
inline constexpr size_t kStreamChunk = size_t{1} << 18;
// `first` searched under keep_for_listing(o, 0, ...): every plan, chunk by chunk.
PlanChunks every_plan(const Job& job, const Calibration& cal, const SearchOptions& o, const SearchResult& first);

// `cal` re-estimates the listed plans for their costliest wall.
std::string search_table(const Job& job, const Calibration& cal, const SearchResult& r, const SearchView& v);
void search_json(const Job& job, const Calibration& cal, const SearchResult& r, const SearchView& v,
                 const std::function<void(std::string_view)>& write, const PlanChunks& plans = {});
void search_csv(const Job& job, const SearchResult& r, const SearchView& v,
                const std::function<void(std::string_view)>& write, const PlanChunks& plans = {});

// Where a given plan ranks (--compare): the best evaluated plan that agrees
// with `fix`, its rank, its gap to the best and the walls that differ most.
struct Comparison {
    bool found = false;
    size_t rank = 0;                  // 1-based
    PlanScore best, compared;
    Estimate best_estimate, compared_estimate;
    std::string not_found_reason;     // when !found: why no evaluated plan agrees
};
Comparison compare_plan(const Job& job, const Calibration& cal, const SearchResult& r, const PlanFix& fix,
                        RankBy by);
std::string comparison_table(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);

// One cluster size of a sweep (--gpus) or the fewest GPUs (--min-gpus).
struct SweepPoint {
    int num_gpus = 0;
    std::optional<PlanScore> best;  // none fits
    SearchCounts counts;
};
std::string sweep_table(const std::vector<SweepPoint>& points);
nlohmann::json sweep_json(const std::vector<SweepPoint>& points);

}  // namespace lostflops
