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

#include "estimate/memory.h"
#include "estimate/stage_time.h"
#include "estimate/zero3_time.h"
#include "lostflops/pipeline.h"
#include "workload/flops.h"

namespace lostflops {

namespace {

double p2p_time_s(const PlanContext& ctx, const Job& job) {
    if (job.plan.pp == 1) return 0;
    const ParallelPlan& p = job.plan;
    const double tokens = static_cast<double>(job.training.micro_batch) * job.training.seq_length / p.cp;
    // Megatron sends the sequence-parallel shard, or scatters the replicated
    // activation over the TP ranks and gathers it on NVLink (Narayanan et al.
    // 2021, sec. 4.1 "scatter/gather communication optimization").
    const double bytes = tokens * job.model.hidden * 2.0 / p.tp;
    // The slowest boundary sets the pace: any stage boundary across nodes.
    const Link& link = ctx.pp_link.nodes > 1 ? ctx.comm.inter : ctx.comm.intra;
    return link.latency_us * 1e-6 + bytes / (link.bandwidth_GBps * 1e9 * ctx.comm.cal->p2p_eff);
}

// Exposed data-parallel time after overlap with the compute window. Dense
// weights are reduced over dp*cp ranks, expert weights over dp*cp/ep.
double dp_exposed_s(const Job& job, const Calibration& cal, const PlanContext& ctx, const StageParams& sp,
                    const LayerWork& lw, double bwd_window_s, double fwd_window_s, double layer_fwd_s,
                    double layer_bwd_s, double m) {
    const ParallelPlan& p = job.plan;
    const double gb = grad_bytes_per_param(p);
    // Time of `op` over the dense group and the expert group for `bytes_per_param`.
    const auto t = [&](Collective op, double bytes_per_param, double dense, double expert) {
        return collective_time_s(ctx.comm, op, ctx.dp_group, dense * bytes_per_param) +
               collective_time_s(ctx.comm, op, ctx.edp_group, expert * bytes_per_param);
    };
    const double overlap = p.overlap_grad_reduce ? cal.dp_overlap : 0.0;
    // Traffic hidden behind a compute window still slows that compute
    // (overlap_slowdown); the rest is exposed.
    const auto exposed = [&](double comm_s, double window_s) {
        const double hidden = std::min(comm_s, overlap * window_s);
        return comm_s - hidden + hidden * cal.overlap_slowdown;
    };
    // Per layer and bucket, behind each layer's compute (estimate/zero3_time.cpp).
    if (p.zero >= 3) return zero3_exposed_s(job, cal, ctx, lw, sp, layer_fwd_s, layer_bwd_s, m);
    if (p.zero == 0) return exposed(t(Collective::all_reduce, gb, sp.params, sp.expert_params), bwd_window_s);
    return exposed(t(Collective::reduce_scatter, gb, sp.params, sp.expert_params), bwd_window_s) +
           exposed(t(Collective::all_gather, 2, sp.params, sp.expert_params), fwd_window_s);
}

}  // namespace

Estimate estimate(const Job& job, const Calibration& cal, ScheduleModel schedule) {
    const Model& model = job.model;
    const Training& tr = job.training;
    const ParallelPlan& p = job.plan;
    Estimate e;
    const PlanContext ctx = make_plan_context(job, cal);
    const LayerWork lw = layer_work(model, tr, p);
    const HeadWork hw = head_work(model, tr, p);
    const HostOps ho = host_ops(model, tr, p);
    const LayerTime layer = layer_time(ctx, lw, ho, p);
    // Layers that full recompute leaves alone (parallel.recompute_layers).
    LayerTime layer_plain;
    if (p.recompute == Recompute::full && p.recompute_layers >= 0) {
        ParallelPlan p_plain = p;
        p_plain.recompute = Recompute::none;
        layer_plain = layer_time(ctx, lw, ho, p_plain);
    }
    double recomputed_total = 0;
    const LayerTime head = head_time(ctx, hw, ho, p);
    const LayerTime embed = embedding_time(ctx, hw, ho);

    const int stages = p.pp, chunks = p.vpp;
    e.micro_batches = p.micro_batches(tr);
    const double m = static_cast<double>(e.micro_batches);

    // Per (rank, chunk) pass times; the embedding sits on virtual stage 0, the
    // output layer on the last virtual stage.
    // Reused between calls on this thread: no allocation once warm (a search
    // evaluates millions of plans).
    static thread_local PipelineInput in;
    in.p2p_s = 0;
    in.stages = stages;
    in.chunks = chunks;
    in.micro_batches = static_cast<int>(e.micro_batches);
    in.fwd_s.assign(static_cast<size_t>(stages * chunks), 0.0);
    in.bwd_s.assign(static_cast<size_t>(stages * chunks), 0.0);
    PassTime rank_pass_worst;
    double worst_total = -1;
    double first_rank_bwd = 0, first_rank_fwd = 0;
    for (int r = 0; r < stages; ++r) {
        PassTime rank_pass;
        for (int c = 0; c < chunks; ++c) {
            const int n = layers_on(job, r, c);
            const double layers = n;
            // Layers whose backward carries the plan's recompute (all of them
            // unless recompute_layers limits full recompute).
            const double redone = p.recompute == Recompute::full ? recomputed_of(p, n) : layers;
            PassTime f = layer.fwd.scaled(layers);
            PassTime b = layer.bwd.scaled(redone);
            if (redone < layers) b += layer_plain.bwd.scaled(layers - redone);
            recomputed_total += redone;
            if (r == 0 && c == 0) {
                f += embed.fwd;
                b += embed.bwd;
            }
            if (r == stages - 1 && c == chunks - 1) {
                f += head.fwd;
                b += head.bwd;
            }
            // The schedule's own host work per pass, then the GPU waits for
            // whichever of GPU and CPU is slower. Megatron-LM synchronises the
            // device at every pipeline send/receive (p2p_communication.py,
            // torch.cuda.synchronize() after batch_isend_irecv), so with
            // pp > 1 each pass is bound on its own; without a pipeline
            // nothing synchronises between passes and the host runs ahead
            // through a GPU-bound backward into the next forward, so forward
            // and backward are bound together.
            f.cpu_s += ho.microbatch_fwd * ctx.host_op_s;
            b.cpu_s += ho.microbatch_bwd * ctx.host_op_s;
            if (stages > 1) {
                f.bind_host();
                b.bind_host();
            } else {
                b.host_wait_s = std::max(0.0, f.cpu_s + b.cpu_s - f.gpu_s() - b.gpu_s());
            }
            in.fwd_s[static_cast<size_t>(r * chunks + c)] = f.total_s();
            in.bwd_s[static_cast<size_t>(r * chunks + c)] = b.total_s();
            rank_pass += f;
            rank_pass += b;
            if (r == 0) {
                first_rank_fwd += f.total_s();
                first_rank_bwd += b.total_s();
            }
        }
        if (rank_pass.total_s() > worst_total) {
            worst_total = rank_pass.total_s();
            rank_pass_worst = rank_pass;
        }
    }
    const auto pipeline = schedule == ScheduleModel::simulation ? pipeline_simulate : pipeline_closed_form;
    const PipelineResult no_p2p = pipeline(in);
    in.p2p_s = p2p_time_s(ctx, job);
    const PipelineResult with_p2p = pipeline(in);

    Breakdown& bd = e.breakdown;
    const PassTime steady = rank_pass_worst.scaled(m);
    bd.compute_s = steady.compute_s;
    bd.memory_bound_s = steady.memory_bound_s;
    bd.recompute_s = steady.recompute_s;
    bd.overhead_s = steady.overhead_s;
    bd.host_s = steady.host_wait_s;
    bd.tp_comm_s = steady.tp_comm_s;
    bd.cp_comm_s = steady.cp_comm_s;
    bd.ep_comm_s = steady.ep_comm_s;
    bd.pp_bubble_s = std::max(0.0, no_p2p.makespan_s - steady.total_s());
    if (bd.pp_bubble_s < 1e-12 * no_p2p.makespan_s) bd.pp_bubble_s = 0;  // rounding, not a bubble
    bd.pp_p2p_s = std::max(0.0, with_p2p.makespan_s - no_p2p.makespan_s);

    // Data parallel and optimizer on the first rank (most parameters with the
    // embedding; it also finishes the pipeline last).
    const StageParams sp0 = stage_params(job, lw, hw, 0);
    // A layer's wall time (the host may set it) is the window ZeRO-3 gathers
    // hide in; with partial recompute, the mean over recomputed and plain layers.
    const double share = p.recompute == Recompute::full ? recomputed_total / model.layers : 1.0;
    const double bwd_layer_s = share * std::max(layer.bwd.total_s(), layer.bwd.cpu_s) +
                               (1 - share) * std::max(layer_plain.bwd.total_s(), layer_plain.bwd.cpu_s);
    bd.dp_comm_s = dp_exposed_s(job, cal, ctx, sp0, lw, first_rank_bwd, first_rank_fwd,
                                std::max(layer.fwd.total_s(), layer.fwd.cpu_s), bwd_layer_s, m);
    if (model.tied_embeddings && p.pp > 1)
        bd.dp_comm_s += collective_time_s(ctx.comm, Collective::all_reduce, ctx.embedding_group,
                                          hw.embedding_params * grad_bytes_per_param(p));
    // The optimizer step of the rank with the largest shard (first or last).
    const double opt_params = std::max(optimizer_shard_params(p, sp0),
                                       optimizer_shard_params(p, stage_params(job, lw, hw, p.pp - 1)));
    bd.optimizer_s = opt_params * cal.optimizer_bytes_per_param / (ctx.dev.hbm_Bps * ctx.dev.memory_bound) +
                     8 * ctx.dev.kernel_overhead_s;

    e.step_time_s = bd.total_s();
    e.tokens_per_step = static_cast<double>(tr.global_batch) * tr.seq_length;
    const double gpus = job.cluster.num_gpus;
    e.tokens_per_s_per_gpu = e.tokens_per_step / e.step_time_s / gpus;
    const FlopsPerToken fpt = flops_per_token(model, tr, p.recompute, recomputed_total / model.layers);
    e.model_flops_per_step = fpt.model * e.tokens_per_step;
    e.hardware_flops_per_step = fpt.hardware * e.tokens_per_step;
    e.model_tflops_per_gpu = e.model_flops_per_step / e.step_time_s / gpus / 1e12;
    e.hardware_tflops_per_gpu = e.hardware_flops_per_step / e.step_time_s / gpus / 1e12;
    const double peak = job.cluster.gpu.peak_tflops(tr.precision);
    e.mfu = e.model_tflops_per_gpu / peak;
    e.hfu = e.hardware_tflops_per_gpu / peak;
    e.bubble_fraction = bd.pp_bubble_s / e.step_time_s;

    const Memory first = stage_memory(job, cal, lw, hw, 0);
    const Memory last = stage_memory(job, cal, lw, hw, p.pp - 1);
    e.memory = last.peak_bytes > first.peak_bytes ? last : first;
    return e;
}

}  // namespace lostflops
