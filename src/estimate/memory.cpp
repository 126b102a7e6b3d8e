// Memory per GPU (Rajbhandari et al. 2020, ZeRO; Korthikanti et al. 2022).
//  weights     2 bytes/param (16-bit; fp32 training 4), /dp with ZeRO-3
//  gradients   4 (fp32 main grads, Megatron-LM) or 2 bytes/param, /dp with ZeRO-2+
//  optimizer   12 bytes/param (fp32 master, Adam m and v), /dp with ZeRO-1+;
//              10 with training.optimizer adam-param-remainders (the master's
//              low 16 bits only), 8 with adam-bf16-moments (fp32 master,
//              bf16 m and v), 4 with adam-bf16 (bf16 m and v, no master):
//              Apex DistributedFusedAdam as NeMo 1.x sets it
// so 18 bytes/param for Megatron without sharding, 6 + 12/N_d with its
// distributed optimizer, 16/N_d with ZeRO-3 (FSDP2: the fp32 shards are the
// master weights, 4 + 4 + 8). fp32 training (no mixed precision): 4 + 4 + 8
// = 16, the weights their own master. torchtitan's per-op selective checkpointing and
// its fp32 loss: workload/op_checkpoint.cpp, workload/layer_work.cpp.
// Activations: per-layer bytes of each kind (workload/layer_work.cpp) times
// the micro-batches in flight: with 1F1B rank r holds min(m, p - r); interleaved,
// Megatron-LM's warm-up chunk passes plus one (estimate/inflight.cpp), each
// chunk's passes holding that chunk's layers; zero-bubble and DualPipe(V) by
// their rows of lostflops/pipeline_schedules.h (DualPipe: each rank holds two
// stages, so twice the parameters). ZeRO-3 gather buffers:
// estimate/zero3_time.cpp. Full recompute keeps only each recomputed layer's
// input plus one layer's working set.
// Capacity and fragmentation (usable_capacity_bytes, fragmentation_bytes): on
// GPUs the state (weights, gradients, optimizer) lives in a few buffers
// allocated once and never freed, which PyTorch's caching allocator serves
// from segments of their own size rounded to 2 MiB (kRoundLarge,
// c10/cuda/CUDACachingAllocator.cpp): they fragment nothing. What the
// allocator frees and re-uses every micro-batch (activations, logits, ZeRO-3
// gathers) fragments: the reserve the allocator keeps beyond them is
// 1 / memory_usable_fraction - 1 of that churned memory, counted in buffers.
// The capacity is what the driver reports less what lives outside the
// allocator (estimate/memory_moments.cpp). The stacks' own tensors: a
// Hugging Face model in eager PyTorch, workload/eager_ledger.cpp; the peak
// over the step's moments: estimate/memory_moments.cpp and memory.h.
// TPUs (XLA's allocator) keep the fraction of the whole HBM.
#include "estimate/memory.h"

#include "lostflops/accelerator.h"
#include "estimate/inflight.h"
#include "lostflops/pipeline_schedules.h"
#include "estimate/zero3_time.h"
#include "workload/eager_ledger.h"

#include <algorithm>

namespace lostflops {

namespace {

// A uniform model on the default split without MTP modules: the closed forms
// (every chunk of a rank alike but for its layer count).
bool simple(const Job& job, KindWorks works) {
    return works.size() == 1 && default_split(job.plan) && job.model.mtp_layers == 0 && standard_mapping(job.plan);
}

// Parameters of one MTP module beyond its layer: the 2h x h projection (split
// over TP) and three norms.
double mtp_extra_params(const Job& job) {
    const double h = static_cast<double>(job.model.hidden);
    return 2 * h * h / job.plan.tp + 3 * h;
}

int last_kind(const Model& m) { return m.stack->kind_of.empty() ? 0 : m.stack->kind_of.back(); }

}  // namespace

double grad_bytes_per_param(const ParallelPlan& p, Precision prec) {
    return p.grad_fp32 || prec == Precision::fp32 ? 4.0 : 2.0;
}

// Adam's m and v in fp32 (8 bytes) and the master weight: the whole fp32 copy
// (4) or only its low 16 bits beside the bf16 weight (2; Apex
// DistributedFusedAdam store_param_remainders); or m and v in bf16 and no
// master copy (2 + 2; Apex with dtype bf16). fp32 training: m and v only,
// the fp32 weight is the master (Megatron-LM's FP32Optimizer and its
// distributed optimizer keep no copy of fp32 parameters, optimizer.py
// "model_fp32_groups"); job/job_sections.cpp allows only adam with it.
double optimizer_state_bytes_per_param(Optimizer o, Precision prec) {
    if (prec == Precision::fp32) return 8.0;
    switch (o) {
        case Optimizer::adam: return 12.0;
        case Optimizer::adam_param_remainders: return 10.0;
        case Optimizer::adam_bf16: return 4.0;
        case Optimizer::adam_bf16_moments: return 8.0;
    }
    return 12.0;
}

int dense_replicas(const ParallelPlan& p) { return p.dp * p.cp; }
// Expert weights are replicated over the expert data parallel ranks, tp*cp*dp/(etp*ep) (MoE parallel folding).
int expert_replicas(const ParallelPlan& p) { return p.expert_dp(); }

double optimizer_shard_params(const ParallelPlan& p, const StageParams& s) {
    if (p.zero == 0) return s.params + s.expert_params;
    return s.params / dense_replicas(p) + s.expert_params / expert_replicas(p);
}

StageParams stage_params(const Job& job, KindWorks works, const HeadWork& hw, int rank) {
    const ParallelPlan& p = job.plan;
    StageParams s;
    s.first = standard_mapping(p) && rank == 0;
    s.last = standard_mapping(p) && rank == p.pp - 1;
    if (simple(job, works)) {
        s.layers = static_cast<double>(default_rank_split(job.model.layers, p.pp, p.vpp, rank).layers());
        s.params = s.layers * works[0].params;
        s.expert_params = s.layers * works[0].expert_params;
    } else {
        const LayerStack& st = *job.model.stack;
        const LayerWork& mtp = works[static_cast<size_t>(last_kind(job.model))];
        for (int c = 0; c < rank_chunks(p); ++c) {
            const LayoutPosition lp = layout_position(p, rank, c);
            const VirtualStage vs = virtual_stage(job, lp.rank, lp.chunk);
            // dualpipe(v): the rank holding the embedding or the output layer.
            if (!standard_mapping(p)) s.first = s.first || vs.embedding, s.last = s.last || vs.loss;
            s.layers += vs.layers;
            for (size_t k = 0; k < works.size(); ++k) {
                const double n = works.size() == 1 ? vs.layers : st.count_in(static_cast<int>(k), vs.first, vs.first + vs.layers);
                s.params += n * works[k].params;
                s.expert_params += n * works[k].expert_params;
            }
            s.params += vs.mtp * (mtp.params + mtp_extra_params(job));
            s.expert_params += vs.mtp * mtp.expert_params;
        }
    }
    if (s.first) s.params += hw.embedding_params;
    // Untied: the output layer lives on the last rank. Tied with pp > 1: the
    // last rank keeps its own copy of the embedding (Megatron-LM).
    if (s.last && (!job.model.tied_embeddings || p.pp > 1)) s.params += hw.embedding_params;
    return s;
}

RankState memory_state(const Job& job, const Calibration& cal, const LayerWork& mean, const StageParams& sp) {
    RankState rs;
    if (job.training.xla) {  // a TPU: estimate/memory_xla.cpp
        rs.mem = memory_state_xla(job, mean, sp);
        rs.first_backward_grads = rs.mem.gradients_bytes;
        return rs;
    }
    const ParallelPlan& p = job.plan;
    const Training& t = job.training;
    const double nd = dense_replicas(p), ne = expert_replicas(p);
    const auto sharded = [&](double bytes_per_param, int from_stage) {
        return p.zero >= from_stage ? sp.params * bytes_per_param / nd + sp.expert_params * bytes_per_param / ne
                                    : (sp.params + sp.expert_params) * bytes_per_param;
    };
    const bool torch_stack = t.framework == Framework::fsdp || t.framework == Framework::hf;
    // FSDP2 (framework fsdp or hf, ZeRO-3) keeps each sharded parameter in
    // fp32 and that shard is the optimizer's master copy: the 16-bit weights
    // exist only gathered (MixedPrecisionPolicy param_dtype casts at the
    // all-gather; torch/distributed/_composable/fsdp/_fsdp_param.py), so 4
    // bytes of weights and 8 of Adam moments per sharded parameter, not 2 + 12.
    // Its sharded gradients take the parameter's dtype (fp32) whatever the
    // reduce dtype (_fsdp_collectives.py foreach_reduce casts to orig_dtype).
    const bool fp32_shards = p.zero >= 3 && torch_stack;
    // A Hugging Face model under autocast (framework hf, zero below 3): fp32
    // weights, fp32 gradients (autocast's bf16 copies are its GEMMs' inputs,
    // the leaves stay fp32), AdamW's fp32 m and v; the weight is its own master.
    const bool autocast = eager_autocast(t, p);
    Memory& mem = rs.mem;
    const Precision prec = t.precision;
    mem.weights_bytes = sharded(fp32_shards || autocast ? 4.0 : tensor_bytes(prec), 3);
    const double grad_bytes = (fp32_shards && t.framework == Framework::hf) || autocast ? 4.0 : grad_bytes_per_param(p, prec);
    mem.gradients_bytes = sharded(grad_bytes, 2);
    mem.optimizer_bytes = sharded(fp32_shards || autocast ? 8.0 : optimizer_state_bytes_per_param(t.optimizer, prec), 1);
    mem.buffers_bytes = cal.workspace_bytes;
    // DDP's gradient buckets are a second copy of the gradients
    // (torch/nn/parallel/distributed.py: gradient_as_bucket_view False by default).
    if (t.framework == Framework::hf && p.zero == 0 && nd * ne > 1) mem.buffers_bytes += mem.gradients_bytes;
    // ZeRO-3 / FSDP: gathered parameters alive and the unreduced gradient
    // (estimate/zero3_time.cpp: current + prefetched units, or the live cap).
    // Framework hf keeps only FSDP2's root gathered at the loss (ActParts::head_copy).
    if (p.zero >= 3 && t.framework != Framework::hf) {
        const Zero3Live z = zero3_live(job, mean, sp);
        mem.buffers_bytes += z.bytes;
        mem.zero_live_params = z.params;
        mem.zero_live_capped = z.capped;
        mem.zero_live_bytes = z.bytes;
    }
    // Gradients at the first backward: Megatron's and DeepSpeed's contiguous
    // buffers live through the step; PyTorch's optimizers free them
    // (zero_grad(set_to_none=True), the default since PyTorch 2.0), so a
    // Hugging Face step holds them only from its second micro-batch on.
    rs.first_backward_grads = torch_stack && p.micro_batches(t) <= 1 ? 0.0 : mem.gradients_bytes;
    // FSDP2 writes the sharded gradients into its reduce-scatter outputs,
    // allocated on its reduce-scatter stream (torch/distributed/fsdp/
    // _fully_shard/_fsdp_collectives.py foreach_reduce: the new sharded
    // gradient is a view of reduce_output); freed by zero_grad, their blocks
    // stay in that stream's pool of the caching allocator, which serves only
    // allocations on that stream (c10/cuda/CUDACachingAllocator.cpp: a
    // block is reused on the stream it was allocated on): reserved, not
    // allocated, while the next step's activations peak.
    if (fp32_shards && rs.first_backward_grads == 0) rs.side_stream_pool = mem.gradients_bytes;
    // torch.optim's foreach AdamW: torch._foreach_sqrt(exp_avg_sqs) is a
    // temporary of the optimizer's fp32 parameters (torch/optim/adam.py
    // _multi_tensor_adam); fused kernels have none.
    if (t.optimizer_kernel == OptimizerKernel::foreach) rs.optimizer_temp = 4.0 * optimizer_shard_params(p, sp);
    rs.autocast_copies = autocast;
    rs.eager_loss = torch_stack;
    const DeviceTerms dev = device_terms(job, cal);
    mem.headroom_bytes = headroom_bytes(job.cluster, dev.usable);
    mem.capacity_bytes = dev.usable - mem.headroom_bytes;
    mem.outside_allocator_bytes = dev.outside;
    mem.churn_reserve_fraction = dev.churn_reserve_fraction;
    return rs;
}

ActParts memory_activations(const Job& job, KindWorks works, const HeadWork& hw, const StageParams& sp,
                            const InFlight& fl, int rank, Memory* out) {
    const ParallelPlan& p = job.plan;
    const bool eager = job.training.framework == Framework::hf;
    const bool torch_stack = eager || job.training.framework == Framework::fsdp;
    Memory mem;
    ActParts parts;
    // One layer's backward at the end of the step (the PyTorch stacks, whose
    // gradients grow through it): its recompute rebuilds its whole saved
    // set (or, without recompute, its own saved set is still alive), with
    // its 16-bit weight copy; the largest kind's. Under FSDP2 (hf, zero 3)
    // the layer is gathered (2 bytes a parameter) with its unsharded
    // gradient (2) and the reduce-scatter's fp32 input (4), and the next
    // layer prefetched (2): 10 bytes a parameter of one layer
    // (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py).
    if (torch_stack)
        for (const LayerWork& w : works) {
            const double gathered = eager && p.zero >= 3 ? 10.0 * (w.params + w.expert_params) : 0.0;
            parts.working = std::max(parts.working, w.activation_bytes_full + w.weight_copy_bytes + gathered);
        }
    // Micro-batches (in units of this rank's whole stage) whose activations
    // are alive at the peak: Megatron-LM's 1F1B / interleaved warm-up plus one
    // (estimate/inflight.cpp).
    const double inflight = fl.stage_units;
    mem.warmup_passes = fl.warmup;
    mem.inflight_microbatches = inflight;
    double mtp_modules = 0;
    if (simple(job, works)) {
        const LayerWork& lw = works[0];
        if (p.recompute == Recompute::full) {
            // Recomputed layers keep their input; the others (recompute_layers
            // below the stage's layers) keep everything; one recomputed layer's
            // working set is live during its backward.
            const RankSplit rs = default_rank_split(job.model.layers, p.pp, p.vpp, rank);
            const double recomputed = static_cast<double>(rs.light()) * recomputed_of(p, rs.base) +
                                      static_cast<double>(rs.heavy()) * recomputed_of(p, rs.base + 1);
            mem.activations_bytes = inflight * (recomputed * lw.checkpoint_bytes +
                                                (sp.layers - recomputed) * lw.activation_bytes_full) +
                                    (recomputed > 0 && !eager ? lw.activation_bytes_full : 0.0);
        } else {
            mem.activations_bytes = inflight * sp.layers * lw.activation_bytes;
            parts.layer_copies = sp.layers * lw.weight_copy_bytes;
        }
    } else {
        // Each chunk's alive passes hold its layers of each kind.
        const LayerStack& st = *job.model.stack;
        const size_t mtp_kind = static_cast<size_t>(last_kind(job.model));
        double working_set = 0;
        for (int c = 0; c < rank_chunks(p); ++c) {
            const LayoutPosition lp = layout_position(p, rank, c);
            const VirtualStage vs = virtual_stage(job, lp.rank, lp.chunk);
            const int redo = recomputed_of(p, vs.layers);
            double chunk = 0;
            for (size_t k = 0; k < works.size(); ++k) {
                const int kind = static_cast<int>(k);
                const double n = works.size() == 1 ? vs.layers : st.count_in(kind, vs.first, vs.first + vs.layers);
                if (p.recompute != Recompute::full) {
                    chunk += n * works[k].activation_bytes;
                    parts.layer_copies += n * works[k].weight_copy_bytes;
                    continue;
                }
                const double r = works.size() == 1 ? redo : st.count_in(kind, vs.first, vs.first + redo);
                chunk += r * works[k].checkpoint_bytes + (n - r) * works[k].activation_bytes_full;
                if (r > 0) working_set = std::max(working_set, works[k].activation_bytes_full);
            }
            chunk += vs.mtp * works[mtp_kind].activation_bytes;
            mtp_modules += vs.mtp;
            mem.activations_bytes += chunk_alive(fl, c, p.pp, p.vpp) * chunk;
        }
        if (!eager) mem.activations_bytes += working_set;
    }
    if (sp.first && !eager) mem.activations_bytes += fl.first_chunk * hw.embed_bytes_fwd;
    // Offloaded activations: one layer's saved set on the device while it
    // is copied out (forward) or back (backward).
    if (p.offload_activations && p.recompute != Recompute::full) {
        double transit = 0;
        for (const LayerWork& w : works) transit = std::max(transit, w.activation_bytes_full);
        mem.activations_bytes += transit;
    }
    // The output layer's logits, and each MTP module's own.
    if (sp.last || mtp_modules > 0) mem.logits_bytes = ((sp.last ? 1 : 0) + mtp_modules) * hw.logits_memory_bytes;
    // The logits a loop holds in the model's output: one tensor (HeadWork::held_logits_bytes).
    if (sp.last) {
        mem.logits_bytes += hw.held_logits_bytes;
        parts.held = hw.held_logits_bytes;
    }
    if (sp.last) parts.logits_cached = hw.logits_cached_bytes;
    // A Hugging Face model: what the final norm and the output layer saved
    // is alive at the loss's backward, with the output layer's weight copy
    // (autocast) or FSDP2's gathered root (workload/eager_ledger.h).
    if (eager && sp.last) {
        mem.activations_bytes += fl.stage_units * hw.head_saved_bytes;
        parts.head_copy = hw.head_weight_copy_bytes;
    }
    mem.worst_stage = rank;
    if (job.training.xla) xla_reuse_loss_space(job, works, mem);  // a TPU: estimate/memory_xla.cpp
    parts.activations = mem.activations_bytes;
    parts.logits = mem.logits_bytes;
    if (out != nullptr) *out = mem;
    return parts;
}

Memory stage_memory(const Job& job, const Calibration& cal, KindWorks works, const LayerWork& mean,
                    const HeadWork& hw, int rank) {
    const StageParams sp = stage_params(job, works, hw, rank);
    Memory act;
    const ActParts parts = memory_activations(job, works, hw, sp, inflight_passes(job, rank), rank, &act);
    Memory mem = memory_total(memory_state(job, cal, mean, sp), parts, act);
    name_moment(job, mem);
    return mem;
}

Memory stage_memory(const Job& job, const Calibration& cal, const LayerWork& lw, const HeadWork& hw, int rank) {
    return stage_memory(job, cal, KindWorks(&lw, 1), lw, hw, rank);
}

int peak_candidate_ranks(const Job& job, int* out) {
    const ParallelPlan& p = job.plan;
    int n = 0;
    const auto add = [&](int r) {
        if (r < 0 || r >= p.pp) return;
        for (int i = 0; i < n; ++i)
            if (out[i] == r) return;
        out[n++] = r;
    };
    if (!job.model.uniform() || p.layout || job.model.mtp_layers > 0 || !standard_mapping(p)) {
        for (int r = 0; r < p.pp; ++r) out[n++] = r;
        return n;
    }
    add(0);
    add(1);
    if (default_split(p)) {
        // The middle ranks' light chunks change only where r crosses
        // head_b or from_b (estimate.cpp pipeline_phase's closed form).
        const int stages = p.pp * p.vpp;
        const int missing = stages - job.model.layers % stages;
        if (job.model.layers % stages != 0) {
            add(((missing + 1) / 2) % p.pp);
            add((stages - missing / 2) % p.pp);
        }
    }
    add(p.pp - 1);
    std::sort(out, out + n);
    return n;
}

}  // namespace lostflops
