// What the search's best plan buys over the runner-up, in one line: the
// throughput difference and the walls (estimate's breakdown) that differ most.
#pragma once

#include <string>

#include "lostflops/calibration.h"
#include "lostflops/search.h"

namespace lostflops {

// "best over runner-up: +3.1 % tokens/s per GPU; tp_comm -0.412 s, pp_bubble
// +0.130 s; peak 61.5 vs 58.2 GiB\n": the three walls whose seconds differ
// most (best minus runner-up; negative: the best spends less), those of at
// least 0.1 % of the best's step. Both plans are estimated again.
std::string runner_up_line(const Job& job, const Calibration& cal, const PlanScore& best, const PlanScore& runner_up);

}  // namespace lostflops
