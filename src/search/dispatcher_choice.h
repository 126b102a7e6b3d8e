// The search's choice of MoE token dispatcher for a layout (docs/search.md,
// "Expert parallelism"): the dispatcher changes only the expert layers'
// dispatch and combine time, so instead of evaluating every plan three
// times the search takes, per layout, the one whose dispatch and combine
// (forward and backward) are fastest by cost/expert_dispatch.h for the tokens
// a rank holds with sequence parallelism when tp > 1 (the knob the search
// turns on for large models; without it every dispatcher moves tp times
// more and the order rarely changes). `--fix moe_dispatcher=X` or the job's
// own key keeps one. Internal to search.
#pragma once

#include <optional>

#include "lostflops/search.h"

namespace lostflops::search {

// `launch`: only the dispatchers that stack runs (lostflops/framework_rules.h).
MoeDispatcher fastest_dispatcher(const Job& job, const Calibration& cal, const SearchLayout& layout,
                                 std::optional<LaunchStack> launch = std::nullopt);

}  // namespace lostflops::search
