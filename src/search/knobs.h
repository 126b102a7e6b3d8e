// The knobs of a plan beyond its layout, as the search enumerates them.
// Internal to search.
//
// For each layout:
//   zero                0..3 when weights have replicas (dp*cp > 1), else 0;
//                       with PlanFix::launch, those the framework launches
//                       on the layout (lostflops/framework_rules.h);
//   recompute           none, selective, full, and full on the first k layers
//                       of each virtual stage (Megatron-LM --recompute-method
//                       block --recompute-num-layers k) for kPartialDepths
//                       consecutive k from the fewest that fit in memory
//                       (for each zero and sequence-parallel setting; all
//                       k = 1 .. (layers per virtual stage) - 1 when there
//                       are no more; none where the framework has no
//                       partial recompute, PlanFix::launch): a plan's memory falls and its time
//                       grows with k, so the deeper ones rank after these
//                       and the search's first kPartialDepths plans are those
//                       of every k (search/evaluate_layout.cpp). Index 0
//                       none, 1 selective, 2 full, 2 + k partial; no
//                       full (of any depth) under moe_a2a_overlap
//                       (Megatron-Core asserts it);
//   sequence_parallel   off, and on when tp > 1 and tp divides seq/cp;
//   tp_comm_overlap     off, and on with sequence parallelism under
//                       Megatron-Core (Transformer Engine userbuffers need
//                       SP: Megatron-LM arguments.py asserts
//                       "--tp-comm-overlap ... only when sequence parallelism
//                       is enabled");
//   overlap_grad_reduce off, and on where the stack can overlap (legacy
//                       Megatron-LM's local DDP cannot, outside ZeRO-3; see
//                       job/job_sections.cpp); without replicas the
//                       framework's default alone.
// A fixed setting (PlanFix) replaces the list by its one value.
#pragma once

#include <cstdint>

#include "lostflops/search.h"

namespace lostflops::search {

struct SpChoice {
    bool sp = false, tp_overlap = false;
};

struct KnobSet {
    int zero[4] = {0, 0, 0, 0};
    int zeros = 0;
    int rc_first = 0, rc_end = 0;  // recompute indices [rc_first, rc_end): the fixed one, or none, selective, full
    // Partial depths k (index 2 + k) per (zero, sequence parallelism): a
    // window of `depths` consecutive k in 1 .. max_depth; 0 when recompute is fixed.
    int depths = 0, max_depth = 0;
    SpChoice sp[3];
    int sps = 0;
    // overlap_grad_reduce values for zero < 3 and zero == 3
    bool ogr[2][2] = {{false, false}, {false, false}};
    int ogrs[2] = {0, 0};
    bool fixed_recompute_too_deep = false;  // fixed recompute_layers > layers of a virtual stage
    bool skip_selective = false;            // the framework has no selective recompute (hf)
    int64_t count() const;
};

// Partial recompute depths evaluated per (layout, zero, sequence
// parallelism): 5, the plans `search` lists by default (cli/cmd_search.cpp --top).
inline constexpr int kPartialDepths = 5;

// `job` carries the layout (with_layout); fix the user's fixed knobs.
KnobSet knob_set(const Job& job, const PlanFix& fix);

// Recompute mode and recompute_layers of index `rc`.
void apply_recompute(ParallelPlan& p, int rc);
int recompute_index(Recompute mode, int layers);

// The plan's knob code (low half of RankedPlan::order): ascending in zero,
// recompute index, sequence parallelism, tp_comm_overlap, overlap_grad_reduce.
inline uint32_t knob_code(int zero, int rc, bool sp, bool tp_overlap, bool ogr) {
    return (static_cast<uint32_t>(zero) << 28) | (static_cast<uint32_t>(rc) << 3) | (sp ? 4u : 0u) |
           (tp_overlap ? 2u : 0u) | (ogr ? 1u : 0u);
}
void apply_knob_code(ParallelPlan& p, uint32_t code);
// Set in RankedPlan::order beside the knob code when the plan's step is the
// screen's lower bound, not estimate()'s (LayoutEvaluator::run); it sorts such
// a plan after an exact one of the same step.
inline constexpr uint64_t kBoundBit = uint64_t{1} << 31;
inline bool is_bound(const RankedPlan& p) { return (p.order & kBoundBit) != 0; }

}  // namespace lostflops::search
