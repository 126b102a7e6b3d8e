// Per-(rank, chunk) pass times of a job: the pass rule of estimate.cpp's
// pipeline_phase (layers * per-layer time, embedding and output layer on the
// first and last virtual stage, the schedule's host operators, the host bound
// per pass with a pipeline and over forward + backward without one), applied
// to every pass instead of the estimate's two cached layer counts. Tests hold
// the resulting pipeline phase against estimate() with the simulation.
#include "explain/pass_model.h"

#include <algorithm>

#include "estimate/memory.h"

namespace lostflops {

double p2p_transfer_s(const Job& job, const PlanContext& ctx) {
    if (job.plan.pp == 1) return 0;
    const ParallelPlan& p = job.plan;
    const double tokens = static_cast<double>(job.training.micro_batch) * job.training.seq_length / p.cp;
    const double bytes = tokens * job.model.hidden * 2.0 / p.tp;  // 16-bit activations, scattered over TP
    const Link& link = ctx.pp_link.nodes > 1 ? ctx.comm.inter : ctx.comm.intra;
    return link.latency_us * 1e-6 + bytes / (link.bandwidth_GBps * 1e9 * ctx.comm.cal->p2p_eff);
}

double attention_layer_s(const PassSetup& s) {
    const LayerWork& w = s.lw;
    const DeviceModel& d = s.ctx.dev;
    if (w.unfused) {
        const double fwd = gemm_time_s(d, w.scores.m, w.scores.n, w.scores.k) +
                           gemm_time_s(d, w.values.m, w.values.n, w.values.k);
        return 3 * fwd;  // backward = 2x forward (stage_time.cpp)
    }
    return flash_attention_fwd_s(d, w.attention_flops_fwd) + flash_attention_bwd_s(d, w.attention_flops_fwd);
}

JobPasses job_passes(const Job& job, const Calibration& cal) {
    JobPasses jp;
    jp.setup = pass_setup(job, cal);
    const PassSetup& s = jp.setup;
    const ParallelPlan& p = job.plan;
    const int stages = p.pp, chunks = p.vpp;
    jp.micro_batches = p.micro_batches(job.training);
    const size_t n = static_cast<size_t>(stages) * chunks;
    jp.fwd.assign(n, PassTime{});
    jp.bwd.assign(n, PassTime{});
    jp.layers.assign(n, 0);
    jp.input.stages = stages;
    jp.input.chunks = chunks;
    jp.input.micro_batches = static_cast<int>(jp.micro_batches);
    jp.input.fwd_s.assign(n, 0.0);
    jp.input.bwd_s.assign(n, 0.0);
    jp.input.p2p_s = p2p_transfer_s(job, s.ctx);
    double worst = -1;
    for (int r = 0; r < stages; ++r) {
        PassTime rank_total;
        for (int c = 0; c < chunks; ++c) {
            const size_t i = static_cast<size_t>(r) * chunks + c;
            const int layers = layers_on(job, r, c);
            const int redone = p.recompute == Recompute::full ? recomputed_of(p, layers) : layers;
            PassTime f = s.layer.fwd.scaled(layers);
            PassTime b = s.layer.bwd.scaled(redone);
            if (redone < layers) b += s.layer_plain.bwd.scaled(layers - redone);
            if (r == 0 && c == 0) {
                f += s.embed.fwd;
                b += s.embed.bwd;
            }
            if (r == stages - 1 && c == chunks - 1) {
                f += s.head.fwd;
                b += s.head.bwd;
            }
            f.cpu_s += s.ho.microbatch_fwd * s.ctx.host_op_s;
            b.cpu_s += s.ho.microbatch_bwd * s.ctx.host_op_s;
            if (stages > 1) {
                f.bind_host();
                b.bind_host();
            } else {
                b.host_wait_s = std::max(0.0, f.cpu_s + b.cpu_s - f.gpu_s() - b.gpu_s());
            }
            jp.fwd[i] = f;
            jp.bwd[i] = b;
            jp.layers[i] = layers;
            jp.input.fwd_s[i] = f.total_s();
            jp.input.bwd_s[i] = b.total_s();
            rank_total += f;
            rank_total += b;
        }
        if (rank_total.total_s() > worst) {
            worst = rank_total.total_s();
            jp.worst_rank = r;
        }
    }
    return jp;
}

}  // namespace lostflops
