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
#include <vector>

#include "lostflops/search.h"

namespace lostflops::search {

// `launch`: only the dispatchers that stack runs (lostflops/framework_rules.h).
MoeDispatcher fastest_dispatcher(const Job& job, const Calibration& cal, const SearchLayout& layout,
                                 std::optional<LaunchStack> launch = std::nullopt);

// The same for each layout in turn, in place. The choice does not depend on
// vpp (nor do the rules of lostflops/framework_rules.h on the dispatcher,
// which look at ep and the dispatcher): layouts alike but for it, which the
// enumeration keeps within one run of equal (tp, cp, pp, micro-batch), share one.
void choose_dispatchers(const Job& job, const Calibration& cal, std::vector<SearchLayout>& layouts,
                        std::optional<LaunchStack> launch = std::nullopt);

}  // namespace lostflops::search
