// The levers' candidate changes (src/explain/levers.cpp), for the other
// parts of explain that re-estimate them (src/explain/expert_levers.cpp).
// Internal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lostflops/explain.h"
#include "lostflops/spec.h"

namespace lostflops {

// A single change: in words, and the --set overrides that make it.
struct LeverCandidate {
    std::string change;
    std::vector<std::string> set;
};

// Every candidate change of `job` (docs/explain-and-report.md lists them),
// before any is loaded or estimated.
std::vector<LeverCandidate> lever_candidates(const Job& job);

// The job a candidate change makes of `job` (loaded from `src` with its
// --set), or none when that is not a valid job or its framework cannot
// launch a plan `job` itself could (framework_rules.h).
std::optional<Job> candidate_job(const JobSource& src, const LeverCandidate& c, const Job& job);

// A lever's --set arguments where the plan is the search's (JobSource::plan):
// the plan's, less the keys the change sets again, then the change's.
std::vector<std::string> lever_set_with_plan(const std::vector<std::string>& plan,
                                             const std::vector<std::string>& change);

}  // namespace lostflops
