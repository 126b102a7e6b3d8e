// The stages of estimate(), apart, so that the search (src/search) can
// evaluate many plans of one layout and reuse what they share. estimate() is
// exactly: pass_setup -> pipeline_phase -> finish_time, and stage_memory for
// the first and last pipeline rank; the search calls the same functions, so
// its figures are estimate's to the bit. Internal.
#pragma once

#include <cstdint>
#include <vector>

#include "estimate/memory.h"
#include "estimate/stage_time.h"
#include "estimate/zero3_time.h"
#include "job/stage_layout.h"
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
    double optimizer_overhead_s[2] = {0, 0};  // of optimizer_s: the gaps between its kernels (Estimate's)
};

// One layer kind of a stack of several kinds, under the plan.
struct KindTime {
    HostOps ho;             // its host operators (the layer fields)
    LayerTime layer;        // under the plan's recompute mode
    LayerTime layer_plain;  // what full recompute leaves alone (recompute: full only)
};

struct PassSetup {
    PlanContext ctx;
    LayerWork lw;           // the layer (uniform model); several kinds: their mean weighted by
                            // layer count (the ZeRO-3 engine's per-layer traffic, the roofline)
    HeadWork hw;
    HostOps ho;             // layer fields: lw's layer (the mean layer's)
    LayerTime layer;        // a layer under the plan's recompute mode (several kinds: the mean)
    LayerTime layer_plain;  // a layer full recompute leaves alone (recompute: full only)
    // Several kinds: each kind's work and time (index = kind); empty for a
    // uniform model, whose one kind is lw / layer above.
    std::vector<LayerWork> kind_work;
    std::vector<KindTime> kind_time;
    LayerTime head, embed;
    // The model's first layer's LayerTime::lead_wait_s: a forward that starts
    // after a synchronisation waits for it (stage_pass.cpp finish_pass).
    double first_lead_wait_s = 0;
    LayerTime mtp;          // one multi-token prediction module: a layer of the last layer's kind and an output layer
    StageParams first_stage, last_stage;  // pipeline ranks 0 and pp-1
    DpComm dp;
    Zero3Comm zero3;        // first rank's ZeRO-3 traffic; set when zero >= 3
    bool grad_fp32 = true;  // the plan's, which dp depends on
};
// Each kind's work: {lw} for a uniform model, kind_work otherwise.
inline KindWorks works(const PassSetup& s) {
    return s.kind_work.empty() ? KindWorks(&s.lw, 1) : KindWorks(s.kind_work);
}

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
    // Of breakdown.recompute_s: Estimate::recompute_memory_bound_s, recompute_overhead_s.
    double recompute_memory_bound_s = 0, recompute_overhead_s = 0;
    int64_t micro_batches = 0;
    double first_rank_fwd_s = 0, first_rank_bwd_s = 0;  // rank 0, per micro-batch, all chunks
    double recomputed_layers = 0;                       // layers full recompute redoes, whole model
    FlopsPerToken flops;                                // model and hardware FLOPs per token
    // ScheduleModel::screen on a plan the closed form does not time exactly:
    // the makespan (and so the bubble) is a lower bound, not the estimate.
    bool bound = false;
};
PipelinePhase pipeline_phase(const Job& job, const PassSetup& s, ScheduleModel schedule);

// Pipeline send/receive of one activation between consecutive stages
// (Narayanan et al. 2021 sec. 4.1 scatter/gather); 0 without a pipeline.
double p2p_time_s(const PlanContext& ctx, const Job& job);

// The pass rule: the forward and backward of virtual stage (rank, chunk) for
// one micro-batch: each kind's layer time times its layers on the stage (the
// first recompute_layers of them with the plan's recompute, the others
// plain), the embedding on the stage that holds it, the output layer and
// loss and the MTP modules on theirs, the schedule's host work per pass, and
// the host bound (per pass with a pipeline; over forward + backward without
// one). Estimate, search and explain all time passes by this rule.
struct StagePass {
    PassTime f, b;
    double redone = 0;  // layers full recompute redoes (all the layers without full recompute)
    int layers = 0;
    double wgrad_s = 0;  // of b, the weight gradient W (LayerTime::wgrad_s)
};
StagePass stage_pass(const Job& job, const PassSetup& s, int rank, int chunk);
// The same for a uniform model's `layers` layers (the closed form's cells).
StagePass stage_pass_uniform(const Job& job, const PassSetup& s, int layers, bool embedding, bool loss, int mtp);

// The passes of one pipeline phase by the pass rule, each distinct one timed
// once: a pass depends only on its layer count, the layers full recompute
// redoes, what else the stage holds (embedding, output layer, MTP modules)
// and, for several kinds, each kind's count of both; most virtual stages of a
// stack share them (DeepSeek-V3: all but the first hold only MoE layers), so
// a phase times a handful of passes, not pp * vpp. get() returns
// stage_pass(job, s, rank, chunk) to the bit; clear() before another
// (job, s). Stacks of more than kKinds kinds are timed pass by pass.
class StagePassMemo {
public:
    void clear() { used_ = next_ = 0; }
    const StagePass& get(const Job& job, const PassSetup& s, int rank, int chunk);

private:
    static constexpr int kKinds = 8, kEntries = 8;
    struct Key {
        VirtualStage vs;  // first = 0: the counts below stand for it
        int redo = 0, kinds = 0;
        int n[kKinds] = {}, r[kKinds] = {};
        bool operator==(const Key& o) const;
    };
    Key keys_[kEntries];
    StagePass passes_[kEntries];
    StagePass scratch_;
    int used_ = 0, next_ = 0;
};

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
