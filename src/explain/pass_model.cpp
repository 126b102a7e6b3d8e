// Per-(rank, chunk) pass times of a job: estimate's pass rule
// (estimate_parts.h stage_pass) applied to every pass. Tests hold the
// resulting pipeline phase against estimate() with the simulation.
#include "explain/pass_model.h"

#include <algorithm>

#include "lostflops/pipeline_schedules.h"


namespace lostflops {

double attention_layer_s(const PassSetup& s) {
    const LayerWork& w = s.lw;
    const DeviceModel& d = s.ctx.dev;
    if (w.unfused) {
        const double fwd = gemm_time_s(d, w.scores.m, w.scores.n, w.scores.k) +
                           gemm_time_s(d, w.values.m, w.values.n, w.values.k);
        return 3 * fwd;  // backward = 2x forward (stage_time.cpp)
    }
    return flash_attention_fwd_s(d, w.attention_flops_fwd, w.attention_masked_flops_fwd) +
           flash_attention_bwd_s(d, w.attention_flops_fwd, w.attention_masked_flops_fwd);
}

JobPasses job_passes(const Job& job, const Calibration& cal) {
    JobPasses jp;
    jp.setup = pass_setup(job, cal);
    const PassSetup& s = jp.setup;
    const ParallelPlan& p = job.plan;
    const int stages = p.pp, chunks = rank_chunks(p);
    const bool family = schedule_info(effective_schedule(p)).order == ScheduleOrder::megatron_1f1b;
    jp.micro_batches = p.micro_batches(job.training);
    const size_t n = static_cast<size_t>(stages) * chunks;
    jp.fwd.assign(n, PassTime{});
    jp.bwd.assign(n, PassTime{});
    jp.layers.assign(n, 0);
    jp.input.schedule = effective_schedule(p);
    jp.input.stages = stages;
    jp.input.chunks = chunks;
    jp.input.micro_batches = static_cast<int>(jp.micro_batches);
    jp.input.fwd_s.assign(n, 0.0);
    jp.input.bwd_s.assign(n, 0.0);
    jp.input.wgrad_s.clear();
    jp.input.fwd_comm_s.clear();
    jp.input.bwd_comm_s.clear();
    if (!family) {
        jp.input.wgrad_s.assign(n, 0.0);
        jp.input.fwd_comm_s.assign(n, 0.0);
        jp.input.bwd_comm_s.assign(n, 0.0);
    }
    jp.input.p2p_s = p2p_time_s(s.ctx, job);
    double worst = -1;
    for (int r = 0; r < stages; ++r) {
        PassTime rank_total;
        for (int c = 0; c < chunks; ++c) {
            const size_t i = static_cast<size_t>(r) * chunks + c;
            const LayoutPosition lp = layout_position(p, r, c);  // the schedule's stage mapping
            const StagePass sp = stage_pass(job, s, lp.rank, lp.chunk);
            const PassTime& f = sp.f;
            const PassTime& b = sp.b;
            const int layers = sp.layers;
            jp.fwd[i] = f;
            jp.bwd[i] = b;
            jp.layers[i] = layers;
            jp.input.fwd_s[i] = f.total_s();
            jp.input.bwd_s[i] = b.total_s();
            if (!family) {  // as estimate's pipeline phase gives them (estimate/pipeline_phase.cpp)
                jp.input.wgrad_s[i] = std::min(b.total_s(), sp.wgrad_s);
                jp.input.fwd_comm_s[i] = f.ep_comm_s;
                jp.input.bwd_comm_s[i] = b.ep_comm_s;
            }
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
