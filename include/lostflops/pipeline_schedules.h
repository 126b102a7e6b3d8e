// The table of pipeline schedules (parallel.pipeline_schedule): one row per
// schedule with its passes, warm-up, in-flight micro-batches, stage mapping,
// closed-form bubble and requirements, each with its source. The job reader,
// the plan checks, the schedule's per-rank order (src/schedule), the closed
// form, the memory in flight (src/estimate/inflight.cpp), the search and
// explain read this table; nothing else names a schedule.
//
// Notation: p pipeline ranks, m micro-batches per step, F a forward pass of one
// micro-batch through one chunk, B its input-gradient pass, W its
// weight-gradient pass (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR
// 2024, sec. 2), B+W the full backward, F&B one micro-batch's forward
// overlapped with another's full backward (DeepSeek-AI, "DeepSeek-V3 Technical
// Report", 2024, sec. 3.2.1). Fused schedules run B+W as one pass.
#pragma once

#include <array>
#include <string_view>

#include "lostflops/spec.h"

namespace lostflops {

struct ScheduleInfo {
    PipelineSchedule id;
    const char* name;          // the value of parallel.pipeline_schedule
    bool splits_weight_grad;   // runs W apart from B
    bool overlaps_fwd_bwd;     // runs F&B passes
    int chunks;                // model chunks per rank; 0: parallel.vpp
    int vpp;                   // the vpp it needs; 0: any (1f1b needs 1, interleaved > 1: see checks)
    int min_microbatch_per_p;  // m >= this * p (0: none)
    bool even_pp;              // needs an even pp
    bool even_microbatches;    // needs an even m
    const char* warmup;        // forwards before the first backward, rank r
    const char* inflight;      // micro-batches whose activations a rank holds at its peak
    const char* mapping;       // which model stages rank r holds
    const char* bubble;        // idle time per rank, uniform stages, closed form
    const char* source;
};

inline constexpr std::array<ScheduleInfo, 5> kSchedules{{
    {PipelineSchedule::one_f_one_b, "1f1b", false, false, 0, 1, 0, false, false,
     "min(p - r - 1, m)", "min(p - r, m) (rank 0 holds p)", "stage r",
     "(p - 1)(F + B + W)",
     "Narayanan et al. 2021, sec. 2.2.1; Megatron-LM schedules.py "
     "forward_backward_pipelining_without_interleaving"},
    {PipelineSchedule::interleaved, "interleaved", false, false, 0, 0, 1, false, false,
     "min(2(p - r - 1) + (v - 1)p, m v) chunk passes", "warm-up + 1 chunk passes",
     "virtual stages c p + r, c < v", "(p - 1)(F + B + W) / v",
     "Narayanan et al. 2021, sec. 2.2.2 (m divisible by p); Megatron-LM schedules.py "
     "forward_backward_pipelining_with_interleaving"},
    {PipelineSchedule::zero_bubble, "zero-bubble", true, false, 1, 1, 0, false, false,
     "min(p - r - 1, m), then W of micro-batch i - r after B of i",
     "min(p, m) on every rank (W delayed by r on rank r)", "stage r",
     "(p - 1) max(F + B - W, F, B); the paper's (p - 1)(F + B - W) when W <= F, B",
     "ZB-H1: Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, sec. 2.1 and fig. 3 "
     "(bubble (p-1)(T_F + T_B - T_W), about a third of 1F1B's when T_F = T_B = T_W); "
     "deepseek-ai/DualPipe README table (ZB1P: (PP-1)(F + B_full - 2W), memory PP)"},
    {PipelineSchedule::dualpipe, "dualpipe", true, true, 2, 1, 2, true, true,
     "2(p/2 - h - 1) + h + 1 forwards of the first-half stage, h = min(r, p-1-r)",
     "p chunk passes; p + 1 on the two middle ranks (each pass one stage)",
     "stages r (micro-batches entering at rank 0) and p-1-r (entering at rank p-1): "
     "parameters twice",
     "(p/2 - 1)(F&B + B + W - 3W)",
     "DeepSeek-V3 Technical Report, sec. 3.2.1 and table 2 (bubble (PP/2-1)(F&B + B - 3W), "
     "parameters 2x, activations PP+1); deepseek-ai/DualPipe dualpipe.py (the 8 steps "
     "of each rank; PP even, micro-batches even and >= 2 PP)"},
    {PipelineSchedule::dualpipev, "dualpipev", true, true, 2, 2, 2, false, false,
     "2(p - r - 1) + r + 1 forwards of chunk 0",
     "2p chunk passes; 2p + 1 on the last rank (each pass half a rank's layers)",
     "V shape: virtual stages r and 2p-1-r (rank 0 holds the embedding and the output layer)",
     "(p - 1)(F&B + B + W - 3W), F, B, W of one chunk",
     "deepseek-ai/DualPipe README (DualPipeV, Sea AI Lab's cut-in-half; bubble "
     "(PP/2-1)(F&B + B - 3W) with PP = 2p stages, activations PP+1) and dualpipev.py "
     "(micro-batches >= 2 p)"},
}};

inline const ScheduleInfo& schedule_info(PipelineSchedule s) { return kSchedules[static_cast<size_t>(s)]; }

// The schedule a plan runs: the 1F1B family resolves by vpp.
inline PipelineSchedule effective_schedule(const ParallelPlan& p) {
    if (p.schedule == PipelineSchedule::one_f_one_b || p.schedule == PipelineSchedule::interleaved)
        return p.vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
    return p.schedule;
}

// Model chunks each rank runs (dualpipe: two stages on a pp x 1 layout).
inline int rank_chunks(const ParallelPlan& p) {
    const int c = schedule_info(effective_schedule(p)).chunks;
    return c == 0 ? p.vpp : c;
}

// Where chunk `chunk` of rank `rank` sits in the layout of pp x vpp virtual
// stages (virtual stage = layout_chunk * pp + layout_rank).
struct LayoutPosition {
    int rank = 0, chunk = 0;
};
inline LayoutPosition layout_position(const ParallelPlan& p, int rank, int chunk) {
    switch (effective_schedule(p)) {
        case PipelineSchedule::dualpipe: return chunk == 0 ? LayoutPosition{rank, 0} : LayoutPosition{p.pp - 1 - rank, 0};
        case PipelineSchedule::dualpipev: return chunk == 0 ? LayoutPosition{rank, 0} : LayoutPosition{p.pp - 1 - rank, 1};
        default: return {rank, chunk};
    }
}

// The standard layout (virtual stage c p + r on rank r): the closed forms of
// the 1F1B family apply.
inline bool standard_mapping(const ParallelPlan& p) {
    const PipelineSchedule s = effective_schedule(p);
    return s != PipelineSchedule::dualpipe && s != PipelineSchedule::dualpipev;
}

}  // namespace lostflops
