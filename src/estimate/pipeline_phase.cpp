// The pipeline phase of the estimate (estimate_parts.h): every (rank, chunk)
// pass of one micro-batch by the pass rule (stage_pass), through the 1F1B /
// interleaved closed form (schedule/pipeline_closed_form.cpp; the other
// schedules of lostflops/pipeline_schedules.h through
// schedule/schedule_closed_form.cpp) or the discrete-event simulation. A uniform model on the default split takes the
// closed form's fast path: a pass away from the embedding and the output
// layer depends only on its layer count, which takes two values, so a phase
// costs O(pp), not O(pp * vpp); otherwise each pass is timed, O(pp * vpp *
// kinds).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "estimate/estimate_parts.h"
#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"
#include "schedule/pipeline_detail.h"
#include "spec/stage_layout.h"

namespace lostflops {

namespace {

void finish_pass(const Job& job, const PassSetup& s, bool embedding, bool loss, int mtp, StagePass& out) {
    PassTime& f = out.f;
    PassTime& b = out.b;
    if (embedding) {
        f += s.embed.fwd;
        b += s.embed.bwd;
        out.wgrad_s += s.embed.wgrad_s;
    }
    if (loss) {
        f += s.head.fwd;
        b += s.head.bwd;
        out.wgrad_s += s.head.wgrad_s;
    }
    if (mtp > 0) {
        f += s.mtp.fwd.scaled(mtp);
        b += s.mtp.bwd.scaled(mtp);
        out.wgrad_s += s.mtp.wgrad_s * mtp;
    }
    // The schedule's own host work per pass, then the GPU waits for
    // whichever of GPU and CPU is slower. Megatron-LM synchronises the
    // device at every pipeline send/receive (p2p_communication.py,
    // torch.cuda.synchronize() after batch_isend_irecv), so with
    // pp > 1 each pass is bound on its own; without a pipeline
    // nothing synchronises between passes and the host runs ahead
    // through a GPU-bound backward into the next forward, so forward
    // and backward are bound together.
    f.cpu_s += s.ho.microbatch_fwd * s.ctx.host_op_s;
    b.cpu_s += s.ho.microbatch_bwd * s.ctx.host_op_s;
    if (job.plan.pp > 1) {
        f.bind_host();
        b.bind_host();
    } else {
        b.host_wait_s = std::max(0.0, f.cpu_s + b.cpu_s - f.gpu_s() - b.gpu_s());
    }
}

}  // namespace

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


StagePass stage_pass_uniform(const Job& job, const PassSetup& s, int layers_n, bool embedding, bool loss, int mtp) {
    const ParallelPlan& p = job.plan;
    StagePass out;
    out.layers = layers_n;
    const double layers = layers_n;
    // Layers whose backward carries the plan's recompute (all of them
    // unless recompute_layers limits full recompute).
    const double redone = p.recompute == Recompute::full ? recomputed_of(p, layers_n) : layers;
    out.f = s.layer.fwd.scaled(layers);
    out.b = s.layer.bwd.scaled(redone);
    if (redone < layers) out.b += s.layer_plain.bwd.scaled(layers - redone);
    out.redone = redone;
    out.wgrad_s = s.layer.wgrad_s * layers;
    finish_pass(job, s, embedding, loss, mtp, out);
    return out;
}

StagePass stage_pass(const Job& job, const PassSetup& s, int rank, int chunk) {
    const VirtualStage vs = virtual_stage(job, rank, chunk);
    if (s.kind_time.empty()) return stage_pass_uniform(job, s, vs.layers, vs.embedding, vs.loss, vs.mtp);
    const ParallelPlan& p = job.plan;
    const LayerStack& st = *job.model.stack;
    const bool full = p.recompute == Recompute::full;
    const int redo = recomputed_of(p, vs.layers);
    StagePass out;
    out.layers = vs.layers;
    for (size_t k = 0; k < s.kind_time.size(); ++k) {
        const int kind = static_cast<int>(k);
        const int n = st.count_in(kind, vs.first, vs.first + vs.layers);
        if (n == 0) continue;
        const int r = full ? st.count_in(kind, vs.first, vs.first + redo) : n;
        const KindTime& t = s.kind_time[k];
        out.f += t.layer.fwd.scaled(n);
        out.wgrad_s += t.layer.wgrad_s * n;
        out.b += t.layer.bwd.scaled(r);
        if (r < n) out.b += t.layer_plain.bwd.scaled(n - r);
    }
    out.redone = full ? redo : vs.layers;
    finish_pass(job, s, vs.embedding, vs.loss, vs.mtp, out);
    return out;
}

namespace {

// The schedule over the passes (closed form or simulation, without and with
// the p2p transfers) and the phase's breakdown: the steady state charged to
// the slowest rank's causes, the rest to the bubble.
// Beyond the 1F1B family (zero-bubble, dualpipe, dualpipev): the means and
// savings the closed form needs (schedule/pipeline_detail.h PipelineSums).
struct ScheduleExtras {
    double fwd_mean_s = 0, wgrad_mean_s = 0;
    const double* saved_s = nullptr;
    double hidden_s = 0;  // the worst rank's F&B savings over the step: hidden expert all-to-all
};

PipelinePhase finish_phase(const Job& job, const PassSetup& s, ScheduleModel schedule, PipelineInput& in,
                           std::vector<double>& rank_s, std::vector<double>& chunk0_s, bool values_ok,
                           const PassTime& rank_pass_worst, PipelinePhase& ph, const ScheduleExtras& extra = {}) {
    const ParallelPlan& p = job.plan;
    const int stages = p.pp, chunks = in.chunks;
    const bool simulate = schedule == ScheduleModel::simulation;
    const double m = static_cast<double>(ph.micro_batches);
    const double p2p_s = p2p_time_s(s.ctx, job);
    PipelineResult no_p2p, with_p2p;
    if (!values_ok)  // a programming error: validated jobs give finite, non-negative passes
        throw std::invalid_argument("pipeline pass time is negative or not finite");
    if (simulate) {
        no_p2p = pipeline_simulate(in);
        in.p2p_s = p2p_s;
        with_p2p = pipeline_simulate(in);
    } else {
        PipelineSums sums{stages, chunks, in.micro_batches, 0.0, rank_s.data(), chunk0_s.data()};
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
    PassTime steady = rank_pass_worst.scaled(in.schedule == PipelineSchedule::dualpipe ? m / 2 : m);
    steady.ep_comm_s = std::max(0.0, steady.ep_comm_s - extra.hidden_s);
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
    return ph;
}

}  // namespace

PipelinePhase pipeline_phase(const Job& job, const PassSetup& s, ScheduleModel schedule) {
    const ParallelPlan& p = job.plan;
    PipelinePhase ph;
    const int stages = p.pp, chunks = p.vpp;
    ph.micro_batches = p.micro_batches(job.training);

    // Per (rank, chunk) pass times; the embedding sits on virtual stage 0, the
    // output layer on the last virtual stage. The closed form needs only each
    // rank's sum and its chunk 0 (schedule/pipeline_detail.h PipelineSums);
    // the simulation takes every pass.
    // Reused between calls on this thread: no allocation once warm (a search
    // evaluates millions of plans).
    static thread_local PipelineInput in;
    static thread_local std::vector<double> rank_s, chunk0_s, saved_s;
    const PipelineSchedule sched = effective_schedule(p);
    const bool family = sched == PipelineSchedule::one_f_one_b || sched == PipelineSchedule::interleaved;
    const bool dual = sched == PipelineSchedule::dualpipe || sched == PipelineSchedule::dualpipev;
    // An F&B pair hides the all-to-all but its SMs slow the other pass
    // (PlanContext::moe_overlap_slowdown): a pair saves (1 - slowdown) of the
    // comm it hides, taken as hiding that share of the comm (exact while the
    // other pass's compute covers the comm).
    const double hide_share = 1.0 - s.ctx.moe_overlap_slowdown;
    // DualPipe's closed form (the DeepSeek-V3 formula) is exact only when F =
    // B = W and nothing is hidden (tests/schedule/schedule_test.cpp); off that
    // point it is 4-50 % off the simulation's bubble, so the estimate (and the
    // search, through this function) simulates dualpipe and dualpipev: O(p m).
    if (dual) schedule = ScheduleModel::simulation;
    const bool simulate = schedule == ScheduleModel::simulation;
    const int rank_chunk_n = rank_chunks(p);
    in.p2p_s = 0;
    in.schedule = sched;
    in.stages = stages;
    in.chunks = rank_chunk_n;
    in.wgrad_s.clear();
    in.fwd_comm_s.clear();
    in.bwd_comm_s.clear();
    in.micro_batches = static_cast<int>(ph.micro_batches);
    if (simulate) {
        in.fwd_s.assign(static_cast<size_t>(stages * rank_chunk_n), 0.0);
        in.bwd_s.assign(static_cast<size_t>(stages * rank_chunk_n), 0.0);
        if (!family) {
            in.wgrad_s.assign(static_cast<size_t>(stages * rank_chunk_n), 0.0);
            in.fwd_comm_s.assign(static_cast<size_t>(stages * rank_chunk_n), 0.0);
            in.bwd_comm_s.assign(static_cast<size_t>(stages * rank_chunk_n), 0.0);
        }
    }
    // Every entry is written below.
    rank_s.resize(static_cast<size_t>(stages));
    chunk0_s.resize(static_cast<size_t>(stages));
    bool values_ok = true;
    const auto plausible = [](double x) { return x >= 0 && x <= std::numeric_limits<double>::max(); };
    PassTime rank_pass_worst;
    double worst_total = -1;
    if (!s.kind_time.empty() || !default_split(p) || job.model.mtp_layers > 0 || !family) {
        // Several kinds, a custom layout, MTP modules or a schedule beyond the
        // 1F1B family: every (rank, chunk) pass by the pass rule, at its place
        // in the layout (layout_position), O(pp * chunks * kinds).
        ScheduleExtras extra;
        double fwd_sum = 0, wgrad_sum = 0;
        if (dual) saved_s.assign(static_cast<size_t>(stages), 0.0);
        const int n = rank_chunk_n;
        for (int r = 0; r < stages; ++r) {
            PassTime rank_pass;
            double t = 0;
            StagePass sps[2];
            for (int c = 0; c < n; ++c) {
                const LayoutPosition lp = layout_position(p, r, c);
                const StagePass sp = stage_pass(job, s, lp.rank, lp.chunk);
                values_ok &= plausible(sp.f.total_s()) && plausible(sp.b.total_s());
                const double f_s = sp.f.total_s(), b_s = sp.b.total_s();
                const size_t at = static_cast<size_t>(r * n + c);
                if (simulate) {
                    in.fwd_s[at] = f_s;
                    in.bwd_s[at] = b_s;
                    if (!family) {
                        in.wgrad_s[at] = std::min(b_s, sp.wgrad_s);
                        in.fwd_comm_s[at] = sp.f.ep_comm_s * hide_share;
                        in.bwd_comm_s[at] = sp.b.ep_comm_s * hide_share;
                    }
                }
                if (dual) sps[c] = sp;
                fwd_sum += f_s;
                wgrad_sum += std::min(b_s, sp.wgrad_s);
                rank_pass += sp.f;
                rank_pass += sp.b;
                t += f_s + b_s;
                if (c == 0) chunk0_s[static_cast<size_t>(r)] = f_s + b_s;
                if (r == 0) {
                    ph.first_rank_fwd_s += f_s;
                    ph.first_rank_bwd_s += b_s;
                }
                // dualpipe's chunk 1 is another rank's chunk 0: count each stage once.
                if (!(sched == PipelineSchedule::dualpipe && c == 1)) ph.recomputed_layers += sp.redone;
            }
            rank_s[static_cast<size_t>(r)] = t;
            if (dual) {
                // An F&B pair hides each pass's expert all-to-all behind the
                // other's work (DeepSeek-V3 report sec. 3.2.1): F0 with B1, F1 with B0.
                double saved = 0;
                for (int j = 0; j < 2; ++j) {
                    const PassTime& f = sps[j].f;
                    const PassTime& b = sps[1 - j].b;
                    const double fc = std::min(f.ep_comm_s * hide_share, f.total_s()),
                                 bc = std::min(b.ep_comm_s * hide_share, b.total_s());
                    saved += 0.5 * (std::min(fc, b.total_s() - bc) + std::min(bc, f.total_s() - fc));
                }
                saved_s[static_cast<size_t>(r)] = saved;
            }
            if (rank_pass.total_s() > worst_total) {
                worst_total = rank_pass.total_s();
                rank_pass_worst = rank_pass;
                if (dual)
                    extra.hidden_s = saved_s[static_cast<size_t>(r)] *
                                     dual_overlapped_pairs(sched, stages, in.micro_batches, r);
            }
        }
        extra.fwd_mean_s = fwd_sum / (static_cast<double>(stages) * n);
        extra.wgrad_mean_s = wgrad_sum / (static_cast<double>(stages) * n);
        if (dual) extra.saved_s = saved_s.data();
        return finish_phase(job, s, schedule, in, rank_s, chunk0_s, values_ok, rank_pass_worst, ph, extra);
    }
    // A pass away from the embedding and the output layer depends only on its
    // layer count, which takes two values (layers_on): computed once each.
    // Thread-local, reset by layer count: zeroing two cells on every call
    // was a tenth of a search's time in this function.
    struct Cell {
        int layers = -1;
        PassTime f, b, both;
        double f_s = 0, b_s = 0;
        double redone = 0;
    };
    static thread_local Cell cells[2];
    cells[0].layers = cells[1].layers = -1;
    const auto pass_of = [&](int n, bool first, bool last, PassTime& f, PassTime& b, double& redone_out) {
        const StagePass sp = stage_pass_uniform(job, s, n, first, last, 0);
        f = sp.f;
        b = sp.b;
        redone_out = sp.redone;
        values_ok &= plausible(f.total_s()) && plausible(b.total_s());
    };
    // Which virtual stages hold the fewer layers (layers_on): the first
    // ceil(missing/2) and the last floor(missing/2) in model order, so a rank's
    // count of them is closed form and a phase costs O(pp), not O(pp * vpp).
    const int virtual_stages = stages * chunks;
    const int base_layers = job.model.layers / virtual_stages;
    const int missing = virtual_stages - job.model.layers % virtual_stages;
    const int light_head = (missing + 1) / 2, light_tail = missing / 2;
    // For 0 <= r < stages and L = a*stages + b >= 0, the chunk count
    // ceil((L - r) / stages), or 0 when r >= L, is a + (r < b): one division
    // per phase, none per rank.
    const int from = virtual_stages - light_tail;  // first light virtual stage of the tail
    const int head_a = light_head / stages, head_b = light_head % stages;
    const int from_a = from / stages, from_b = from % stages;
    const auto light_on_rank = [&](int r) {  // chunks of rank r with base_layers
        const int head = head_a + (r < head_b ? 1 : 0);           // chunks c with c*stages + r < light_head
        const int first_c = from_a + (r < from_b ? 1 : 0);        // first chunk c with c*stages + r >= from
        const int tail = std::max(0, chunks - first_c);
        return head + tail;
    };
    // Layers on rank r's chunk 0 (virtual stage r), as layers_on gives them.
    const auto chunk0_layers = [&](int r) { return base_layers + (r < light_head || r >= from ? 0 : 1); };
    const auto cell_of = [&](int n) -> Cell& {
        Cell& cell = cells[n == base_layers ? 0 : 1];
        if (cell.layers != n) {
            cell.layers = n;
            pass_of(n, false, false, cell.f, cell.b, cell.redone);
            cell.both = cell.f;
            cell.both += cell.b;
            cell.f_s = cell.f.total_s();
            cell.b_s = cell.b.total_s();
        }
        return cell;
    };
    // A rank holding neither the embedding nor the output layer depends only
    // on its count of light chunks, which takes at most three values: such a
    // rank's sum is computed once per count (the same operations, so the same
    // bits) and, being no larger than the first rank with that count, cannot
    // become the worst.
    struct Seen {
        int light = -1;
        double t = 0;
    } seen[4];
    int n_seen = 0;
    for (int r = 0; r < stages; ++r) {
        PassTime rank_pass;
        double t = 0;  // the rank's fwd + bwd per micro-batch
        int light = light_on_rank(r), heavy = chunks - light;
        const bool middle = r != 0 && r != stages - 1;
        if (middle) {
            const Seen* hit = nullptr;
            for (int i = 0; i < n_seen; ++i)
                if (seen[i].light == light) hit = &seen[i];
            if (hit != nullptr) {
                for (int slot = 0; slot < 2; ++slot) {
                    const int count = slot == 0 ? light : heavy;
                    if (count > 0) ph.recomputed_layers += count * cell_of(base_layers + slot).redone;
                }
                const Cell& cell = cell_of(chunk0_layers(r));
                chunk0_s[static_cast<size_t>(r)] = cell.f_s + cell.b_s;
                if (simulate) {
                    for (int c = 0; c < chunks; ++c) {
                        const Cell& cc = cell_of(layers_on(job, r, c));
                        in.fwd_s[static_cast<size_t>(r * chunks + c)] = cc.f_s;
                        in.bwd_s[static_cast<size_t>(r * chunks + c)] = cc.b_s;
                    }
                }
                rank_s[static_cast<size_t>(r)] = hit->t;
                continue;
            }
        }
        // The embedding's pass (rank 0, chunk 0) and the output layer's (last
        // rank, last chunk) are computed on their own.
        const auto special = [&](int c, bool first, bool last) {
            const int n = layers_on(job, r, c);
            (n == base_layers ? light : heavy) -= 1;
            PassTime f, b;
            double redone = 0;
            pass_of(n, first, last, f, b, redone);
            ph.recomputed_layers += redone;
            const double f_s = f.total_s(), b_s = b.total_s();
            if (simulate) {
                in.fwd_s[static_cast<size_t>(r * chunks + c)] = f_s;
                in.bwd_s[static_cast<size_t>(r * chunks + c)] = b_s;
            }
            rank_pass += f;
            rank_pass += b;
            t += f_s + b_s;
            if (c == 0) chunk0_s[static_cast<size_t>(r)] = f_s + b_s;
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
            const Cell& cell = cell_of(base_layers + slot);
            rank_pass += cell.both.scaled(count);
            t += count * (cell.f_s + cell.b_s);
            ph.recomputed_layers += count * cell.redone;
            if (r == 0) {
                ph.first_rank_fwd_s += count * cell.f_s;
                ph.first_rank_bwd_s += count * cell.b_s;
            }
        }
        if (!has_first && !(has_last && chunks == 1)) {
            const Cell& cell = cell_of(chunk0_layers(r));
            chunk0_s[static_cast<size_t>(r)] = cell.f_s + cell.b_s;
        }
        if (simulate) {
            for (int c = 0; c < chunks; ++c) {
                if ((has_first && c == 0) || (has_last && c == chunks - 1)) continue;
                const Cell& cell = cell_of(layers_on(job, r, c));
                in.fwd_s[static_cast<size_t>(r * chunks + c)] = cell.f_s;
                in.bwd_s[static_cast<size_t>(r * chunks + c)] = cell.b_s;
            }
        }
        rank_s[static_cast<size_t>(r)] = t;
        if (middle && n_seen < 4) seen[n_seen++] = {light, t};
        if (rank_pass.total_s() > worst_total) {
            worst_total = rank_pass.total_s();
            rank_pass_worst = rank_pass;
        }
    }
    return finish_phase(job, s, schedule, in, rank_s, chunk0_s, values_ok, rank_pass_worst, ph);
}

}  // namespace lostflops
