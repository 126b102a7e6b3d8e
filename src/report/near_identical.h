// Near-identical plans of a search's listing: a listed plan one knob away
// from a better listed plan (one --set argument differs, plan_set_arguments;
// dp follows the GPUs) whose throughput lies within that plan's 80 % interval
// is grouped under the first such plan, by knob.
#pragma once

#include <string>
#include <vector>

#include "lostflops/search_report.h"

namespace lostflops {

// "  near-identical (one knob apart, within the better plan's 80 % interval):\n
//     ranks 2, 3: rank 1 with vpp 21, 15\n", "" when no plan folds. `listed`:
// the plans in rank order; `ratio`: the lowest throughput within a plan's
// interval over that plan's (Ties: the plans of one search share the
// interval's width), in (0, 1]. Precondition (plan_set_arguments' output):
// each plan's arguments give each key once, in one order for all plans, and
// no value holds a line break.
std::string near_identical(const Job& job, const std::vector<PlanScore>& listed, double ratio);

}  // namespace lostflops
