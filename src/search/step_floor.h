// A lower bound of the step time of every plan of a layout: the search's
// floor (issue 37: the DeepSeek-V3 search ran 24.5 s, 2,045,628 layouts, of
// which 1,917,901 have a floor above twice the best plan's step). The search
// evaluates layouts in the order of their floors and skips those whose floor
// ranks after every plan a listing keeps (search.cpp). Internal to search.
//
// The floor of a layout under the 1F1B family (1F1B, interleaved,
// zero-bubble) is
//   m * (sum over the model's layers of the layer's forward + backward GPU
//        time, plus the embedding, the output layer and the MTP modules) / pp
// with m micro-batches a step, taken at no recomputation (recomputation only
// adds work), for the fastest sequence-parallel / TP-overlap choice the
// search would try, and under moe_a2a_overlap at both ends of the share of
// passes that pair (PlanContext::moe_overlap_paired: none and all), the
// smaller. It holds because the busiest pipeline rank runs at least the
// average rank's work, each pass takes at least its layers' GPU time (the
// host can only add to it: PassTime::bind_host), and the step is the
// busiest rank's passes plus bubble, data-parallel traffic and the
// optimizer, none below zero. The GPU times of a layer do not depend on the
// ZeRO stage (pass_setup_other_zero copies them), on vpp (but for the
// paired share) or on overlap_grad_reduce, so a floor stands for every vpp
// of a layout's other settings. DualPipe(V) overlaps a forward with a
// backward and hides at most the expert all-to-all of each pass by it
// (estimate/phase_passes.cpp dual_saved_s): its floor is the same sum
// without the layers' ep_comm_s; each of its ranks still runs its share of
// every micro-batch's layers (two stages or chunks, the average rank's
// m x the model / pp) one pass at a time.
#pragma once

#include <vector>

#include "lostflops/search.h"

namespace lostflops::search {

// The floor of each layout (seconds; 0 where there is none), in the layouts'
// order. `threads` workers; the result does not depend on it.
std::vector<double> step_floors(const Job& job, const Calibration& cal, const PlanFix& fix,
                                const std::vector<SearchLayout>& layouts, unsigned threads);

// The floor of one layout (the rule above), for tests.
double step_floor_s(const Job& job, const Calibration& cal, const PlanFix& fix, const SearchLayout& layout);

}  // namespace lostflops::search
