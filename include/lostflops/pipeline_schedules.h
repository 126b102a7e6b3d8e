// The table of pipeline schedules (parallel.pipeline_schedule): one row per
// schedule with its passes, warm-up, in-flight micro-batches, stage mapping,
// closed-form bubble and requirements, each with its source, and the traits
// the code branches on (its order family, interleaving, F&B overlap, W split,
// two directions, the frameworks that run it and their names for it, its
// words). The job reader, the plan checks, the schedule's per-rank order
// (src/schedule), the closed form, the memory in flight
// (src/estimate/inflight.cpp), the search, the reports and explain read this
// table; nothing outside src/schedule names a schedule
// (tests/schedule/schedule_table_test.cpp enumerates the rows).
//
// Notation: p pipeline ranks, m micro-batches per step, F a forward pass of one
// micro-batch through one chunk, B its input-gradient pass, W its
// weight-gradient pass (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR
// 2024, sec. 2), B+W the full backward, F&B one micro-batch's forward
// overlapped with another's full backward (DeepSeek-AI, "DeepSeek-V3 Technical
// Report", 2024, sec. 3.2.1). Fused schedules run B+W as one pass.
#pragma once

#include <array>
#include <initializer_list>
#include <string_view>

#include "lostflops/framework_rules.h"
#include "lostflops/spec.h"

namespace lostflops {

// The family of a schedule's order, which fixes its closed form
// (schedule/schedule_closed_form.cpp), its simulation and its in-flight rule
// (estimate/inflight.cpp): Megatron-LM's 1F1B (pipeline_order.cpp), ZB-H1's
// delayed W, DualPipe's eight steps (schedule_order.cpp), ZB-V's F, B, W over
// a V (zbv_order.cpp).
enum class ScheduleOrder { megatron_1f1b, zero_bubble_h1, dual_pipe, zero_bubble_v };

// Which model stages rank r holds: virtual stage c p + r for chunk c
// (standard), stages r and p-1-r of two pipelines (mirrored: dualpipe), or
// virtual stages r and 2p-1-r of one V (v_shape: dualpipev, zbv).
enum class StageMapping { standard, mirrored, v_shape };

constexpr unsigned launch_stacks(std::initializer_list<LaunchStack> stacks) {
    unsigned bits = 0;
    for (const LaunchStack s : stacks) bits |= 1u << static_cast<unsigned>(s);
    return bits;
}

struct ScheduleInfo {
    PipelineSchedule id;
    const char* name;          // the value of parallel.pipeline_schedule
    const char* words;         // its name in reports ("interleaved 1F1B")
    ScheduleOrder order;       // its order's family
    StageMapping stage_mapping;
    PipelineSchedule vpp_twin; // the 1F1B family resolves by vpp: the schedule it becomes (itself: none)
    bool interleaves;          // vpp virtual stages per rank (Megatron-LM's interleaving)
    bool two_directions;       // micro-batches enter at both ends, m/2 each
    bool splits_weight_grad;   // runs W apart from B
    bool overlaps_fwd_bwd;     // runs F&B passes
    int chunks;                // model chunks per rank; 0: parallel.vpp
    int vpp;                   // the vpp it needs; 0: any (1f1b needs 1, interleaved > 1: see checks)
    int min_microbatch_per_p;  // m >= this * p (0: none)
    bool even_pp;              // needs an even pp
    bool even_microbatches;    // needs an even m
    unsigned stacks;           // the frameworks that run it (bits of LaunchStack; lostflops/framework_rules.h)
    const char* torchtitan_name;  // torchtitan's pipeline_parallel_schedule; null where it does not run it
    int search_twin_vpp;       // the search tries it beside the 1F1B family on layouts of this vpp (0: never)
    const char* vpp_suffix;    // after the vpp in the search's table ("2V")
    const char* search_note;   // the search's note under a table that lists it (null: none)
    const char* warmup;        // forwards before the first backward, rank r
    const char* inflight;      // micro-batches whose activations a rank holds at its peak
    const char* mapping;       // which model stages rank r holds
    const char* bubble;        // idle time per rank, uniform stages, closed form
    const char* source;
};

// Framework sources: Megatron-LM megatron/core/pipeline_parallel/schedules.py
// get_forward_backward_func (1F1B and interleaved 1F1B); torchtitan
// torchtitan/distributed/pipeline_parallel.py _build_pipeline_schedule (1F1B,
// Interleaved1F1B, DualPipeV, ZBVZeroBubble); DeepSpeed deepspeed/runtime/pipe/schedule.py
// TrainSchedule (1F1B, one stage per rank).
inline constexpr unsigned kMegatronStacks = launch_stacks({LaunchStack::megatron_core, LaunchStack::megatron_lm});

inline constexpr std::array kSchedules{
    ScheduleInfo{PipelineSchedule::one_f_one_b, "1f1b", "1F1B", ScheduleOrder::megatron_1f1b, StageMapping::standard,
     PipelineSchedule::interleaved, false, false, false, false, 0, 1, 0, false, false,
     kMegatronStacks | launch_stacks({LaunchStack::torchtitan, LaunchStack::deepspeed}), "1F1B", 0, "", nullptr,
     "min(p - r - 1, m)", "min(p - r, m) (rank 0 holds p)", "stage r",
     "(p - 1)(F + B + W)",
     "Narayanan et al. 2021, sec. 2.2.1; Megatron-LM schedules.py "
     "forward_backward_pipelining_without_interleaving"},
    ScheduleInfo{PipelineSchedule::interleaved, "interleaved", "interleaved 1F1B", ScheduleOrder::megatron_1f1b,
     StageMapping::standard, PipelineSchedule::one_f_one_b, true, false, false, false, 0, 0, 1, false, false,
     kMegatronStacks | launch_stacks({LaunchStack::torchtitan}), "Interleaved1F1B", 0, "", nullptr,
     "min(2(p - r - 1) + (v - 1)p, m v) chunk passes", "warm-up + 1 chunk passes",
     "virtual stages c p + r, c < v", "(p - 1)(F + B + W) / v",
     "Narayanan et al. 2021, sec. 2.2.2 (m divisible by p); Megatron-LM schedules.py "
     "forward_backward_pipelining_with_interleaving"},
    ScheduleInfo{PipelineSchedule::zero_bubble, "zero-bubble", "zero-bubble (ZB-H1)", ScheduleOrder::zero_bubble_h1,
     StageMapping::standard, PipelineSchedule::zero_bubble, false, false, true, false, 1, 1, 0, false, false,
     0, nullptr, 0, "", nullptr,
     "min(p - r - 1, m), then W of micro-batch i - r after B of i",
     "min(p, m) on every rank (W delayed by r on rank r)", "stage r",
     "(p - 1) max(F + B - W, F, B); the paper's (p - 1)(F + B - W) when W <= F, B",
     "ZB-H1: Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, sec. 2.1 and fig. 3 "
     "(bubble (p-1)(T_F + T_B - T_W), about a third of 1F1B's when T_F = T_B = T_W); "
     "deepseek-ai/DualPipe README table (ZB1P: (PP-1)(F + B_full - 2W), memory PP)"},
    ScheduleInfo{PipelineSchedule::dualpipe, "dualpipe", "DualPipe", ScheduleOrder::dual_pipe, StageMapping::mirrored,
     PipelineSchedule::dualpipe, false, true, true, true, 2, 1, 2, true, true, 0, nullptr, 0, "", nullptr,
     "2(p/2 - h - 1) + h + 1 forwards of the first-half stage, h = min(r, p-1-r)",
     "p chunk passes; p + 1 on the two middle ranks (each pass one stage)",
     "stages r (micro-batches entering at rank 0) and p-1-r (entering at rank p-1): "
     "parameters twice",
     "(p/2 - 1)(F&B + B + W - 3W)",
     "DeepSeek-V3 Technical Report, sec. 3.2.1 and table 2 (bubble (PP/2-1)(F&B + B - 3W), "
     "parameters 2x, activations PP+1); deepseek-ai/DualPipe dualpipe.py (the 8 steps "
     "of each rank; PP even, micro-batches even and >= 2 PP)"},
    ScheduleInfo{PipelineSchedule::dualpipev, "dualpipev", "DualPipeV", ScheduleOrder::dual_pipe, StageMapping::v_shape,
     PipelineSchedule::dualpipev, false, false, true, true, 2, 2, 2, false, false,
     launch_stacks({LaunchStack::torchtitan}), "DualPipeV", 2, "V",
     "torchtitan's DualPipeV, two chunks a rank in a V (parallel.pipeline_schedule: dualpipev)",
     "2(p - r - 1) + r + 1 forwards of chunk 0",
     "2p chunk passes; 2p + 1 on the last rank (each pass half a rank's layers)",
     "V shape: virtual stages r and 2p-1-r (rank 0 holds the embedding and the output layer)",
     "(p - 1)(F&B + B + W - 3W), F, B, W of one chunk",
     "deepseek-ai/DualPipe README (DualPipeV, Sea AI Lab's cut-in-half; bubble "
     "(PP/2-1)(F&B + B - 3W) with PP = 2p stages, activations PP+1) and dualpipev.py "
     "(micro-batches >= 2 p)"},
    ScheduleInfo{PipelineSchedule::zbv, "zbv", "zero-bubble V (ZB-V)", ScheduleOrder::zero_bubble_v,
     StageMapping::v_shape, PipelineSchedule::zbv, false, false, true, false, 2, 2, 0, false, false,
     launch_stacks({LaunchStack::torchtitan}), "ZBVZeroBubble", 2, "Z",
     "torchtitan's ZBVZeroBubble, two chunks a rank in a V, W apart from B "
     "(parallel.pipeline_schedule: zbv)",
     "2(p - r) - 1 forwards of chunk 0, then r pairs of F1, F0",
     "min(2p - 1 - r, m) chunk-0 + min(r + 1, m) chunk-1 passes: 2p (p micro-batches' worth) when m >= 2p - 1",
     "V shape: virtual stages r and 2p-1-r (rank 0 holds the embedding and the output layer)",
     "(p - 1) max(F, B, 2(B - W)), F, B, W of one chunk, m >= 2p - 1; (p - 1) F when F = B = W",
     "ZB-V: Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, sec. 6 (two chunks a rank in a "
     "V, 1F1B's peak activation memory, near-zero bubble when T_F = T_B = T_W); PyTorch "
     "torch/distributed/pipelining/schedules.py ScheduleZBVZeroBubble (its per-rank order; "
     "micro-batches padded to 2p - 1); torchtitan pipeline_parallel.py (ZBVZeroBubble, \"v\" stage "
     "mapping; fewer micro-batches than stages only warns)"},
};

inline const ScheduleInfo& schedule_info(PipelineSchedule s) { return kSchedules[static_cast<size_t>(s)]; }

// The schedule a plan runs when the job names none: the table's first row,
// which with its vpp twin is Megatron-LM's 1F1B family.
inline constexpr PipelineSchedule kDefaultSchedule = kSchedules[0].id;

// Whether the framework runs the schedule.
inline bool runs_on(PipelineSchedule s, LaunchStack stack) {
    return (schedule_info(s).stacks >> static_cast<unsigned>(stack) & 1u) != 0;
}

// The schedule of the 1F1B family for a vpp: the family resolves by vpp;
// other schedules stay themselves.
inline PipelineSchedule schedule_for_vpp(PipelineSchedule s, int vpp) {
    const ScheduleInfo& si = schedule_info(s);
    return si.vpp_twin != s && si.interleaves != (vpp > 1) ? si.vpp_twin : s;
}

// The schedule a plan runs: the 1F1B family resolves by vpp.
inline PipelineSchedule effective_schedule(const ParallelPlan& p) { return schedule_for_vpp(p.schedule, p.vpp); }

// Whether the schedule is the 1F1B family (it resolves by vpp).
inline bool one_f_one_b_family(PipelineSchedule s) { return schedule_info(s).vpp_twin != s; }

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
    switch (schedule_info(effective_schedule(p)).stage_mapping) {
        case StageMapping::mirrored: return chunk == 0 ? LayoutPosition{rank, 0} : LayoutPosition{p.pp - 1 - rank, 0};
        case StageMapping::v_shape: return chunk == 0 ? LayoutPosition{rank, 0} : LayoutPosition{p.pp - 1 - rank, 1};
        case StageMapping::standard: break;
    }
    return {rank, chunk};
}

// The standard layout (virtual stage c p + r on rank r): the closed forms of
// the 1F1B family apply.
inline bool standard_mapping(const ParallelPlan& p) {
    return schedule_info(effective_schedule(p)).stage_mapping == StageMapping::standard;
}

}  // namespace lostflops
