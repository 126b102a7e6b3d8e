// Estimate: the one result type every front end consumes.
//
// estimate() is a pure function of (Job, Calibration): no allocation on the hot
// path beyond the returned value, no I/O, deterministic. Preconditions: the Job
// came from load_job() (all divisibility checks passed).
//
// Conventions (MFU as PaLM defines it, Chowdhery et al. 2022, Appendix B;
// FLOP counting as Narayanan et al. 2021, SC21, eq. 3): model FLOPs count every matrix multiply of forward
// and backward (backward = 2x forward) at 2*m*n*k, attention scores and values
// in full (not halved for the causal mask unless training.causal_flops), and the
// logits; recomputation is not counted. Hardware FLOPs add recomputation.
// MFU = model FLOPs per step / (step time * GPUs * dense peak of the precision).
#pragma once

#include <cstdint>

#include "lostflops/calibration.h"
#include "lostflops/spec.h"

namespace lostflops {

// Seconds per step by cause; the fields sum to Estimate::step_time_s.
struct Breakdown {
    double compute_s = 0;       // GEMMs and attention of forward and backward
    double memory_bound_s = 0;  // norms, activations, softmax, residuals, dropout
    double recompute_s = 0;     // forward work redone in backward
    double overhead_s = 0;      // kernel launch and tail time
    double host_s = 0;          // GPU waiting for the CPU to issue work (host-bound passes)
    double tp_comm_s = 0;       // tensor/sequence-parallel collectives, exposed
    double cp_comm_s = 0;       // context-parallel key/value exchange, exposed
    double ep_comm_s = 0;       // expert-parallel all-to-all
    double pp_bubble_s = 0;     // pipeline fill and drain (and stage imbalance)
    double pp_p2p_s = 0;        // pipeline send/recv on the critical path
    double dp_comm_s = 0;       // gradient reduction / parameter gathers, exposed
    double optimizer_s = 0;     // optimizer step
    double data_loader_s = 0;   // GPU waiting for the next batch (estimate/data_loader.h)

    double total_s() const {
        return compute_s + memory_bound_s + recompute_s + overhead_s + host_s + tp_comm_s +
               cp_comm_s + ep_comm_s + pp_bubble_s + pp_p2p_s + dp_comm_s + optimizer_s + data_loader_s;
    }
};

// The moment of the step at which a rank's memory peaks (estimate/memory.cpp
// plays the rank's tensors over its schedule and takes the largest):
//   first_backward  the backward of the micro-batch that starts the rank's
//                   backward passes (micro_batch, chunk): the activations of
//                   every micro-batch in flight and, on the last stage, the
//                   loss's fp32 buffers (its log-softmax backward)
//   end_of_backward the last layer's backward of the step's last micro-batch:
//                   every gradient, one layer's working set
//   optimizer_step  the optimizer's update: gradients, state and the
//                   foreach kernel's temporary
enum class MemoryMoment { first_backward, end_of_backward, optimizer_step };
const char* to_string(MemoryMoment m);

// Bytes per GPU on the worst pipeline stage, by kind, alive at its peak
// moment (an optimizer-step peak holds no activations).
struct Memory {
    double weights_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0;  // stored for backward, all in-flight micro-batches
    double logits_bytes = 0;       // output logits and loss buffers (last stage)
    double buffers_bytes = 0;      // workspaces, comm/gather buffers, the allocator's cached reserve
    // 16-bit copies of fp32 weights alive at the peak: autocast's cached casts
    // (framework hf at zero 0) and FSDP2's gathered root module.
    double weight_copies_bytes = 0;
    double temporary_bytes = 0;    // the moment's transients: the foreach optimizer's temporary
    double peak_bytes = 0;         // sum of the above (= reserved_bytes)
    double capacity_bytes = 0;     // what the plan may take: usable_bytes - headroom_bytes
    int worst_stage = 0;
    bool fits = false;
    // The verdict's terms: the most the framework's allocator hands out over
    // the step (torch.cuda.max_memory_allocated), the most it holds from the
    // device (max_memory_reserved: allocated plus its cached slack; the
    // moment above is this one's), what lives outside it (the CUDA context,
    // NCCL's buffers), what it can take on this GPU (the driver's total less
    // what lives outside), what the job asks to keep free of it
    // (cluster.memory_headroom) and the margin left beyond that (usable -
    // headroom - reserved; < 0: does not fit).
    double allocated_bytes = 0;
    double reserved_bytes = 0;
    double outside_allocator_bytes = 0;
    double usable_bytes = 0;
    double headroom_bytes = 0;
    double margin_bytes = 0;
    MemoryMoment moment = MemoryMoment::first_backward;
    int moment_micro_batch = 0;  // first_backward: the micro-batch (0-based) whose backward it is
    int moment_chunk = 0;        // first_backward: the rank's model chunk (0-based)
    // The assumptions the peak rests on (the report names the deciding one):
    int64_t warmup_passes = 0;         // forward (chunk) passes before the first backward on worst_stage
    double inflight_microbatches = 0;  // activations alive at the peak, in micro-batches of the whole stage
    double zero_live_params = 0;       // ZeRO-3: gathered (unsharded) parameters alive at once
    bool zero_live_capped = false;     // ZeRO-3: limited by parallel.zero_max_live_params
    double zero_live_bytes = 0;        // ZeRO-3: those + the unreduced gradient buffer (in buffers_bytes)
    // The caching allocator's reserve over the memory it frees and re-uses
    // (activations, logits, ZeRO-3 gathers), in buffers_bytes, and its ratio
    // to that memory (estimate/memory.cpp; 0 on TPUs).
    double fragmentation_bytes = 0;
    double churn_reserve_fraction = 0;
};

struct Estimate {
    double step_time_s = 0;
    double tokens_per_step = 0;
    double tokens_per_s_per_gpu = 0;
    double model_flops_per_step = 0;     // whole job
    double hardware_flops_per_step = 0;  // whole job, with recomputation
    double model_tflops_per_gpu = 0;
    double hardware_tflops_per_gpu = 0;
    double mfu = 0;  // fraction
    double hfu = 0;  // fraction
    int64_t micro_batches = 0;  // per DP rank per step
    double bubble_fraction = 0; // pp_bubble / step time
    // The model's parameters (workload/flops.h): all of them, and the ones a
    // token uses (top-k routed experts); both with the input embedding and
    // the output layer (once when tied), without multi-token prediction
    // modules, which are params_mtp.
    double params_total = 0, params_active = 0;
    double params_embedding = 0, params_output = 0, params_mtp = 0;
    Breakdown breakdown;
    // Of breakdown.recompute_s (parts of it, not added to the step): the
    // recomputed forward's memory-bound kernels and its kernels' launch
    // overhead; the rest of the wall is GEMMs and attention. trace --job
    // compares each with the kernels a profiler puts it among.
    double recompute_memory_bound_s = 0, recompute_overhead_s = 0;
    // Of breakdown.optimizer_s (not added to the step): the GPU's gaps
    // between the optimizer's kernel launches, which a profiler shows as idle
    // (estimate.cpp hf_optimizer_launches).
    double optimizer_overhead_s = 0;
    Memory memory;
};

// How the pipeline phase is timed.
//  - closed_form (default): the closed form where it is exact (the 1F1B family
//    with the same layers on every chunk of a rank), the discrete-event
//    simulation where it is not (DualPipe and DualPipeV; interleaving whose
//    chunks on a rank differ, e.g. 126 layers on pp 8 x vpp 9), so that the
//    estimate, its warnings and the report's timeline give one bubble.
//  - simulation: the simulation of Megatron-LM's schedule (the reference) for
//    every plan.
//  - screen: the search's first pass. As closed_form, except that interleaving
//    with uneven chunks gets a lower bound of its makespan, O(pp)
//    (schedule/pipeline_detail.h pipeline_lower_bound_s), and
//    PipelinePhase::bound says so: the search prices exactly every plan whose
//    bound could still make its list (search/evaluate_layout.cpp).
enum class ScheduleModel { closed_form, simulation, screen };

Estimate estimate(const Job& job, const Calibration& cal,
                  ScheduleModel schedule = ScheduleModel::closed_form);

}  // namespace lostflops
