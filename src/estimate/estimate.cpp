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
#include <limits>
#include <stdexcept>
#include <vector>

#include "estimate/estimate_parts.h"
#include "estimate/memory.h"
#include "estimate/stage_time.h"
#include "estimate/zero3_time.h"
#include "lostflops/pipeline.h"
#include "schedule/pipeline_detail.h"
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
// Data-parallel collectives of the first rank (dense weights over dp*cp
// ranks, expert weights over dp*cp/ep), the tied-embedding all-reduce and the
// optimizer step: they depend on the layout (and grad_fp32), not on the
// pipeline phase, so pass_setup computes them once.
DpComm dp_comm(const Job& job, const Calibration& cal, const PlanContext& ctx, const StageParams& sp0,
               const StageParams& last, const HeadWork& hw) {
    const ParallelPlan& p = job.plan;
    const double gb = grad_bytes_per_param(p);
    // Time of `op` over the dense group and the expert group for `bytes_per_param`.
    const auto t = [&](Collective op, double bytes_per_param, double dense, double expert) {
        return collective_time_s(ctx.comm, op, ctx.dp_group, dense * bytes_per_param) +
               collective_time_s(ctx.comm, op, ctx.edp_group, expert * bytes_per_param);
    };
    DpComm d;
    d.all_reduce_s = t(Collective::all_reduce, gb, sp0.params, sp0.expert_params);
    d.reduce_scatter_s = t(Collective::reduce_scatter, gb, sp0.params, sp0.expert_params);
    d.all_gather_s = t(Collective::all_gather, 2, sp0.params, sp0.expert_params);
    if (job.model.tied_embeddings && p.pp > 1)
        d.tied_embedding_s = collective_time_s(ctx.comm, Collective::all_reduce, ctx.embedding_group,
                                               hw.embedding_params * gb);
    // The optimizer step of the rank with the largest shard (first or last),
    // unsharded (zero 0) and sharded (zero >= 1).
    for (int sharded = 0; sharded <= 1; ++sharded) {
        ParallelPlan q = p;
        q.zero = sharded;
        const double opt_params = std::max(optimizer_shard_params(q, sp0), optimizer_shard_params(q, last));
        d.optimizer_s[sharded] = opt_params * cal.optimizer_bytes_per_param /
                                     (ctx.dev.hbm_Bps * ctx.dev.memory_bound) +
                                 8 * ctx.dev.kernel_overhead_s;
    }
    return d;
}

// Exposed data-parallel time after overlap with the compute window.
double dp_exposed_s(const Job& job, const Calibration& cal, const PassSetup& s, double bwd_window_s,
                    double fwd_window_s, double layer_fwd_s, double layer_bwd_s, double m) {
    const ParallelPlan& p = job.plan;
    const double overlap = p.overlap_grad_reduce ? cal.dp_overlap : 0.0;
    // Traffic hidden behind a compute window still slows that compute
    // (overlap_slowdown); the rest is exposed.
    const auto exposed = [&](double comm_s, double window_s) {
        const double hidden = std::min(comm_s, overlap * window_s);
        return comm_s - hidden + hidden * cal.overlap_slowdown;
    };
    // Per layer and bucket, behind each layer's compute (estimate/zero3_time.cpp).
    if (p.zero >= 3) return zero3_exposed_s(job, cal, s.zero3, s.first_stage, layer_fwd_s, layer_bwd_s, m);
    if (p.zero == 0) return exposed(s.dp.all_reduce_s, bwd_window_s);
    return exposed(s.dp.reduce_scatter_s, bwd_window_s) + exposed(s.dp.all_gather_s, fwd_window_s);
}

// Host operators of a layer: the model's one kind's, or the mean over the
// kinds weighted by layer count.
HostOps layer_host_ops(const Model& m, const Training& tr, const ParallelPlan& p) {
    if (m.uniform()) return host_ops(m.kind(0), tr, p);
    HostOps out = host_ops(m.kind(0), tr, p);
    out.layer_fwd = out.layer_bwd = 0;
    for (size_t k = 0; k < m.kinds().size(); ++k) {
        const double share = static_cast<double>(m.kind_count(static_cast<int>(k))) / m.layers;
        const HostOps ho = host_ops(m.kinds()[k], tr, p);
        out.layer_fwd += share * ho.layer_fwd;
        out.layer_bwd += share * ho.layer_bwd;
    }
    return out;
}

// The LayerWork fields memory and the ZeRO-3 engine read, which add over layers.
constexpr double LayerWork::*kPerLayerFields[] = {
    &LayerWork::attention_flops_fwd, &LayerWork::mem_bytes_fwd,   &LayerWork::mem_bytes_bwd,
    &LayerWork::mem_bytes_attention_fwd, &LayerWork::kernels_fwd, &LayerWork::kernels_bwd,
    &LayerWork::activation_bytes, &LayerWork::activation_bytes_full, &LayerWork::checkpoint_bytes,
    &LayerWork::params,           &LayerWork::expert_params,     &LayerWork::dense_tensors,
    &LayerWork::expert_tensors};

// The work and time of a layer: the model's one kind, or for a stack of
// several kinds their mean weighted by layer count (each pass then costs its
// layer count times the mean layer; the host's share from the mean operator
// count, as pass_setup_other_zero sets it).
void set_layer(const Job& job, const ParallelPlan& p, PassSetup& s) {
    const Model& m = job.model;
    s.ho = layer_host_ops(m, job.training, p);
    ParallelPlan p_plain = p;
    p_plain.recompute = Recompute::none;
    if (m.uniform()) {
        s.lw = layer_work(m, m.kind(0), job.training, p);
        s.layer = layer_time(s.ctx, s.lw, s.ho, p);
        // Layers that full recompute leaves alone (parallel.recompute_layers).
        if (p.recompute == Recompute::full) s.layer_plain = layer_time(s.ctx, s.lw, s.ho, p_plain);
        return;
    }
    s.lw = LayerWork{};
    s.layer = s.layer_plain = LayerTime{};
    for (size_t k = 0; k < m.kinds().size(); ++k) {
        const double share = static_cast<double>(m.kind_count(static_cast<int>(k))) / m.layers;
        const LayerWork lw = layer_work(m, m.kinds()[k], job.training, p);
        const LayerTime t = layer_time(s.ctx, lw, s.ho, p);
        s.layer.fwd += t.fwd.scaled(share);
        s.layer.bwd += t.bwd.scaled(share);
        if (p.recompute == Recompute::full) {
            const LayerTime plain = layer_time(s.ctx, lw, s.ho, p_plain);
            s.layer_plain.fwd += plain.fwd.scaled(share);
            s.layer_plain.bwd += plain.bwd.scaled(share);
        }
        if (k == 0) {
            s.lw.unfused = lw.unfused;
            s.lw.scores = lw.scores;
            s.lw.values = lw.values;
            s.lw.tp_sequence_parallel = lw.tp_sequence_parallel;
        }
        for (double LayerWork::*f : kPerLayerFields) s.lw.*f += share * lw.*f;
    }
    set_layer_host_time(s.layer, s.ctx, s.ho, p);
    if (p.recompute == Recompute::full) set_layer_host_time(s.layer_plain, s.ctx, s.ho, p_plain);
}

}  // namespace

PassSetup pass_setup(const Job& job, const Calibration& cal) {
    return pass_setup(job, make_plan_context(job, cal), nullptr);
}

PassSetup pass_setup(const Job& job, const PlanContext& ctx, const PassSetup* same_layout) {
    const ParallelPlan& p = job.plan;
    PassSetup s;
    s.ctx = ctx;
    set_layer(job, p, s);
    s.hw = head_work(job.model, job.training, p);
    s.head = head_time(s.ctx, s.hw, s.ho, p);
    s.embed = embedding_time(s.ctx, s.hw, s.ho);
    if (same_layout != nullptr) {
        s.first_stage = same_layout->first_stage;
        s.last_stage = same_layout->last_stage;
    } else {
        s.first_stage = stage_params(job, s.lw, s.hw, 0);
        s.last_stage = stage_params(job, s.lw, s.hw, p.pp - 1);
    }
    if (same_layout != nullptr && same_layout->lw.params == s.lw.params &&
        same_layout->grad_fp32 == p.grad_fp32) {
        s.dp = same_layout->dp;
    } else {
        s.dp = dp_comm(job, *ctx.comm.cal, ctx, s.first_stage, s.last_stage, s.hw);
    }
    if (p.zero >= 3) s.zero3 = zero3_comm(job, s.ctx, s.lw, s.first_stage);
    s.grad_fp32 = p.grad_fp32;
    return s;
}

PassSetup pass_setup_other_zero(const Job& job, const PassSetup& sibling) {
    const ParallelPlan& p = job.plan;
    PassSetup s = sibling;
    s.ho = layer_host_ops(job.model, job.training, p);
    set_layer_host_time(s.layer, s.ctx, s.ho, p);
    if (p.recompute == Recompute::full) {
        ParallelPlan p_plain = p;
        p_plain.recompute = Recompute::none;
        set_layer_host_time(s.layer_plain, s.ctx, s.ho, p_plain);
    }
    set_head_host_time(s.head, s.ctx, s.ho);
    set_embedding_host_time(s.embed, s.ctx, s.ho);
    s.zero3 = p.zero >= 3 ? zero3_comm(job, s.ctx, s.lw, s.first_stage) : Zero3Comm{};
    return s;
}

PipelinePhase pipeline_phase(const Job& job, const PassSetup& s, ScheduleModel schedule) {
    const ParallelPlan& p = job.plan;
    const LayerTime& layer = s.layer;
    const LayerTime& layer_plain = s.layer_plain;
    const HostOps& ho = s.ho;
    const PlanContext& ctx = s.ctx;
    PipelinePhase ph;
    const int stages = p.pp, chunks = p.vpp;
    ph.micro_batches = p.micro_batches(job.training);
    const double m = static_cast<double>(ph.micro_batches);

    // Per (rank, chunk) pass times; the embedding sits on virtual stage 0, the
    // output layer on the last virtual stage. The closed form needs only each
    // rank's sum and its chunk 0 (schedule/pipeline_detail.h PipelineSums);
    // the simulation takes every pass.
    // Reused between calls on this thread: no allocation once warm (a search
    // evaluates millions of plans).
    static thread_local PipelineInput in;
    static thread_local std::vector<double> rank_s, chunk0_s;
    const bool simulate = schedule == ScheduleModel::simulation;
    in.p2p_s = 0;
    in.stages = stages;
    in.chunks = chunks;
    in.micro_batches = static_cast<int>(ph.micro_batches);
    if (simulate) {
        in.fwd_s.assign(static_cast<size_t>(stages * chunks), 0.0);
        in.bwd_s.assign(static_cast<size_t>(stages * chunks), 0.0);
    }
    // Every entry is written below.
    rank_s.resize(static_cast<size_t>(stages));
    chunk0_s.resize(static_cast<size_t>(stages));
    bool values_ok = true;
    const auto plausible = [](double x) { return x >= 0 && x <= std::numeric_limits<double>::max(); };
    PassTime rank_pass_worst;
    double worst_total = -1;
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
        const double layers = n;
        // Layers whose backward carries the plan's recompute (all of them
        // unless recompute_layers limits full recompute).
        const double redone = p.recompute == Recompute::full ? recomputed_of(p, n) : layers;
        f = layer.fwd.scaled(layers);
        b = layer.bwd.scaled(redone);
        if (redone < layers) b += layer_plain.bwd.scaled(layers - redone);
        redone_out = redone;
        if (first) {
            f += s.embed.fwd;
            b += s.embed.bwd;
        }
        if (last) {
            f += s.head.fwd;
            b += s.head.bwd;
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
    const double p2p_s = p2p_time_s(ctx, job);
    PipelineResult no_p2p, with_p2p;
    if (!values_ok)  // a programming error: validated jobs give finite, non-negative passes
        throw std::invalid_argument("pipeline pass time is negative or not finite");
    if (simulate) {
        no_p2p = pipeline_simulate(in);
        in.p2p_s = p2p_s;
        with_p2p = pipeline_simulate(in);
    } else {
        PipelineSums sums{stages, chunks, in.micro_batches, 0.0, rank_s.data(), chunk0_s.data()};
        const PipelineScan scan = pipeline_scan(sums);
        no_p2p = pipeline_closed_form_scanned(sums, scan);
        sums.p2p_s = p2p_s;
        with_p2p = p2p_s == 0 ? no_p2p : pipeline_closed_form_scanned(sums, scan);
    }

    Breakdown& bd = ph.breakdown;
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
    ph.flops = flops_per_token(job.model, job.training, p.recompute, ph.recomputed_layers / job.model.layers);
    return ph;
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
}

void finish_time(const Job& job, const Calibration& cal, const PassSetup& s, const PipelinePhase& ph,
                 Estimate& e) {
    const Training& tr = job.training;
    e.micro_batches = ph.micro_batches;
    Breakdown& bd = e.breakdown;
    finish_breakdown(job, cal, s, ph, bd);
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
    const Memory first = stage_memory(job, cal, s.lw, s.hw, 0);
    const Memory last = stage_memory(job, cal, s.lw, s.hw, job.plan.pp - 1);
    e.memory = last.peak_bytes > first.peak_bytes ? last : first;
    const ParamCount pc = count_params(job.model);
    e.params_total = pc.total;
    e.params_active = pc.active;
    e.params_embedding = pc.embedding;
    e.params_output = pc.output;
    e.params_mtp = pc.mtp;
    return e;
}

}  // namespace lostflops
