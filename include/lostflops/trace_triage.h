// Triage of measured traces: what costs the most and what to try, ranked by
// cost. Each item's cost is a share of the GPU time (the ranks' kernel spans
// summed) or, for ranks and nodes that hold the others back, of the median
// step; the suggestions are the usual remedies of each cause (a short list,
// not a diagnosis). With --job, estimate's levers for that job are added as
// they are (lostflops/explain.h mfu_levers).
//
// Causes: GPU idle by its cause (idle by stream: host wait, kernel wait,
// other); communication not hidden under compute; launch-bound kernels
// (shorter on the GPU than their launch on the CPU: the GPU time they cost is
// at most the host wait, and at most their launches' CPU time); the share of
// compute in elementwise, norm and other non-matmul kernels (memory-bound work
// that fusion removes); memory copies not hidden; ranks and nodes that hold
// the others back (trace_cluster.h); steps that vary.
#pragma once

#include <string>
#include <vector>

#include "lostflops/trace_cluster.h"
#include "lostflops/trace_compare.h"

namespace lostflops::trace {

struct TriageItem {
    std::string key;        // "idle", "exposed_comm", "launch_bound", "memory_bound", "copies", "slow_rank", ...
    std::string what;       // for people
    double cost_pct = 0;    // of GPU time, or of the median step (slow ranks, nodes, step spread)
    std::string evidence;
    std::string to_try;
};

// estimate's lever for the job given with --job (explain's Lever, in short).
struct LeverHint {
    std::string change;
    double mfu_after = 0;
};

// Largest cost first; items under kTriageMinPct left out.
inline constexpr double kTriageMinPct = 1.0;
std::vector<TriageItem> triage(const ClusterReport& c, const JobComparison* cmp, const std::vector<LeverHint>& levers);

}  // namespace lostflops::trace
