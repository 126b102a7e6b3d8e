// The best plan against the runner-up (runner_up.h): both re-estimated, the
// difference of each wall of the breakdown, largest first.
#include "report/runner_up.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lostflops/estimate.h"
#include "lostflops/walls.h"

namespace lostflops {

std::string runner_up_line(const Job& job, const Calibration& cal, const PlanScore& best, const PlanScore& runner_up) {
    const Breakdown a = estimate(job_with_plan(job, best), cal).breakdown;
    const Breakdown b = estimate(job_with_plan(job, runner_up), cal).breakdown;
    std::vector<std::pair<const char*, double>> walls;
    for (const WallInfo& w : kWalls) walls.emplace_back(w.name, a.*w.seconds - b.*w.seconds);
    std::stable_sort(walls.begin(), walls.end(),
                     [](const auto& x, const auto& y) { return std::abs(x.second) > std::abs(y.second); });
    std::string out = fmt::format("best over the runner-up: {:+.1f} % tokens/s per GPU;",
                                  100 * (best.tokens_per_s_per_gpu / runner_up.tokens_per_s_per_gpu - 1));
    int shown = 0;
    for (const auto& [name, d] : walls) {
        if (shown == 3 || std::abs(d) < 1e-3 * best.step_time_s) break;
        out += fmt::format("{} {} {:+.3f} s", shown == 0 ? "" : ",", name, d);
        ++shown;
    }
    if (shown == 0) out += " the same walls";
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    out += fmt::format("; peak {:.1f} vs {:.1f} GiB\n", best.peak_bytes / kGiB, runner_up.peak_bytes / kGiB);
    return out;
}

namespace {

std::tuple<int, int, int, int> complexity(const ParallelPlan& p) { return {p.pp * p.vpp, p.cp, p.tp, p.ep}; }

}  // namespace

std::string simpler_line(const PlanScore& best, const std::vector<RankedScore>& candidates, RankBy by) {
    const bool memory = by == RankBy::memory;
    const RankedScore* pick = nullptr;
    for (const RankedScore& c : candidates) {
        if (memory ? c.score.peak_bytes > best.peak_bytes * (1 + kSimplerWithin)
                   : c.score.step_time_s > best.step_time_s * (1 + kSimplerWithin))
            continue;
        if (complexity(c.score.plan) >= complexity(best.plan)) continue;
        if (pick == nullptr || complexity(c.score.plan) < complexity(pick->score.plan) ||
            (complexity(c.score.plan) == complexity(pick->score.plan) &&
             c.score.step_time_s < pick->score.step_time_s))
            pick = &c;
    }
    if (pick == nullptr) return "";
    const ParallelPlan& p = pick->score.plan;
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    return fmt::format("simpler, within {:.0f} % of the best{}: #{} tp {} cp {} pp {} ep {} vpp {}, {:+.1f} % "
                       "tokens/s per GPU; peak {:.1f} vs {:.1f} GiB\n",
                       100 * kSimplerWithin, memory ? "'s peak" : "", pick->rank, p.tp, p.cp, p.pp, p.ep, p.vpp,
                       100 * (pick->score.tokens_per_s_per_gpu / best.tokens_per_s_per_gpu - 1),
                       pick->score.peak_bytes / kGiB, best.peak_bytes / kGiB);
}

}  // namespace lostflops
