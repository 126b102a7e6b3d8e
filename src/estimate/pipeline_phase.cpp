// The pipeline phase of the estimate (estimate_parts.h): every (rank, chunk)
// pass of one micro-batch by the pass rule (stage_pass.cpp), through the
// 1F1B / interleaved closed form (schedule/pipeline_closed_form.cpp; the
// other schedules of lostflops/pipeline_schedules.h through
// schedule/schedule_closed_form.cpp) or the discrete-event simulation. A
// uniform model on the default split takes the closed form's fast path
// (uniform_passes): a pass away from the embedding and the output layer
// depends only on its layer count, which takes two values, so a phase costs
// O(pp), not O(pp * vpp); otherwise each pass is placed (every_pass), its
// distinct passes timed once each (StagePassMemo), O(pp * vpp * kinds).
// The steady state is charged to the slowest rank's causes, the rest of the
// makespan to the bubble, the transfers' share to p2p (finish_phase).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "estimate/estimate_parts.h"
#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"
#include "schedule/pipeline_detail.h"
#include "job/stage_layout.h"

namespace lostflops {

namespace {

// Uneven interleaving is simulated up to this many (rank, chunk, micro-batch)
// passes per direction (4e4 operations, a fraction of a millisecond) and this
// many chunks per rank (Megatron-LM runs any vpp; the published runs of
// data/published/ and ../shared/reference/modern/ use up to 20): the bounds that keep a search of 100,000 layers, which has a layout
// for every vpp up to 12,500, in seconds (WorkBounds.*, Search.PlansPerLayout*).
// Past them the closed form stands in.
constexpr double kSimulatedPassesMax = 2e4;
constexpr int kSimulatedChunksMax = 32;

// Reused between calls on this thread: no allocation once warm (a search
// evaluates millions of plans).
struct PhaseBuffers {
    PipelineInput in;
    std::vector<double> rank_s, chunk0_s, saved_s;  // [stages]
    StagePassMemo memo;
};

PhaseBuffers& phase_buffers() {
    static thread_local PhaseBuffers b;
    return b;
}

// How the phase is timed: the schedule, its family, and whether passes go
// through the simulation.
struct PhaseMode {
    PipelineSchedule sched = PipelineSchedule::one_f_one_b;
    bool family = true;    // 1F1B or interleaved
    bool dual = false;     // dualpipe or dualpipev
    bool simulate = false;
    // The search's screen (ScheduleModel::screen): interleaving with uneven
    // chunks gets the makespan's lower bound instead of the simulation.
    bool screen = false;
    // Interleaving on the uniform split with chunks of base and base + 1
    // layers on a rank: the closed form is not exact there (its bubble 4x too
    // small on 126 layers over pp 8 x vpp 9), so the estimate simulates it.
    // Mixed layer kinds and custom layouts (every_pass) keep the closed form:
    // simulating them in the search made the DeepSeek-V3 search run for
    // minutes (docs/model.md).
    bool uneven = false;
    ScheduleModel model = ScheduleModel::closed_form;
    int chunks = 1;        // per rank (rank_chunks)
    // An F&B pair hides the all-to-all but its SMs slow the other pass
    // (PlanContext::moe_overlap_slowdown): a pair saves (1 - slowdown) of the
    // comm it hides, taken as hiding that share of the comm (exact while the
    // other pass's compute covers the comm).
    double hide_share = 1;
};

PhaseMode phase_mode(const Job& job, const PassSetup& s, ScheduleModel schedule) {
    const ParallelPlan& p = job.plan;
    PhaseMode m;
    m.sched = effective_schedule(p);
    m.family = m.sched == PipelineSchedule::one_f_one_b || m.sched == PipelineSchedule::interleaved;
    m.dual = m.sched == PipelineSchedule::dualpipe || m.sched == PipelineSchedule::dualpipev;
    m.hide_share = 1.0 - s.ctx.moe_overlap_slowdown;
    // DualPipe's closed form (the DeepSeek-V3 formula) is exact only when F =
    // B = W and nothing is hidden (tests/schedule/schedule_test.cpp); off that
    // point it is 4-50 % off the simulation's bubble, so the estimate (and the
    // search, through this function) simulates dualpipe and dualpipev: O(p m).
    m.screen = schedule == ScheduleModel::screen;
    m.model = m.dual ? ScheduleModel::simulation : m.screen ? ScheduleModel::closed_form : schedule;
    m.chunks = rank_chunks(p);
    // Interleaving on the uniform split with layers % (pp * vpp) != 0 holds
    // chunks of base and base + 1 layers on some rank (UniformSplit).
    m.uneven = m.family && m.chunks > 1 && job.model.layers % (p.pp * m.chunks) != 0;
    m.simulate = m.model == ScheduleModel::simulation;
    return m;
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

bool plausible(double x) { return x >= 0 && x <= std::numeric_limits<double>::max(); }

// Beyond the 1F1B family (zero-bubble, dualpipe, dualpipev): the means and
// savings the closed form needs (schedule/pipeline_detail.h PipelineSums).
struct ScheduleExtras {
    double fwd_mean_s = 0, wgrad_mean_s = 0;
    const double* saved_s = nullptr;
    double hidden_s = 0;  // the worst rank's F&B savings over the step: hidden expert all-to-all
};

// What the passes give the schedule: the slowest rank's per-micro-batch
// pass (by cause), whether every pass time is finite and non-negative, and
// the extras beyond the 1F1B family.
struct PhasePasses {
    PassTime rank_pass_worst;
    double worst_total = -1;
    bool values_ok = true;
    ScheduleExtras extra;
    void offer_worst(const PassTime& rank_pass) {
        const double total = rank_pass.total_s();
        if (total > worst_total) {
            worst_total = total;
            rank_pass_worst = rank_pass;
        }
    }
};

// A DualPipe rank's F&B pairs hide each pass's expert all-to-all behind the
// other's work (DeepSeek-V3 report sec. 3.2.1): F0 with B1, F1 with B0; the
// mean saving of its two pairings.
double dual_saved_s(const StagePass (&sps)[2], double hide_share) {
    double saved = 0;
    for (int j = 0; j < 2; ++j) {
        const PassTime& f = sps[j].f;
        const PassTime& b = sps[1 - j].b;
        const double fc = std::min(f.ep_comm_s * hide_share, f.total_s()),
                     bc = std::min(b.ep_comm_s * hide_share, b.total_s());
        saved += 0.5 * (std::min(fc, b.total_s() - bc) + std::min(bc, f.total_s() - fc));
    }
    return saved;
}

// Several kinds, a custom layout, MTP modules or a schedule beyond the 1F1B
// family: every (rank, chunk) pass by the pass rule, at its place in the
// layout (layout_position), O(pp * chunks * kinds); the distinct passes are
// timed once each (StagePassMemo).
PhasePasses every_pass(const Job& job, const PassSetup& s, const PhaseMode& mode, PhaseBuffers& buf,
                       PipelinePhase& ph) {
    const ParallelPlan& p = job.plan;
    const int stages = p.pp, n = mode.chunks;
    PipelineInput& in = buf.in;
    PhasePasses out;
    double fwd_sum = 0, wgrad_sum = 0;
    if (mode.dual) buf.saved_s.assign(static_cast<size_t>(stages), 0.0);
    buf.memo.clear();
    for (int r = 0; r < stages; ++r) {
        PassTime rank_pass;
        double t = 0;
        StagePass sps[2];
        for (int c = 0; c < n; ++c) {
            const LayoutPosition lp = layout_position(p, r, c);
            const StagePass& sp = buf.memo.get(job, s, lp.rank, lp.chunk);
            out.values_ok &= plausible(sp.f.total_s()) && plausible(sp.b.total_s());
            const double f_s = sp.f.total_s(), b_s = sp.b.total_s();
            const size_t at = static_cast<size_t>(r * n + c);
            if (mode.simulate) {
                in.fwd_s[at] = f_s;
                in.bwd_s[at] = b_s;
                if (!mode.family) {
                    in.wgrad_s[at] = std::min(b_s, sp.wgrad_s);
                    in.fwd_comm_s[at] = sp.f.ep_comm_s * mode.hide_share;
                    in.bwd_comm_s[at] = sp.b.ep_comm_s * mode.hide_share;
                }
            }
            if (mode.dual) sps[c] = sp;
            fwd_sum += f_s;
            wgrad_sum += std::min(b_s, sp.wgrad_s);
            rank_pass += sp.f;
            rank_pass += sp.b;
            t += f_s + b_s;
            if (c == 0) buf.chunk0_s[static_cast<size_t>(r)] = f_s + b_s;
            if (r == 0) {
                ph.first_rank_fwd_s += f_s;
                ph.first_rank_bwd_s += b_s;
            }
            // dualpipe's chunk 1 is another rank's chunk 0: count each stage once.
            if (!(mode.sched == PipelineSchedule::dualpipe && c == 1)) ph.recomputed_layers += sp.redone;
        }
        buf.rank_s[static_cast<size_t>(r)] = t;
        if (mode.dual) buf.saved_s[static_cast<size_t>(r)] = dual_saved_s(sps, mode.hide_share);
        if (rank_pass.total_s() > out.worst_total && mode.dual)
            out.extra.hidden_s = buf.saved_s[static_cast<size_t>(r)] *
                                 dual_overlapped_pairs(mode.sched, stages, in.micro_batches, r);
        out.offer_worst(rank_pass);
    }
    out.extra.fwd_mean_s = fwd_sum / (static_cast<double>(stages) * n);
    out.extra.wgrad_mean_s = wgrad_sum / (static_cast<double>(stages) * n);
    if (mode.dual) out.extra.saved_s = buf.saved_s.data();
    return out;
}

// A uniform model on the default split (1F1B family, no MTP): a pass away
// from the embedding and the output layer depends only on its layer count,
// which takes two values (layers_on), each timed once; which virtual stages
// hold the fewer layers is closed form (the first ceil(missing/2) and the last
// floor(missing/2) in model order), so a rank's count of them costs O(1).
class UniformSplit {
public:
    UniformSplit(const Job& job, const PassSetup& s, bool& values_ok) : job_(job), s_(s), values_ok_(values_ok) {
        const int stages = job.plan.pp;
        chunks_ = job.plan.vpp;
        const int virtual_stages = stages * chunks_;
        base_ = job.model.layers / virtual_stages;
        const int missing = virtual_stages - job.model.layers % virtual_stages;
        light_head_ = (missing + 1) / 2;
        const int light_tail = missing / 2;
        // For 0 <= r < stages and L = a*stages + b >= 0, the chunk count
        // ceil((L - r) / stages), or 0 when r >= L, is a + (r < b): one
        // division per phase, none per rank.
        from_ = virtual_stages - light_tail;  // first light virtual stage of the tail
        head_a_ = light_head_ / stages, head_b_ = light_head_ % stages;
        from_a_ = from_ / stages, from_b_ = from_ % stages;
        // Thread-local, reset by layer count: zeroing two cells on every
        // call was a tenth of a search's time in this function.
        cells_[0].layers = cells_[1].layers = -1;
    }
    struct Cell {
        int layers = -1;
        PassTime f, b, both;
        double f_s = 0, b_s = 0;
        double redone = 0;
    };
    int base() const { return base_; }
    int chunks() const { return chunks_; }
    // Chunks of rank r with base() layers.
    int light_on_rank(int r) const {
        const int head = head_a_ + (r < head_b_ ? 1 : 0);     // chunks c with c*stages + r < light_head
        const int first_c = from_a_ + (r < from_b_ ? 1 : 0);  // first chunk c with c*stages + r >= from
        const int tail = std::max(0, chunks_ - first_c);
        return head + tail;
    }
    // Layers on rank r's chunk 0 (virtual stage r), as layers_on gives them.
    int chunk0_layers(int r) const { return base_ + (r < light_head_ || r >= from_ ? 0 : 1); }
    // A pass of n layers with the embedding (first) or the output layer (last).
    void pass_of(int n, bool first, bool last, PassTime& f, PassTime& b, double& redone) {
        const StagePass sp = stage_pass_uniform(job_, s_, n, first, last, 0);
        f = sp.f;
        b = sp.b;
        redone = sp.redone;
        values_ok_ &= plausible(f.total_s()) && plausible(b.total_s());
    }
    // The pass of n layers away from both ends.
    const Cell& cell_of(int n) {
        Cell& cell = cells_[n == base_ ? 0 : 1];
        if (cell.layers != n) {
            cell.layers = n;
            pass_of(n, false, false, cell.f, cell.b, cell.redone);
            cell.both = cell.f;
            cell.both += cell.b;
            cell.f_s = cell.f.total_s();
            cell.b_s = cell.b.total_s();
        }
        return cell;
    }
    // The cell of n layers once cell_of(n) has been called in this phase.
    const Cell& computed_cell(int n) const { return cells_[n == base_ ? 0 : 1]; }

private:
    static thread_local Cell cells_[2];
    const Job& job_;
    const PassSetup& s_;
    bool& values_ok_;
    int chunks_ = 1, base_ = 0, light_head_ = 0, from_ = 0, head_a_ = 0, head_b_ = 0, from_a_ = 0, from_b_ = 0;
};

thread_local UniformSplit::Cell UniformSplit::cells_[2];

// Writes rank r's cells into the simulation's passes (skipping the chunks
// with the embedding or the output layer, written on their own).
void simulated_cells(const Job& job, UniformSplit& u, int r, bool skip_first, bool skip_last, PipelineInput& in) {
    const int chunks = u.chunks();
    for (int c = 0; c < chunks; ++c) {
        if ((skip_first && c == 0) || (skip_last && c == chunks - 1)) continue;
        const UniformSplit::Cell& cell = u.cell_of(layers_on(job, r, c));
        in.fwd_s[static_cast<size_t>(r * chunks + c)] = cell.f_s;
        in.bwd_s[static_cast<size_t>(r * chunks + c)] = cell.b_s;
    }
}

// The passes of a uniform model on the default split, O(pp). A rank holding
// neither the embedding nor the output layer depends only on its count of
// light chunks, which takes at most three values: such a rank's sum is
// computed once per count (the same operations, so the same bits) and, being
// no larger than the first rank with that count, cannot become the worst.
PhasePasses uniform_passes(const Job& job, const PassSetup& s, const PhaseMode& mode, PhaseBuffers& buf,
                           PipelinePhase& ph) {
    const int stages = job.plan.pp;
    PipelineInput& in = buf.in;
    PhasePasses out;
    UniformSplit u(job, s, out.values_ok);
    const int chunks = u.chunks(), base = u.base();
    struct Seen {
        int light = -1;
        double t = 0;
    } seen[4];
    int n_seen = 0;
    for (int r = 0; r < stages; ++r) {
        int light = u.light_on_rank(r), heavy = chunks - light;
        const bool middle = r != 0 && r != stages - 1;
        if (middle) {
            const Seen* hit = nullptr;
            for (int i = 0; i < n_seen; ++i)
                if (seen[i].light == light) hit = &seen[i];
            if (hit != nullptr) {
                // The rank seen had the same light and heavy chunks, so it
                // computed the cell of each count > 0 (chunk 0's among them).
                for (int slot = 0; slot < 2; ++slot) {
                    const int count = slot == 0 ? light : heavy;
                    if (count > 0) ph.recomputed_layers += count * u.computed_cell(base + slot).redone;
                }
                const UniformSplit::Cell& cell = u.computed_cell(u.chunk0_layers(r));
                buf.chunk0_s[static_cast<size_t>(r)] = cell.f_s + cell.b_s;
                if (mode.simulate) simulated_cells(job, u, r, false, false, in);
                buf.rank_s[static_cast<size_t>(r)] = hit->t;
                continue;
            }
        }
        PassTime rank_pass;
        double t = 0;  // the rank's fwd + bwd per micro-batch
        // The embedding's pass (rank 0, chunk 0) and the output layer's (last
        // rank, last chunk) are computed on their own.
        const auto special = [&](int c, bool first, bool last) {
            const int n = layers_on(job, r, c);
            (n == base ? light : heavy) -= 1;
            PassTime f, b;
            double redone = 0;
            u.pass_of(n, first, last, f, b, redone);
            ph.recomputed_layers += redone;
            const double f_s = f.total_s(), b_s = b.total_s();
            if (mode.simulate) {
                in.fwd_s[static_cast<size_t>(r * chunks + c)] = f_s;
                in.bwd_s[static_cast<size_t>(r * chunks + c)] = b_s;
            }
            rank_pass += f;
            rank_pass += b;
            t += f_s + b_s;
            if (c == 0) buf.chunk0_s[static_cast<size_t>(r)] = f_s + b_s;
            if (r == 0) {
                ph.first_rank_fwd_s += f_s;
                ph.first_rank_bwd_s += b_s;
            }
        };
        const bool has_first = r == 0, has_last = r == stages - 1;
        if (has_first) special(0, true, has_last && chunks == 1);
        if (has_last && !(has_first && chunks == 1)) special(chunks - 1, false, true);
        for (int slot = 0; slot < 2; ++slot) {
            const int count = slot == 0 ? light : heavy;
            if (count <= 0) continue;
            const UniformSplit::Cell& cell = u.cell_of(base + slot);
            rank_pass += cell.both.scaled(count);
            t += count * (cell.f_s + cell.b_s);
            ph.recomputed_layers += count * cell.redone;
            if (r == 0) {
                ph.first_rank_fwd_s += count * cell.f_s;
                ph.first_rank_bwd_s += count * cell.b_s;
            }
        }
        if (!has_first && !(has_last && chunks == 1)) {
            const UniformSplit::Cell& cell = u.cell_of(u.chunk0_layers(r));
            buf.chunk0_s[static_cast<size_t>(r)] = cell.f_s + cell.b_s;
        }
        if (mode.simulate) simulated_cells(job, u, r, has_first, has_last, in);
        buf.rank_s[static_cast<size_t>(r)] = t;
        if (middle && n_seen < 4) seen[n_seen++] = {light, t};
        out.offer_worst(rank_pass);
    }
    return out;
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
    PassTime steady = passes.rank_pass_worst.scaled(in.schedule == PipelineSchedule::dualpipe ? m / 2 : m);
    steady.ep_comm_s = std::max(0.0, steady.ep_comm_s - passes.extra.hidden_s);
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
    ph.flops = flops_per_token(job.model, job.training, p.recompute, ph.recomputed_layers / job.model.layers);
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
    mode.uneven &= uniform && mode.chunks <= kSimulatedChunksMax &&
                   static_cast<double>(p.pp) * mode.chunks * static_cast<double>(ph.micro_batches) <= kSimulatedPassesMax;
    if (mode.uneven && !mode.screen) mode.simulate = true;  // the closed form is not exact here
    PhaseBuffers& buf = phase_buffers();
    prepare_input(job, mode, ph.micro_batches, buf);
    const PhasePasses passes = uniform ? uniform_passes(job, s, mode, buf, ph) : every_pass(job, s, mode, buf, ph);
    finish_phase(job, s, mode, buf, passes, ph);
    return ph;
}

}  // namespace lostflops
