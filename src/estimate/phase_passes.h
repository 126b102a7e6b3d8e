// The passes of a pipeline phase (estimate/pipeline_phase.cpp): every
// (rank, chunk) pass of one micro-batch by the pass rule, placed for the
// schedule, and what the closed form needs of them. Two ways: every pass
// (several kinds, custom layouts, MTP, schedules beyond the 1F1B family;
// StagePassMemo times the distinct ones) or the uniform split's fast path,
// O(pp). Internal to estimate.
#pragma once

#include <limits>
#include <vector>

#include "estimate/estimate_parts.h"
#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops::phase {

// Reused between calls on this thread: no allocation once warm (a search
// evaluates millions of plans).
struct PhaseBuffers {
    PipelineInput in;
    std::vector<double> rank_s, chunk0_s, saved_s;  // [stages]
    StagePassMemo memo;
};

inline PhaseBuffers& phase_buffers() {
    static thread_local PhaseBuffers b;
    return b;
}

// How the phase is timed: the schedule, its family, and whether passes go
// through the simulation.
struct PhaseMode {
    PipelineSchedule sched{};  // {}: the table's first row, 1f1b
    bool family = true;    // Megatron-LM's 1F1B order (ScheduleInfo::order)
    bool dual = false;     // DualPipe's order: F&B passes
    bool simulate = false;
    // The search's screen (ScheduleModel::screen): interleaving with uneven
    // chunks gets the makespan's lower bound instead of the simulation.
    bool screen = false;
    // Interleaving with chunks of different layer counts on a rank (the
    // default split's base and base + 1, or a layout's), or placed passes
    // whose chunks take different times (pipeline_phase.cpp
    // chunk_times_differ: mixed kinds at equal counts): the closed form is
    // not exact there (its bubble 4x too small on 126 layers over pp 8 x vpp
    // 9), so the estimate simulates it and the search's screen takes the
    // makespan's lower bound (simulating every such plan of the search made
    // the DeepSeek-V3 search run for minutes, docs/model.md).
    bool uneven = false;
    ScheduleModel model = ScheduleModel::closed_form;
    int chunks = 1;        // per rank (rank_chunks)
    // An F&B pair hides the all-to-all but its SMs slow the other pass
    // (PlanContext::moe_overlap_slowdown): a pair saves (1 - slowdown) of the
    // comm it hides, taken as hiding that share of the comm (exact while the
    // other pass's compute covers the comm).
    double hide_share = 1;
};

inline bool plausible(double x) { return x >= 0 && x <= std::numeric_limits<double>::max(); }

// Beyond the 1F1B family (zero-bubble, dualpipe, dualpipev): the means and
// savings the closed form needs (schedule/pipeline_detail.h PipelineSums).
struct ScheduleExtras {
    double fwd_mean_s = 0, wgrad_mean_s = 0;
    const double* saved_s = nullptr;
    double hidden_s = 0;  // the worst rank's F&B savings over the step: hidden expert all-to-all
};

// What the passes give the schedule: the slowest rank's per-micro-batch
// pass (by cause), whether every pass time is finite and non-negative, and
// the extras beyond the 1F1B family.
struct PhasePasses {
    PassTime rank_pass_worst;
    double worst_total = -1;
    bool values_ok = true;
    ScheduleExtras extra;
    void offer_worst(const PassTime& rank_pass) {
        const double total = rank_pass.total_s();
        if (total > worst_total) {
            worst_total = total;
            rank_pass_worst = rank_pass;
        }
    }
};

// Several kinds, a custom layout, MTP modules or a schedule beyond the 1F1B
// family: every (rank, chunk) pass by the pass rule, at its place in the
// layout (layout_position), O(pp * chunks * kinds).
PhasePasses every_pass(const Job& job, const PassSetup& s, const PhaseMode& mode, PhaseBuffers& buf,
                       PipelinePhase& ph);
// A uniform model on the default split (1F1B family, no MTP), O(pp).
PhasePasses uniform_passes(const Job& job, const PassSetup& s, const PhaseMode& mode, PhaseBuffers& buf,
                           PipelinePhase& ph);

}  // namespace lostflops::phase
