// Cross-field checks of a parsed Job (divisibility of the plan, precision
// support, ranges that depend on several keys). Throws InputError naming the
// file and the key that has to change.
#pragma once

#include "lostflops/spec.h"

namespace lostflops {

// without_plan: the model, cluster and training checks only (the search's
// job, whose parallel section may be partial).
enum class JobChecks { all, without_plan };
void validate_job(const Job& job, JobChecks checks = JobChecks::all);

}  // namespace lostflops
