// What the search's best plan buys over the runner-up, in one line: the
// throughput difference and the walls (estimate's breakdown) that differ most.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/search.h"

namespace lostflops {

// "best over runner-up: +3.1 % tokens/s per GPU; tp_comm -0.412 s, pp_bubble
// +0.130 s; peak 61.5 vs 58.2 GiB\n": the three walls whose seconds differ
// most (best minus runner-up; negative: the best spends less), those of at
// least 0.1 % of the best's step. Both plans are estimated again.
std::string runner_up_line(const Job& job, const Calibration& cal, const PlanScore& best, const PlanScore& runner_up);

// kSimplerWithin (lostflops/search.h): a simpler plan within that share of
// the best's step is worth a line.

// A ranked plan and its place in the ranking (1-based).
struct RankedScore {
    std::size_t rank = 0;
    PlanScore score;
};

// "simpler, within 1 % of the best: #7 tp 2 cp 1 pp 1 ep 1 vpp 1, -0.6 %
// tokens/s per GPU; peak 50.1 vs 61.5 GiB\n", or "" when no candidate within
// kSimplerWithin of the best's step time is simpler. Ranked `by` memory, the
// reach is kSimplerWithin of the best's peak ("within 1 % of the best's
// peak"): a faster plan that holds far more is not one the ranking put near
// the best. Simpler: fewer pipeline chunks (pp x vpp), then smaller cp, tp
// and ep, compared in that order; of the simplest, the fastest.
std::string simpler_line(const PlanScore& best, const std::vector<RankedScore>& candidates,
                         RankBy by = RankBy::throughput);

}  // namespace lostflops
