// The pipeline phase of the estimate (estimate_parts.h): every (rank, chunk)
// pass of one micro-batch by the pass rule (stage_pass.cpp), through the
// 1F1B / interleaved closed form (schedule/pipeline_closed_form.cpp; the
// other schedules of lostflops/pipeline_schedules.h through
// schedule/schedule_closed_form.cpp) or the discrete-event simulation. A
// uniform model on the default split takes the closed form's fast path
// (estimate/phase_passes.h uniform_passes): a pass away from the embedding
// and the output layer depends only on its layer count, which takes two
// values, so a phase costs O(pp), not O(pp * vpp); otherwise each pass is
// placed (every_pass), its distinct passes timed once each (StagePassMemo),
// O(pp * vpp * kinds).
// The steady state is charged to the slowest rank's causes, the rest of the
// makespan to the bubble, the transfers' share to p2p (finish_phase).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "estimate/estimate_parts.h"
#include "estimate/phase_passes.h"
#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"
#include "schedule/pipeline_detail.h"
#include "job/stage_layout.h"

namespace lostflops {

namespace {

using phase::PhaseBuffers;
using phase::PhaseMode;
using phase::PhasePasses;
using phase::ScheduleExtras;
using phase::plausible;

// Uneven interleaving is simulated up to this many (rank, chunk, micro-batch)
// passes per direction (4e4 operations, a fraction of a millisecond) and this
// many chunks per rank (Megatron-LM runs any vpp; the published runs of
// data/published/ and ../shared/reference/modern/ use up to 20): the bounds that keep a search of 10,000 layers (the most a model
// has, job/hardware_bounds.h), which has a layout for every vpp up to 1,250, in seconds (WorkBounds.*, Search.PlansPerLayout*).
// Past them the closed form stands in.
constexpr double kSimulatedPassesMax = 2e4;
constexpr int kSimulatedChunksMax = 32;

PhaseMode phase_mode(const Job& job, const PassSetup& s, ScheduleModel schedule) {
    const ParallelPlan& p = job.plan;
    PhaseMode m;
    m.sched = effective_schedule(p);
    m.family = schedule_info(m.sched).order == ScheduleOrder::megatron_1f1b;
    m.dual = schedule_info(m.sched).order == ScheduleOrder::dual_pipe;
    m.hide_share = 1.0 - s.ctx.moe_overlap_slowdown;
    // DualPipe's closed form (the DeepSeek-V3 formula) is exact only when F =
    // B = W and nothing is hidden (tests/schedule/schedule_test.cpp); off that
    // point it is 4-50 % off the simulation's bubble, so the estimate (and the
    // search, through this function) simulates dualpipe and dualpipev: O(p m).
    m.screen = schedule == ScheduleModel::screen;
    // ZB-V's closed form is exact only for uniform stages, B >= F, W <= B and
    // m >= 2p - 1 (schedule_closed_form.cpp): simulated too.
    const bool simulated = m.dual || schedule_info(m.sched).order == ScheduleOrder::zero_bubble_v;
    m.model = simulated ? ScheduleModel::simulation : m.screen ? ScheduleModel::closed_form : schedule;
    m.chunks = rank_chunks(p);
    // Interleaving whose chunks on some rank hold different layer counts: the
    // default split with layers % (pp * vpp) != 0 (base and base + 1 layers,
    // UniformSplit), or a layout that says so.
    m.uneven = m.family && rank_chunks_uneven(job, m.chunks);
    m.simulate = m.model == ScheduleModel::simulation;
    return m;
}

// Whether some rank's chunks that hold neither the embedding, the output
// layer nor an MTP module take different forward or backward times (beyond
// rounding): where the closed form, which takes a rank's chunks after its
// first as alike, is not exact. `in` holds every pass (every_pass under
// PhaseMode::simulate).
bool chunk_times_differ(const Job& job, const PipelineInput& in) {
    const int n = in.chunks;
    const auto differs = [](double a, double b) { return std::abs(a - b) > 1e-9 * std::max(a, b); };
    for (int r = 0; r < in.stages; ++r) {
        int first = -1;
        for (int c = 0; c < n; ++c) {
            const VirtualStage vs = virtual_stage(job, r, c);
            if (vs.embedding || vs.loss || vs.mtp > 0) continue;
            const size_t at = static_cast<size_t>(r * n + c);
            if (first < 0) {
                first = static_cast<int>(at);
                continue;
            }
            const size_t f = static_cast<size_t>(first);
            if (differs(in.fwd_s[at], in.fwd_s[f]) || differs(in.bwd_s[at], in.bwd_s[f])) return true;
        }
    }
    return false;
}

// The schedule's input sized for this phase; the simulation's per-pass
// vectors zeroed, the closed form's per-rank sums sized (every entry is
// written by the passes).
void prepare_input(const Job& job, const PhaseMode& mode, int64_t micro_batches, PhaseBuffers& b) {
    const int stages = job.plan.pp;
    PipelineInput& in = b.in;
    in.p2p_s = 0;
    in.schedule = mode.sched;
    in.stages = stages;
    in.chunks = mode.chunks;
    in.wgrad_s.clear();
    in.fwd_comm_s.clear();
    in.bwd_comm_s.clear();
    in.micro_batches = static_cast<int>(micro_batches);
    if (mode.simulate) {
        const size_t passes = static_cast<size_t>(stages * mode.chunks);
        in.fwd_s.assign(passes, 0.0);
        in.bwd_s.assign(passes, 0.0);
        if (!mode.family) {
            in.wgrad_s.assign(passes, 0.0);
            in.fwd_comm_s.assign(passes, 0.0);
            in.bwd_comm_s.assign(passes, 0.0);
        }
    }
    b.rank_s.resize(static_cast<size_t>(stages));
    b.chunk0_s.resize(static_cast<size_t>(stages));
}

// The schedule over the passes (closed form or simulation, without and with
// the p2p transfers) and the phase's breakdown: the steady state charged to
// the slowest rank's causes, the rest to the bubble.
void finish_phase(const Job& job, const PassSetup& s, const PhaseMode& mode, PhaseBuffers& buf,
                  const PhasePasses& passes, PipelinePhase& ph) {
    const ParallelPlan& p = job.plan;
    PipelineInput& in = buf.in;
    const double m = static_cast<double>(ph.micro_batches);
    const double p2p_s = p2p_time_s(s.ctx, job);
    PipelineResult no_p2p, with_p2p;
    if (!passes.values_ok)  // a programming error: validated jobs give finite, non-negative passes
        throw std::invalid_argument("pipeline pass time is negative or not finite");
    ph.bound = mode.uneven && mode.screen;
    if (ph.bound) {
        PipelineSums sums{p.pp, in.chunks, in.micro_batches, 0.0, buf.rank_s.data(), buf.chunk0_s.data()};
        no_p2p.makespan_s = pipeline_lower_bound_s(sums);
        sums.p2p_s = p2p_s;
        with_p2p.makespan_s = pipeline_lower_bound_s(sums);
    } else if (mode.simulate) {
        no_p2p = pipeline_simulate(in);
        in.p2p_s = p2p_s;
        with_p2p = pipeline_simulate(in);
    } else {
        const ScheduleExtras& extra = passes.extra;
        PipelineSums sums{p.pp, in.chunks, in.micro_batches, 0.0, buf.rank_s.data(), buf.chunk0_s.data()};
        sums.schedule = in.schedule;
        sums.fwd_mean_s = extra.fwd_mean_s;
        sums.wgrad_mean_s = extra.wgrad_mean_s;
        sums.saved_s = extra.saved_s;
        const PipelineScan scan = pipeline_scan(sums);
        no_p2p = pipeline_closed_form_scanned(sums, scan);
        sums.p2p_s = p2p_s;
        with_p2p = p2p_s == 0 ? no_p2p : pipeline_closed_form_scanned(sums, scan);
    }

    Breakdown& bd = ph.breakdown;
    // Each chunk runs m micro-batches; dualpipe's two directions m/2 each.
    PassTime steady = passes.rank_pass_worst.scaled(schedule_info(in.schedule).two_directions ? m / 2 : m);
    steady.ep_comm_s = std::max(0.0, steady.ep_comm_s - passes.extra.hidden_s);
    bd.compute_s = steady.compute_s;
    bd.memory_bound_s = steady.memory_bound_s;
    bd.recompute_s = steady.recompute_s;
    ph.recompute_memory_bound_s = steady.recompute_memory_bound_s;
    ph.recompute_overhead_s = steady.recompute_overhead_s;
    bd.overhead_s = steady.overhead_s;
    bd.host_s = steady.host_wait_s + steady.sync_s;
    bd.tp_comm_s = steady.tp_comm_s;
    bd.cp_comm_s = steady.cp_comm_s;
    bd.ep_comm_s = steady.ep_comm_s;
    bd.pp_bubble_s = std::max(0.0, no_p2p.makespan_s - steady.total_s());
    if (bd.pp_bubble_s < 1e-12 * no_p2p.makespan_s) bd.pp_bubble_s = 0;  // rounding, not a bubble
    bd.pp_p2p_s = std::max(0.0, with_p2p.makespan_s - no_p2p.makespan_s);
    ph.flops = flops_per_token(job.model, job.training, p.recompute, ph.recomputed_layers / job.model.layers,
                               moe_kept_share(p));
}

}  // namespace

PipelinePhase pipeline_phase(const Job& job, const PassSetup& s, ScheduleModel schedule) {
    const ParallelPlan& p = job.plan;
    PipelinePhase ph;
    ph.micro_batches = p.micro_batches(job.training);
    PhaseMode mode = phase_mode(job, s, schedule);
    const bool uniform = s.kind_time.empty() && default_split(p) && job.model.mtp_layers == 0 && mode.family;
    // The simulation costs O(pp x vpp x m): within kSimulatedPassesMax (a 405B
    // plan of pp 16 x vpp 8 x m 128: 16,384) and kSimulatedChunksMax.
    const bool simulable = mode.chunks <= kSimulatedChunksMax &&
                           static_cast<double>(p.pp) * mode.chunks * static_cast<double>(ph.micro_batches) <=
                               kSimulatedPassesMax;
    mode.uneven &= simulable;
    // Every pass placed (mixed layer kinds, a layout, MTP): chunks of equal
    // layer counts may still take different times (a hybrid's pattern), so
    // the passes are written for the simulation and their times decide.
    const bool by_times = !uniform && mode.family && mode.chunks > 1 && simulable;
    const bool simulate_asked = mode.simulate;
    if (by_times || (mode.uneven && !mode.screen)) mode.simulate = true;  // the closed form is not exact here
    PhaseBuffers& buf = phase::phase_buffers();
    prepare_input(job, mode, ph.micro_batches, buf);
    const PhasePasses passes = uniform ? phase::uniform_passes(job, s, mode, buf, ph) : phase::every_pass(job, s, mode, buf, ph);
    if (by_times) {
        mode.uneven = mode.uneven || chunk_times_differ(job, buf.in);
        mode.simulate = simulate_asked || (mode.uneven && !mode.screen);
    }
    finish_phase(job, s, mode, buf, passes, ph);
    return ph;
}

}  // namespace lostflops
