// The knobs of a plan beyond its layout, as the search enumerates them.
// Internal to search.
//
// For each layout:
//   zero                0..3 when weights have replicas (dp*cp > 1), else 0;
//   recompute           none, selective, full, and full on the first k layers
//                       of each virtual stage for k = 1 .. (layers per
//                       virtual stage) - 1 (Megatron-LM --recompute-method
//                       block --recompute-num-layers k); index 0 none,
//                       1 selective, 2 full, 2 + k partial;
//   sequence_parallel   off, and on when tp > 1 and tp divides seq/cp;
//   tp_comm_overlap     off, and on with sequence parallelism under
//                       Megatron-Core (Transformer Engine userbuffers need
//                       SP: Megatron-LM arguments.py asserts
//                       "--tp-comm-overlap ... only when sequence parallelism
//                       is enabled");
//   overlap_grad_reduce off, and on where the stack can overlap (legacy
//                       Megatron-LM's local DDP cannot, outside ZeRO-3; see
//                       spec/job_sections.cpp); without replicas the
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
    int rc_first = 0, rc_end = 0;  // recompute indices [rc_first, rc_end)
    SpChoice sp[3];
    int sps = 0;
    // overlap_grad_reduce values for zero < 3 and zero == 3
    bool ogr[2][2] = {{false, false}, {false, false}};
    int ogrs[2] = {0, 0};
    bool fixed_recompute_too_deep = false;  // fixed recompute_layers > layers of a virtual stage
    int64_t count() const;
};

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

}  // namespace lostflops::search
