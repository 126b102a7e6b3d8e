// Cross-field checks of a parsed Job (divisibility of the plan, precision
// support, ranges that depend on several keys). Throws InputError naming the
// file and the key that has to change.
#pragma once

#include "lostflops/spec.h"

namespace lostflops {

void validate_job(const Job& job);

}  // namespace lostflops
