// `search --by time-to-train | cost` with the whole-run model (run_cost.h):
// the first K plans of the search's ranking (by throughput on the job's GPU
// count) re-estimated and re-ordered by the expected wall time of the whole
// run, failures, checkpoints and restarts included; cost on a fixed GPU count
// is GPU-hours x price, the same order. Done here, on the ranked list, so the
// search's own files stay as they are; plans beyond K keep their order.
#include <algorithm>
#include <numeric>

#include "lostflops/run_cost.h"
#include "lostflops/search_report.h"

namespace lostflops {

std::vector<RunCost> rescore_by_run(const Job& job, const Calibration& cal, SearchResult& r, size_t k) {
    const size_t n = std::min(k, r.sorted);
    std::vector<RunCost> runs;
    runs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const Job planned = job_with_plan(job, plan_score(job, r, r.ranked[i]));
        runs.push_back(run_cost(planned, estimate(planned, cal)));
    }
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), size_t{0});
    // Stable: equal wall times keep the search's order (its tie-breaks).
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return runs[a].wall_time_s < runs[b].wall_time_s; });
    std::vector<RankedPlan> plans(n);
    std::vector<RunCost> sorted_runs;
    sorted_runs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        plans[i] = r.ranked[idx[i]];
        sorted_runs.push_back(runs[idx[i]]);
    }
    std::copy(plans.begin(), plans.end(), r.ranked.begin());
    return sorted_runs;
}

}  // namespace lostflops
