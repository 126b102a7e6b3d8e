// Step time, MFU and memory of one training job.
//
// step = pipeline phase (closed form of the 1F1B / interleaved schedule over
//        per-stage, per-micro-batch times; schedule/pipeline_closed_form.cpp)
//      + exposed data-parallel traffic (gradient reduce-scatter / all-reduce,
//        ZeRO parameter gathers) after what hides behind backward
//      + tied-embedding gradient all-reduce between first and last stage
//      + optimizer step (memory-bound Adam over the local shard).
// MFU = model FLOPs per step / (step * GPUs * dense peak) (PaLM, Chowdhery
// et al. 2022, Appendix B).
// The breakdown charges the steady state to the slowest rank's causes, the
// rest of the pipeline phase to the bubble, and p2p to pipeline transfers.
#include "lostflops/estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "estimate/data_loader.h"
#include "estimate/dp_overlap.h"
#include "estimate/estimate_parts.h"
#include "estimate/inflight.h"
#include "estimate/memory.h"
#include "estimate/stage_time.h"
#include "estimate/zero3_time.h"
#include "lostflops/pipeline.h"
#include "schedule/pipeline_detail.h"
#include "workload/flops.h"
#include "workload/host_ops.h"

namespace lostflops {

namespace {

// Exposed data-parallel time after overlap with the compute window. Dense
// weights are reduced over dp*cp ranks, expert weights over tp*cp*dp/(etp*ep).
// Data-parallel collectives of the first rank (dense weights over dp*cp
// ranks, expert weights over tp*cp*dp/(etp*ep)), the tied-embedding all-reduce and the
// optimizer step: they depend on the layout (and grad_fp32), not on the
// pipeline phase, so pass_setup computes them once.
// torch.optim's foreach AdamW (torch/optim/adam.py _multi_tensor_adam,
// decoupled weight decay) makes eight passes over fp32 tensors where the
// fused kernel makes one: params *= 1 - lr * wd (read 4, write 4 bytes),
// lerp_ of m towards the gradient (8, 4), v *= beta2 (4, 4), addcmul_ of the
// squared gradient (8, 4), sqrt(v) into a temporary (4, 4), its division by
// the bias correction (4, 4) and + eps (4, 4), addcdiv_ into the params
// (12, 4): 80 bytes per parameter, against the fused pass's 28 (read param,
// grad, m, v; write param, m, v). 52 more. On one H200 the two took 22.14 and
// 8.97 ms per 1e9 parameters (shared/reference/h200/components/other.csv):
// 2.47x, the bytes' 80 / 28 = 2.86x at the fused kernel's lower bandwidth.
constexpr double kForeachAdamExtraBytesPerParam = 80 - 28;

double optimizer_extra_bytes(const Job& job) {
    return job.training.optimizer_kernel == OptimizerKernel::foreach ? kForeachAdamExtraBytesPerParam : 0.0;
}

// torch.optim's AdamW on a GPU (framework hf) runs through multi_tensor_apply
// (PyTorch 2.11 aten/src/ATen/native/cuda/MultiTensorApply.cuh): a launch
// takes chunks of kChunkSize = 65,536 elements of the tensor list, at most
// depth_to_max_blocks = 320 of them and depth_to_max_tensors[depth - 1]
// tensors (110, 64, 48, 36, 30 for depth 1-5). A tensor's last chunk is
// partly filled: half a chunk a tensor. Fused AdamW (_fused_adamw_: params,
// grads, m, v) is one pass at depth 4; foreach AdamW the eight passes above,
// at depths 1 (mul_), 2 (lerp_), 1, 3 (addcmul_), 2 (sqrt), 1, 1, 3
// (addcdiv_). Launches a step on the shared H200 traces
// (`python3 scripts/eager_kernel_classes.py TRACE`): 60 fused (Llama-3.2-1B
// shape, 1.24 B parameters in 146 tensors), 480 foreach (the same under
// FSDP2), 1,232 foreach (3B, 3.21 B in 254), 24 fused (Qwen2.5-0.5B shape);
// this count gives each.
double hf_optimizer_launches(const Job& job, double params, double tensors) {
    constexpr double kChunk = 65536, kMaxBlocks = 320;
    constexpr int kMaxTensors[5] = {110, 64, 48, 36, 30};
    const auto pass = [&](int depth) {
        const double chunks = params / kChunk + tensors / 2;
        return std::max(std::ceil(chunks / kMaxBlocks), std::ceil(tensors / kMaxTensors[depth - 1]));
    };
    if (job.training.optimizer_kernel != OptimizerKernel::foreach) return pass(4);
    double n = 0;
    for (const int depth : {1, 2, 1, 3, 2, 1, 1, 3}) n += pass(depth);
    return n;
}

DpComm dp_comm(const Job& job, const Calibration& cal, const PlanContext& ctx, const StageParams& sp0,
               const StageParams& last, const HeadWork& hw) {
    const ParallelPlan& p = job.plan;
    const double gb = grad_bytes_per_param(p, job.training.precision);
    // Time of `op` over the dense group and the expert group for `bytes_per_param`.
    const auto t = [&](Collective op, double bytes_per_param, double dense, double expert) {
        return collective_time_s(ctx.comm, op, ctx.dp_group, dense * bytes_per_param) +
               collective_time_s(ctx.comm, op, ctx.edp_group, expert * bytes_per_param);
    };
    DpComm d;
    d.all_reduce_s = t(Collective::all_reduce, gb, sp0.params, sp0.expert_params);
    d.reduce_scatter_s = t(Collective::reduce_scatter, gb, sp0.params, sp0.expert_params);
    d.all_gather_s = t(Collective::all_gather, tensor_bytes(job.training.precision), sp0.params, sp0.expert_params);
    if (job.model.tied_embeddings && p.pp > 1)
        d.tied_embedding_s = collective_time_s(ctx.comm, Collective::all_reduce, ctx.embedding_group,
                                               hw.embedding_params * gb);
    // The optimizer step of the rank with the largest shard (first or last),
    // unsharded (zero 0) and sharded (zero >= 1).
    ParallelPlan q = p;
    for (int sharded = 0; sharded <= 1; ++sharded) {
        q.zero = sharded;
        const double opt_params = std::max(optimizer_shard_params(q, sp0), optimizer_shard_params(q, last));
        d.optimizer_s[sharded] = opt_params * (cal.optimizer_bytes_per_param + optimizer_extra_bytes(job)) /
                                     (ctx.dev.hbm_Bps * ctx.dev.memory_bound) +
                                 8 * ctx.dev.kernel_overhead_s;
        // Of it, the GPU's gaps between the step's kernels, which a profiler
        // shows as idle: framework hf, each launch's measured gap
        // (calibration hf_kernel_gap_us, whatever the layers' precision;
        // none where one program runs the step, a TPU's), which the
        // component rate, a whole optimizer.step timed, holds; other stacks
        // the eight kernels' fitted overhead.
        const bool hf = job.training.framework == Framework::hf;
        const double gaps_s =
            hf ? (ctx.dev.kernel_overhead_s > 0 ? cal.hf_kernel_gap_us * 1e-6 : 0.0) *
                     hf_optimizer_launches(job, opt_params, hf_param_tensors(job.model))
               : 8 * ctx.dev.kernel_overhead_s;
        d.optimizer_overhead_s[sharded] = std::min(d.optimizer_s[sharded], gaps_s);
    }
    return d;
}

// Exposed data-parallel time after overlap with the compute window.
double dp_exposed_s(const Job& job, const Calibration& cal, const PassSetup& s, double bwd_window_s,
                    double fwd_window_s, double layer_fwd_s, double layer_bwd_s, double m) {
    const ParallelPlan& p = job.plan;
    const double overlap = p.overlap_grad_reduce ? cal.dp_overlap : 0.0;
    // Traffic hidden behind a compute window still slows that compute
    // (overlap_slowdown); the rest is exposed. The window: the rank's last
    // backward (first forward) of one micro-batch, or chunk by chunk under
    // Megatron-Core's interleaved schedule (estimate/dp_overlap.h).
    const auto exposed = [&](double comm_s, double rank_pass_s) {
        const DpExposure e = dp_exposure(comm_s, dp_window(job, rank_pass_s, m), overlap);
        return e.exposed_s + e.hidden_s * cal.overlap_slowdown;
    };
    // Per layer and bucket, behind each layer's compute (estimate/zero3_time.cpp).
    if (p.zero >= 3) return zero3_exposed_s(job, cal, s.zero3, s.first_stage, layer_fwd_s, layer_bwd_s, m);
    if (p.zero == 0) return exposed(s.dp.all_reduce_s, bwd_window_s);
    return exposed(s.dp.reduce_scatter_s, bwd_window_s) + exposed(s.dp.all_gather_s, fwd_window_s);
}

// The layer-count-weighted mean of the kinds' times (the mean layer of a
// stack of several kinds), from each kind's times as they stand.
void set_mean_layer_time(const Model& m, PassSetup& s) {
    s.layer = s.layer_plain = LayerTime{};
    for (size_t k = 0; k < s.kind_time.size(); ++k) {
        const double share = static_cast<double>(m.kind_count(static_cast<int>(k))) / m.layers;
        const KindTime& t = s.kind_time[k];
        s.layer.fwd += t.layer.fwd.scaled(share);
        s.layer.bwd += t.layer.bwd.scaled(share);
        s.layer_plain.fwd += t.layer_plain.fwd.scaled(share);
        s.layer_plain.bwd += t.layer_plain.bwd.scaled(share);
    }
}

// The plan without recompute: what full recompute leaves alone.
ParallelPlan plain_plan(const ParallelPlan& p) {
    ParallelPlan q = p;
    q.recompute = Recompute::none;
    return q;
}

// Each kind's work, host operators and times; for a uniform model its one
// layer in lw / layer, for several kinds also their mean there.
void set_layers(const Job& job, const ParallelPlan& p, PassSetup& s) {
    const Model& m = job.model;
    s.ho = host_ops(m, m.kind(0), job.training, p);
    s.kind_work.clear();
    s.kind_time.clear();
    if (m.uniform()) {
        s.lw = layer_work(m, m.kind(0), job.training, p);
        s.layer = layer_time(s.ctx, s.lw, s.ho, p);
        // Layers that full recompute leaves alone (parallel.recompute_layers).
        if (p.recompute == Recompute::full) s.layer_plain = layer_time(s.ctx, s.lw, s.ho, plain_plan(p));
        return;
    }
    const ParallelPlan p_plain = plain_plan(p);
    s.ho.layer_fwd = s.ho.layer_bwd = s.ho.layer_bwd_py = s.ho.checkpoint_py = 0;
    stack_work(m, job.training, p, s.kind_work);
    for (size_t k = 0; k < m.kinds().size(); ++k) {
        const double share = static_cast<double>(m.kind_count(static_cast<int>(k))) / m.layers;
        KindTime t;
        t.ho = host_ops(m, m.kinds()[k], job.training, p);
        t.layer = layer_time(s.ctx, s.kind_work[k], t.ho, p);
        if (p.recompute == Recompute::full) t.layer_plain = layer_time(s.ctx, s.kind_work[k], t.ho, p_plain);
        s.ho.layer_fwd += share * t.ho.layer_fwd;
        s.ho.layer_bwd += share * t.ho.layer_bwd;
        s.ho.layer_bwd_py += share * t.ho.layer_bwd_py;
        s.ho.checkpoint_py += share * t.ho.checkpoint_py;
        s.kind_time.push_back(t);
    }
    s.lw = mean_layer_work(m, s.kind_work);
    set_mean_layer_time(m, s);
}

// One MTP module: a layer of the last layer's kind and an output layer.
void set_mtp_time(const Job& job, PassSetup& s) {
    if (job.model.mtp_layers == 0) return;
    const LayerTime& last = s.kind_time.empty() ? s.layer : s.kind_time[job.model.stack->kind_of.back()].layer;
    s.mtp = last;
    s.mtp.fwd += s.head.fwd;
    s.mtp.bwd += s.head.bwd;
    s.mtp.wgrad_s += s.head.wgrad_s;
}

// The first layer's wait for a host with no lead (PassSetup::first_lead_wait_s).
void set_first_lead(const Model& m, PassSetup& s) {
    const LayerTime& first = s.kind_time.empty() ? s.layer : s.kind_time[m.stack->kind_of.front()].layer;
    s.first_lead_wait_s = first.lead_wait_s();
}

}  // namespace

namespace {

// The setup of job.plan in `s`, whose context is set.
void fill_setup(const Job& job, const PassSetup* same_layout, PassSetup& s) {
    const ParallelPlan& p = job.plan;
    const PlanContext& ctx = s.ctx;
    set_layers(job, p, s);
    set_first_lead(job.model, s);
    s.hw = head_work(job.model, job.training, p);
    s.head = head_time(s.ctx, s.hw, s.ho, p);
    s.embed = embedding_time(s.ctx, s.hw, s.ho);
    set_mtp_time(job, s);
    if (same_layout != nullptr) {
        s.first_stage = same_layout->first_stage;
        s.last_stage = same_layout->last_stage;
    } else {
        s.first_stage = stage_params(job, works(s), s.hw, 0);
        s.last_stage = stage_params(job, works(s), s.hw, p.pp - 1);
    }
    if (same_layout != nullptr && same_layout->lw.params == s.lw.params &&
        same_layout->grad_fp32 == p.grad_fp32) {
        s.dp = same_layout->dp;
    } else {
        s.dp = dp_comm(job, *ctx.comm.cal, ctx, s.first_stage, s.last_stage, s.hw);
    }
    if (p.zero >= 3) s.zero3 = zero3_comm(job, s.ctx, s.lw, s.first_stage);
    s.grad_fp32 = p.grad_fp32;
}

}  // namespace

PassSetup pass_setup(const Job& job, const Calibration& cal) {
    PassSetup s;
    set_plan_context(job, cal, s.ctx);  // built in place, not copied
    fill_setup(job, nullptr, s);
    return s;
}

PassSetup pass_setup(const Job& job, const PlanContext& ctx, const PassSetup* same_layout) {
    PassSetup s;
    s.ctx = ctx;
    fill_setup(job, same_layout, s);
    return s;
}

PassSetup pass_setup_other_zero(const Job& job, const PassSetup& sibling) {
    const ParallelPlan& p = job.plan;
    PassSetup s = sibling;
    const ParallelPlan p_plain = plain_plan(p);
    const Model& m = job.model;
    s.ho = host_ops(m, m.kind(0), job.training, p);
    if (m.uniform()) {
        set_layer_host_time(s.layer, s.ctx, s.ho, p);
        if (p.recompute == Recompute::full) set_layer_host_time(s.layer_plain, s.ctx, s.ho, p_plain);
    } else {
        s.ho.layer_fwd = s.ho.layer_bwd = s.ho.layer_bwd_py = s.ho.checkpoint_py = 0;
        for (size_t k = 0; k < s.kind_time.size(); ++k) {
            const double share = static_cast<double>(m.kind_count(static_cast<int>(k))) / m.layers;
            KindTime& t = s.kind_time[k];
            t.ho = host_ops(m, m.kinds()[k], job.training, p);
            set_layer_host_time(t.layer, s.ctx, t.ho, p);
            if (p.recompute == Recompute::full) set_layer_host_time(t.layer_plain, s.ctx, t.ho, p_plain);
            s.ho.layer_fwd += share * t.ho.layer_fwd;
            s.ho.layer_bwd += share * t.ho.layer_bwd;
            s.ho.layer_bwd_py += share * t.ho.layer_bwd_py;
            s.ho.checkpoint_py += share * t.ho.checkpoint_py;
        }
        set_mean_layer_time(m, s);
    }
    set_first_lead(m, s);
    set_head_host_time(s.head, s.ctx, s.ho);
    set_embedding_host_time(s.embed, s.ctx, s.ho);
    set_mtp_time(job, s);
    s.zero3 = p.zero >= 3 ? zero3_comm(job, s.ctx, s.lw, s.first_stage) : Zero3Comm{};
    return s;
}

void finish_breakdown(const Job& job, const Calibration& cal, const PassSetup& s, const PipelinePhase& ph,
                      Breakdown& bd) {
    const Model& model = job.model;
    const ParallelPlan& p = job.plan;
    const LayerTime& layer = s.layer;
    const LayerTime& layer_plain = s.layer_plain;
    const double m = static_cast<double>(ph.micro_batches);
    bd = ph.breakdown;

    // Data parallel and optimizer on the first rank (most parameters with the
    // embedding; it also finishes the pipeline last): s.dp.
    // A layer's wall time (the host may set it) is the window ZeRO-3 gathers
    // hide in; with partial recompute, the mean over recomputed and plain layers.
    const double share = p.recompute == Recompute::full ? ph.recomputed_layers / model.layers : 1.0;
    const double bwd_layer_s = share * std::max(layer.bwd.total_s(), layer.bwd.cpu_s) +
                               (1 - share) * std::max(layer_plain.bwd.total_s(), layer_plain.bwd.cpu_s);
    bd.dp_comm_s = dp_exposed_s(job, cal, s, ph.first_rank_bwd_s, ph.first_rank_fwd_s,
                                std::max(layer.fwd.total_s(), layer.fwd.cpu_s), bwd_layer_s, m);
    if (model.tied_embeddings && p.pp > 1) bd.dp_comm_s += s.dp.tied_embedding_s;
    bd.optimizer_s = s.dp.optimizer_s[p.zero == 0 ? 0 : 1];
    // Last: the loader's stall depends on the rest of the step (the phase's is 0).
    bd.data_loader_s = data_loader_stall_s(job.training, p, bd.total_s());
}

void finish_time(const Job& job, const Calibration& cal, const PassSetup& s, const PipelinePhase& ph,
                 Estimate& e) {
    const Training& tr = job.training;
    e.micro_batches = ph.micro_batches;
    Breakdown& bd = e.breakdown;
    finish_breakdown(job, cal, s, ph, bd);
    e.recompute_memory_bound_s = ph.recompute_memory_bound_s;
    e.recompute_overhead_s = ph.recompute_overhead_s;
    e.optimizer_overhead_s = s.dp.optimizer_overhead_s[job.plan.zero == 0 ? 0 : 1];
    e.step_time_s = bd.total_s();
    e.tokens_per_step = static_cast<double>(tr.global_batch) * tr.seq_length;
    const double gpus = job.cluster.num_gpus;
    e.tokens_per_s_per_gpu = e.tokens_per_step / e.step_time_s / gpus;
    const FlopsPerToken& fpt = ph.flops;
    e.model_flops_per_step = fpt.model * e.tokens_per_step;
    e.hardware_flops_per_step = fpt.hardware * e.tokens_per_step;
    e.model_tflops_per_gpu = e.model_flops_per_step / e.step_time_s / gpus / 1e12;
    e.hardware_tflops_per_gpu = e.hardware_flops_per_step / e.step_time_s / gpus / 1e12;
    const double peak = job.cluster.gpu.peak_tflops(tr.precision);
    e.mfu = e.model_tflops_per_gpu / peak;
    e.hfu = e.hardware_tflops_per_gpu / peak;
    e.bubble_fraction = bd.pp_bubble_s / e.step_time_s;
}

Estimate estimate(const Job& job, const Calibration& cal, ScheduleModel schedule) {
    Estimate e;
    const PassSetup s = pass_setup(job, cal);
    finish_time(job, cal, s, pipeline_phase(job, s, schedule), e);
    // The peak over every pipeline rank: the ranks that can hold it
    // (memory.h peak_candidate_ranks), the lowest of equal ones.
    // The first and last ranks' parameters are the setup's (stage_memory's sum).
    static thread_local std::vector<int> ranks;
    ranks.resize(static_cast<size_t>(job.plan.pp));
    const int n = peak_candidate_ranks(job, ranks.data());
    for (int i = 0; i < n; ++i) {
        const int rank = ranks[static_cast<size_t>(i)];
        const StageParams sp = rank == 0                  ? s.first_stage
                               : rank == job.plan.pp - 1 ? s.last_stage
                                                         : stage_params(job, works(s), s.hw, rank);
        Memory act;
        const ActParts parts = memory_activations(job, works(s), s.hw, sp, inflight_passes(job, rank), rank, &act);
        const Memory mem = memory_total(memory_state(job, cal, s.lw, sp), parts, act);
        if (i == 0 || mem.peak_bytes > e.memory.peak_bytes) e.memory = mem;
    }
    name_moment(job, e.memory);
    const ParamCount pc = count_params(job.model);
    e.params_total = pc.total;
    e.params_active = pc.active;
    e.params_embedding = pc.embedding;
    e.params_output = pc.output;
    e.params_mtp = pc.mtp;
    return e;
}

}  // namespace lostflops
