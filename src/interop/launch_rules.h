// The exporters' guard: a plan the target framework cannot launch is not
// written (lostflops/framework_rules.h).
#pragma once

#include "lostflops/framework_rules.h"
#include "lostflops/spec.h"

namespace lostflops::interop {

// Throws InputError(job.source, rule key, "cannot launch in STACK: RULE: ...
// (SOURCE)") for the first rule of `stack` the job's plan breaks.
void check_launch_rules(const Job& job, LaunchStack stack);

}  // namespace lostflops::interop
