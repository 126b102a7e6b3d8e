// The data loader's stall: seconds a step waits for its sequences
// (Breakdown::data_loader_s). Internal (estimate/estimate.cpp
// finish_breakdown); the rule and its sources are the .cpp's.
#pragma once

#include "lostflops/spec.h"

namespace lostflops {

// The stall of a step that takes `step_s` seconds without it, under the
// job's training.data_loader_s_per_sequence and data_loader_workers
// (resolved: >= 0). 0 when the loader is not priced (0 s per sequence).
// Precondition: step_s >= 0, plan.dp >= 1.
double data_loader_stall_s(const Training& t, const ParallelPlan& p, double step_s);

}  // namespace lostflops
