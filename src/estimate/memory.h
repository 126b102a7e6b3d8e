// Memory per GPU of one pipeline rank, by kind. Internal to estimate.
#pragma once

#include <algorithm>
#include <span>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "estimate/inflight.h"
#include "job/stage_layout.h"
#include "workload/layer_work.h"

namespace lostflops {

struct StageParams {
    double layers = 0;      // transformer layers on this rank (all chunks)
    double params = 0;         // dense parameters held by this rank (before ZeRO sharding)
    double expert_params = 0;  // expert parameters held by this rank (before sharding)
    bool first = false;     // holds the embedding
    bool last = false;      // holds the output layer and loss
};

// Of a virtual stage's `layers`, the ones that full recompute redoes: all of them, or the first
// parallel.recompute_layers (Megatron-LM's block method); 0 without full recompute.
inline int recomputed_of(const ParallelPlan& p, int layers) {
    if (p.recompute != Recompute::full) return 0;
    return p.recompute_layers < 0 ? layers : std::min(layers, p.recompute_layers);
}

// The work of each layer kind of the job's model, index = kind index (a
// uniform model: its one layer). The stage functions below count each kind's
// layers on the rank (job/stage_layout.h, the stack's prefix counts) and the
// multi-token prediction modules on theirs (a layer of the last layer's kind
// each, with its projection and norms, and an output layer's logits).
using KindWorks = std::span<const LayerWork>;

StageParams stage_params(const Job& job, KindWorks works, const HeadWork& hw, int rank);
inline StageParams stage_params(const Job& job, const LayerWork& lw, const HeadWork& hw, int rank) {
    return stage_params(job, KindWorks(&lw, 1), hw, rank);
}

Memory stage_memory(const Job& job, const Calibration& cal, KindWorks works, const LayerWork& mean,
                    const HeadWork& hw, int rank);
// A uniform model's (works = {lw}, mean = lw).
Memory stage_memory(const Job& job, const Calibration& cal, const LayerWork& lw, const HeadWork& hw, int rank);

// The pipeline ranks whose memory can be the largest of all: every rank's
// memory is at most that of one of them (the peak is their maximum). A rank
// with the same layers of each kind on each chunk, embedding, output layer and
// MTP modules as a lower rank holds no more than it: its state is the same
// and it has at most as many passes in flight (inflight.cpp). Writes them to
// `out` (capacity pp) and returns how many.
int peak_candidate_ranks(const Job& job, int* out);

// stage_memory in two parts, for the search: what the plan's state takes
// (weights, gradients, optimizer, buffers; depends on zero, grad_fp32 and the
// ZeRO-3 engine, not on recompute or sequence parallelism) and what its
// passes add (recompute, recompute_layers, sequence parallelism; not zero,
// except under framework hf, whose zero is its precision recipe: the search
// keeps the job's). stage_memory == memory_total(memory_state(...),
// memory_activations(...)) to the bit; the search sums the same terms
// through rank_reserved_bytes.
// `mean`: the layer (uniform model) or the layer-count-weighted mean of the
// kinds, whose parameters the ZeRO-3 engine gathers per layer.
struct RankState {
    Memory mem;                   // weights, gradients (all), optimizer, buffers, capacity
    double first_backward_grads = 0;  // gradients alive at the first backward
    double optimizer_temp = 0;    // the foreach optimizer's temporary at its step
    bool autocast_copies = false; // the layers' bf16 weight copies are kept (framework hf, zero 0)
    bool eager_loss = false;      // a PyTorch stack (fsdp, hf): its gradients grow through the backward (end_of_backward)
    // Reserved but not allocated at the first backward: FSDP2's freed
    // sharded gradients, cached in its reduce-scatter stream's pool.
    double side_stream_pool = 0;
};
// What a rank's passes add at the moments (bytes).
struct ActParts {
    double activations = 0;  // saved by the micro-batches in flight at the first backward
    double logits = 0;       // the loss's buffers
    // Reserved, not allocated, at the first backward: the loss's freed 16-bit
    // logits block (HeadWork::logits_cached_bytes). When it is counted, the
    // logits' own blocks are itemized and take no churn reserve.
    double logits_cached = 0;
    double layer_copies = 0; // autocast's bf16 copies of the rank's layer weights (recompute none)
    double head_copy = 0;    // the output layer's 16-bit copy / FSDP2's gathered root (framework hf)
    double working = 0;      // one layer's backward at the end of the step (saved set or its recompute)
    // The logits a loop holds in the model's output (HeadWork::held_logits_bytes):
    // in `logits` at the first backward, and still allocated at the later moments.
    double held = 0;
};
RankState memory_state(const Job& job, const Calibration& cal, const LayerWork& mean, const StageParams& sp);
// `out` gets the activation fields of the first backward (activations,
// logits, warm-up and in-flight counts, worst_stage).
ActParts memory_activations(const Job& job, KindWorks works, const HeadWork& hw, const StageParams& sp,
                            const InFlight& fl, int rank, Memory* out = nullptr);
// memory_state of a TPU job (Training::xla): MaxText's fp32 parameters,
// gradients and AdamW moments, no framework reserve, HBM less the TPU
// runtime's reserve (estimate/memory_xla.cpp). memory_state calls it.
Memory memory_state_xla(const Job& job, const LayerWork& mean, const StageParams& sp);
// A TPU job under full remat: the recomputed layer's working set takes the
// space of the loss's buffers, dead by then (estimate/memory_xla.cpp); takes
// the smaller of the two off `act`'s activations. memory_activations calls it.
void xla_reuse_loss_space(const Job& job, KindWorks works, Memory& act);
// What a TPU's XLA runtime lets a program allocate (estimate/memory_xla.cpp).
double xla_capacity_bytes(const Gpu& gpu);
// Parameters, gradients and optimizer state per parameter of a TPU job (16 B with AdamW).
double xla_state_bytes_per_param(Optimizer o);
// The allocated bytes of each moment (index: MemoryMoment) and the peak's
// (estimate/memory_moments.cpp says what each holds). Inline: the search
// calls it for every plan and rank.
struct MomentBytes {
    double allocated[3] = {0, 0, 0};
    double reserved[3] = {0, 0, 0};
    MemoryMoment peak = MemoryMoment::first_backward;  // the most reserved
};
// The logits under the churn reserve: none when their blocks are itemized
// (ActParts::logits_cached).
inline double churned_logits(const ActParts& a) { return a.logits_cached > 0 ? 0.0 : a.logits; }
// Reserved at a moment: its allocated bytes, the allocator's reserve over
// the memory it churns (cached from the first backward on, so at every
// moment) and, at the first backward, the side streams' pools and the
// loss's cached 16-bit logits block. The peak is
// the moment of the most reserved (the allocator gives nothing back).
inline MomentBytes rank_moments(const RankState& s, const ActParts& a) {
    const Memory& m = s.mem;
    const double base = m.weights_bytes + m.optimizer_bytes + m.buffers_bytes;
    const double copies = (s.autocast_copies ? a.layer_copies : 0.0) + a.head_copy;
    const double frag = m.churn_reserve_fraction * (a.activations + churned_logits(a) + m.zero_live_bytes);
    MomentBytes out;
    out.allocated[0] = base + s.first_backward_grads + a.activations + a.logits + copies;
    out.allocated[1] = s.eager_loss ? base + m.gradients_bytes + a.working + a.held : 0.0;
    out.allocated[2] = base + m.gradients_bytes + s.optimizer_temp + a.held;
    out.reserved[0] = out.allocated[0] + frag + s.side_stream_pool + a.logits_cached;
    out.reserved[1] = out.allocated[1] + frag;
    out.reserved[2] = out.allocated[2] + frag;
    int best = 0;
    if (out.reserved[1] > out.reserved[best]) best = 1;
    if (out.reserved[2] > out.reserved[best]) best = 2;
    out.peak = static_cast<MemoryMoment>(best);
    return out;
}
// The rank's reserved bytes at its peak: what memory_total's Memory says,
// to the bit.
inline double rank_reserved_bytes(const RankState& s, const ActParts& a) {
    const MomentBytes mb = rank_moments(s, a);
    return mb.reserved[static_cast<int>(mb.peak)];
}
// The rank's Memory at its peak moment; peak, fits and worst_stage set
// (`act`: memory_activations' `out`).
Memory memory_total(const RankState& state, const ActParts& parts, const Memory& act);
// Sets mem.moment_micro_batch and moment_chunk for mem.moment.
void name_moment(const Job& job, Memory& mem);

// PyTorch's caching allocator (a GPU) rather than XLA's (a TPU): its
// reserve is 1 / memory_usable_fraction - 1 of the churned memory
// (estimate/memory_moments.cpp).
bool caching_allocator(const Job& job);

// The reserve over a plan's activations and logits on top of `state`
// (memory_state's): its churn_reserve_fraction times activations + logits
// + ZeRO-3 gathers. memory_total adds it to buffers_bytes; the search adds it
// the same way, so that both give the same peak to the bit.
double fragmentation_bytes(const Memory& state, double activations_bytes, double logits_bytes);
// What the driver reports as the GPU's memory (Gpu::memory_total_bytes, or
// 0.99 of the datasheet's) and what lives outside the framework's
// allocator (the CUDA context; on a multi-GPU job NCCL's buffers too).
double device_total_bytes(const Gpu& gpu);
// The three (one accelerator lookup; memory_state's). A TPU job's state is
// memory_state_xla's: the TPU runtime's bytes_limit, no allocator share.
struct DeviceTerms {
    double outside = 0, usable = 0, churn_reserve_fraction = 0;
};
DeviceTerms device_terms(const Job& job, const Calibration& cal);
// What cluster.memory_headroom keeps free of `usable` bytes (its GiB plus its
// share), at most all of them (job/validate.cpp refuses one of the whole memory).
double headroom_bytes(const Cluster& c, double usable);

// Ranks holding a copy of this rank's dense weights (dp*cp) and of its expert
// weights (tp*cp*dp/(etp*ep), ParallelPlan::expert_dp): the groups that reduce their gradients and over which
// ZeRO shards them.
int dense_replicas(const ParallelPlan& p);
int expert_replicas(const ParallelPlan& p);

// Parameters of this rank's optimizer shard.
double optimizer_shard_params(const ParallelPlan& p, const StageParams& s);

// Bytes per parameter of gradients as reduced (fp32 main grads or 16-bit;
// fp32 training: 4).
double grad_bytes_per_param(const ParallelPlan& p, Precision prec);
// Adam's state per parameter beside the weight: 12 (fp32 master, m, v),
// 10 (adam-param-remainders) or 4 (adam-bf16); fp32 training: 8 (m and v,
// the weight is its own master).
double optimizer_state_bytes_per_param(Optimizer o, Precision prec);

}  // namespace lostflops
