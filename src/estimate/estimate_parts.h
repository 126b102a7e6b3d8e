// The stages of estimate(), apart, so that the search (src/search) can
// evaluate many plans of one layout and reuse what they share. estimate() is
// exactly: pass_setup -> pipeline_phase -> finish_time, and stage_memory for
// the first and last pipeline rank; the search calls the same functions, so
// its figures are estimate's to the bit. Internal.
#pragma once

#include <cstdint>

#include "estimate/memory.h"
#include "estimate/stage_time.h"
#include "estimate/zero3_time.h"
#include "lostflops/estimate.h"
#include "workload/flops.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {

// Work and per-layer times of one plan. Depends on the layout (tp, cp, pp, dp,
// vpp, ep, micro-batch), sequence_parallel, tp_comm_overlap, the recompute
// mode and whether zero >= 3 (engine hooks on the host) — not on
// recompute_layers, zero 0..2, overlap_grad_reduce or grad_fp32.
// Data-parallel collectives and optimizer step of a layout (estimate.cpp dp_comm).
struct DpComm {
    double all_reduce_s = 0, reduce_scatter_s = 0, all_gather_s = 0;  // gradients / parameters, first rank
    double tied_embedding_s = 0;                                       // first-last embedding all-reduce
    double optimizer_s[2] = {0, 0};                                    // zero 0; zero >= 1
};

struct PassSetup {
    PlanContext ctx;
    LayerWork lw;
    HeadWork hw;
    HostOps ho;
    LayerTime layer;        // a layer under the plan's recompute mode
    LayerTime layer_plain;  // a layer full recompute leaves alone (recompute: full only)
    LayerTime head, embed;
    StageParams first_stage, last_stage;  // pipeline ranks 0 and pp-1
    DpComm dp;
    Zero3Comm zero3;        // first rank's ZeRO-3 traffic; set when zero >= 3
    bool grad_fp32 = true;  // the plan's, which dp depends on
};
PassSetup pass_setup(const Job& job, const Calibration& cal);
// Same, with ctx = make_plan_context(job, cal) given, and the stage
// parameters (which depend on the layout alone) copied from a setup of
// another plan of the same layout when there is one: the search shares them.
PassSetup pass_setup(const Job& job, const PlanContext& ctx, const PassSetup* same_layout);
// The setup of job.plan from `sibling`, the setup of a plan that differs
// only in parallel.zero: the zero stage changes the host's operator count
// (engine hooks under ZeRO-3) and the ZeRO-3 traffic, nothing else here, so
// the GPU times are copied. Equal to pass_setup(job, ...) to the bit.
PassSetup pass_setup_other_zero(const Job& job, const PassSetup& sibling);

// The pipeline phase: per-(rank, chunk) pass times through the schedule.
// Fills breakdown fields compute_s .. pp_p2p_s (not dp_comm_s, optimizer_s).
// Depends on the PassSetup's inputs and recompute_layers.
struct PipelinePhase {
    Breakdown breakdown;
    int64_t micro_batches = 0;
    double first_rank_fwd_s = 0, first_rank_bwd_s = 0;  // rank 0, per micro-batch, all chunks
    double recomputed_layers = 0;                       // layers full recompute redoes, whole model
    FlopsPerToken flops;                                // model and hardware FLOPs per token
};
PipelinePhase pipeline_phase(const Job& job, const PassSetup& s, ScheduleModel schedule);

// The step's breakdown: the phase's, with data-parallel exposure and the
// optimizer step; the step time is bd.total_s(). What the search needs.
void finish_breakdown(const Job& job, const Calibration& cal, const PassSetup& s, const PipelinePhase& ph,
                      Breakdown& bd);
// Data-parallel traffic, optimizer step, totals, throughput, MFU and HFU of
// `e` (all but e.memory), from the pipeline phase (finish_breakdown, then the rates).
void finish_time(const Job& job, const Calibration& cal, const PassSetup& s, const PipelinePhase& ph,
                 Estimate& e);

// finish_time depends on parallel.zero only through this class: no sharding,
// sharded optimizer state / gradients (ZeRO-1 and -2 move the same bytes:
// reduce-scatter + all-gather, and shard the optimizer alike), ZeRO-3. The
// search reuses a time across a class (its tests re-estimate every plan).
inline int zero_time_class(int zero) { return zero == 0 ? 0 : zero < 3 ? 1 : 2; }

}  // namespace lostflops
