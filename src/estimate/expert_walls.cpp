// The expert walls of an MoE step (lostflops/expert_walls.h): the main
// walls' MoE slices, read off the same rule the estimate uses.
//
// Per MoE layer, one micro-batch (estimate/stage_time.cpp layer_time):
//   router          its GEMM (tokens held x experts x hidden; backward 2x)
//                   and its scores: fp32 logits written, read by the softmax
//                   or sigmoid and the top-k, probabilities written,
//                   12 bytes per token and expert (memory-bound; backward 2x)
//   permute         the token copies sorted by expert before dispatch and
//                   back after combine, each read and written: 4 x copies x
//                   hidden x element bytes, copies = tokens held x top-k
//                   (x2 with etp > 1: the gathered copies sorted again);
//                   backward 2x (workload/layer_work.cpp, the same bytes)
//   expert_gemm     the routed experts' grouped GEMMs (gate/up, down),
//                   shared_experts the shared experts' MLP: forward, and 2x
//                   in backward
//   dispatch        the dispatch collective and its gradient (which travels
//                   back as a combine does), exposed: isolated, times the
//                   overlapped slowdown where overlapped; under
//                   moe_a2a_overlap each paired with its side of the other
//                   micro-batch (stage_time.h moe_a2a_exposed), in the
//                   steady state's share of passes
//   combine         the combine and its gradient (travelling as a dispatch)
// Recompute: what the plan redoes of each part (full: all; selective: the
// GEMMs of parallel.recompute_modules, the router's and permutation's bytes
// and the dispatch with module moe; torchtitan's per-op policy: its GEMM share
// of each GEMM and every forward memory-bound byte) goes to the part's
// recompute_s.
// The step: on the rank the estimate charges (the slowest rank's passes,
// estimate/phase_passes.cpp offer_worst), each chunk's MoE layers by kind
// (those full recompute redoes with the plan's recompute, the others plain),
// its MTP modules (a layer of the last kind), times the micro-batches (m/2
// under dualpipe). DualPipe's F&B passes hide part of the all-to-all
// (the step's ep_comm_s is less than its passes'): dispatch and combine
// are scaled by the step's ep_comm_s over their sum.
// expert_dp: the step's exposed data-parallel time (without the tied
// embeddings' all-reduce) in proportion of the expert-data-parallel
// collectives' time to all of them (zero 0: all-reduce; else reduce-scatter
// and all-gather; ZeRO-3 by the same proportion).
// Kernel launches of these kernels stay in kernel_overhead (the host binding
// moves them), fp8 casts in memory_bound.
#include "lostflops/expert_walls.h"

#include <algorithm>

#include "estimate/estimate_parts.h"
#include "estimate/memory.h"
#include "job/stage_layout.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/walls.h"

namespace lostflops {

namespace {

constexpr size_t kRouter = 0, kPermute = 1, kDispatch = 2, kCombine = 3, kExpert = 4, kShared = 5, kExpertDp = 6;

// One MoE layer's slices, one micro-batch, forward and backward together.
struct LayerParts {
    std::array<Breakdown, kExpertWallCount> in{};
    double collective_s[kExpertWallCount] = {};
    void add(const LayerParts& o, double n) {
        for (size_t i = 0; i < in.size(); ++i) {
            for (const WallInfo& main : kWalls) in[i].*main.seconds += n * o.in[i].*main.seconds;
            collective_s[i] += n * o.collective_s[i];
        }
    }
};

// Where a layer's GEMM at index i of its MoE block lies: 0 router, 1-2
// experts, 3-4 shared experts (workload/layer_work.cpp adds them in order).
size_t gemm_part(int i, int first) { return i == first ? kRouter : i <= first + 2 ? kExpert : kShared; }

// The slices of one MoE layer of kind `k` under plan `p` (its recompute),
// whose time under that plan is `t` (layer_time(ctx, w, h, p)).
LayerParts layer_parts(const PlanContext& ctx, const LayerWork& w, const LayerKind& k, const ParallelPlan& p,
                       const LayerTime& t) {
    LayerParts out;
    if (w.moe_first_gemm < 0) return out;
    const DeviceModel& d = ctx.dev;
    double gemm_fwd = 0, moe_gemm_fwd = 0;
    double part_gemm[kExpertWallCount] = {}, redo_gemm[kExpertWallCount] = {};
    for (int i = 0; i < w.gemm_count; ++i) {
        const double s = layer_gemm_s(d, w.gemms[i], p);
        gemm_fwd += s;
        if (i < w.moe_first_gemm) continue;
        moe_gemm_fwd += s;
        const size_t part = gemm_part(i, w.moe_first_gemm);
        part_gemm[part] += s;
        if ((w.recompute_gemms >> i) & 1u) redo_gemm[part] += s;
    }
    for (size_t part : {kRouter, kExpert, kShared}) out.in[part].compute_s = 3 * part_gemm[part];
    const double router_bytes = w.moe_tokens * k.moe.experts * 4.0 * 3.0;
    const double permute_bytes = 4 * w.moe_tokens * w.moe_top_k * (p.expert_tp() > 1 ? 2.0 : 1.0) * w.moe_token_bytes;
    const double mem_fwd[kExpertWallCount] = {memory_time_s(d, router_bytes), memory_time_s(d, permute_bytes)};
    for (size_t part : {kRouter, kPermute}) out.in[part].memory_bound_s = 3 * mem_fwd[part];

    // The all-to-all, as layer_time exposes it, by collective.
    double fwd_ep[2] = {}, bwd_ep[2] = {};  // [dispatch, combine] by the forward collective they belong to
    if (w.moe_dispatches_fwd > 0) {
        const ExpertDispatchTime f = expert_dispatch_time(ctx.comm, ctx.experts, p, w.moe_tokens, w.moe_top_k,
                                                          w.moe_token_bytes, ctx.fp8, w.moe_etp_gather);
        const double slow = ctx.moe_overlap_comm;
        const double iso = ctx.moe_layer_overlap ? 1.0 : slow;
        // Backward: the combine's gradient travels as a dispatch (f.dispatch_s), the dispatch's as a combine.
        fwd_ep[0] = f.dispatch_s * iso, fwd_ep[1] = f.combine_s * iso;
        bwd_ep[0] = f.combine_s * iso, bwd_ep[1] = f.dispatch_s * iso;
        out.collective_s[kDispatch] = (f.dispatch_s + f.combine_s) * slow;
        out.collective_s[kCombine] = (f.combine_s + f.dispatch_s) * slow;
        if (ctx.moe_layer_overlap) {
            const double attn_f = t.fwd.compute_s - gemm_fwd, attn_b = t.bwd.compute_s - 2 * gemm_fwd;
            const MoeOverlapSides sd = moe_overlap_sides(t, gemm_fwd - moe_gemm_fwd + attn_f, moe_gemm_fwd,
                                                         2 * (gemm_fwd - moe_gemm_fwd) + attn_b, 2 * moe_gemm_fwd);
            const double slowdown = ctx.moe_overlap_slowdown, paired = ctx.moe_overlap_paired;
            const auto part = [&](double comm, double compute, double alone) {
                const double c = comm * slow, hidden = std::min(c, compute);
                return paired * (c - hidden + slowdown * hidden) + (1 - paired) * alone;
            };
            // stage_time.h: dispatch(F) under MLP(B), combine(F) under attention(B),
            // the combine's gradient under attention(F), the dispatch's under MLP(F).
            fwd_ep[0] = part(f.dispatch_s, sd.mlp_b, fwd_ep[0]);
            fwd_ep[1] = part(f.combine_s, sd.attn_b, fwd_ep[1]);
            bwd_ep[1] = part(f.dispatch_s, sd.attn_f, bwd_ep[1]);  // the combine's gradient
            bwd_ep[0] = part(f.combine_s, sd.mlp_f, bwd_ep[0]);    // the dispatch's gradient
        }
    }
    out.in[kDispatch].ep_comm_s = fwd_ep[0] + bwd_ep[0];
    out.in[kCombine].ep_comm_s = fwd_ep[1] + bwd_ep[1];

    // What the backward redoes (layer_time's switch).
    bool redo_ep = false;
    if (p.recompute == Recompute::full) {
        for (size_t part : {kRouter, kExpert, kShared}) out.in[part].recompute_s = part_gemm[part];
        for (size_t part : {kRouter, kPermute}) out.in[part].recompute_s += mem_fwd[part];
        redo_ep = true;
    } else if (p.recompute == Recompute::selective && w.op_checkpoint) {
        for (size_t part : {kRouter, kExpert, kShared})
            out.in[part].recompute_s = w.op_recompute_gemm_share * part_gemm[part];
        for (size_t part : {kRouter, kPermute}) out.in[part].recompute_s += mem_fwd[part];
    } else if (p.recompute == Recompute::selective && w.recompute_kernels > 0) {
        for (size_t part : {kRouter, kExpert, kShared}) out.in[part].recompute_s = redo_gemm[part];
        if (p.recomputes(RecomputeModule::moe))  // the router's and permutation's bytes (held_moe_bytes)
            for (size_t part : {kRouter, kPermute}) out.in[part].recompute_s += mem_fwd[part];
        redo_ep = w.recompute_dispatch;
    }
    if (redo_ep) {
        out.in[kDispatch].ep_comm_s += fwd_ep[0];
        out.in[kCombine].ep_comm_s += fwd_ep[1];
        out.collective_s[kDispatch] += out.collective_s[kDispatch] / 2;
        out.collective_s[kCombine] += out.collective_s[kCombine] / 2;
    }
    return out;
}

// Each kind's slices under the plan's recompute and plain (index = kind).
struct KindParts {
    std::vector<LayerParts> layer, plain;
};

KindParts kind_parts(const Job& job, const PassSetup& s) {
    const Model& m = job.model;
    ParallelPlan plain = job.plan;
    plain.recompute = Recompute::none;
    KindParts out;
    const size_t kinds = s.kind_time.empty() ? 1 : s.kind_time.size();
    for (size_t k = 0; k < kinds; ++k) {
        const LayerKind& kind = m.kind(static_cast<int>(k));
        const LayerWork& w = s.kind_time.empty() ? s.lw : s.kind_work[k];
        const LayerTime& t = s.kind_time.empty() ? s.layer : s.kind_time[k].layer;
        const LayerTime& tp = s.kind_time.empty() ? s.layer_plain : s.kind_time[k].layer_plain;
        out.layer.push_back(layer_parts(s.ctx, w, kind, job.plan, t));
        out.plain.push_back(job.plan.recompute == Recompute::full ? layer_parts(s.ctx, w, kind, plain, tp)
                                                                  : out.layer.back());
    }
    return out;
}

// The rank whose passes the estimate charges: the first of the largest
// forward + backward over its chunks (phase_passes.cpp).
int charged_rank(const Job& job, const PassSetup& s) {
    const ParallelPlan& p = job.plan;
    int worst = 0;
    double worst_s = -1;
    for (int r = 0; r < p.pp; ++r) {
        PassTime pass;
        for (int c = 0; c < rank_chunks(p); ++c) {
            const LayoutPosition lp = layout_position(p, r, c);
            const StagePass sp = stage_pass(job, s, lp.rank, lp.chunk);
            pass += sp.f;
            pass += sp.b;
        }
        if (pass.total_s() > worst_s) worst_s = pass.total_s(), worst = r;
    }
    return worst;
}

// The slices of one micro-batch's passes of `rank`.
LayerParts rank_parts(const Job& job, const KindParts& kp, int rank) {
    const ParallelPlan& p = job.plan;
    const Model& m = job.model;
    LayerParts out;
    for (int c = 0; c < rank_chunks(p); ++c) {
        const LayoutPosition lp = layout_position(p, rank, c);
        const VirtualStage vs = virtual_stage(job, lp.rank, lp.chunk);
        const int redo = recomputed_of(p, vs.layers);
        const bool full = p.recompute == Recompute::full;
        for (size_t k = 0; k < kp.layer.size(); ++k) {
            const int kind = static_cast<int>(k);
            const int n = m.uniform() ? vs.layers : m.stack->count_in(kind, vs.first, vs.first + vs.layers);
            const int r = !full ? n : m.uniform() ? std::min(n, redo) : m.stack->count_in(kind, vs.first, vs.first + redo);
            out.add(kp.layer[k], r);
            out.add(kp.plain[k], n - r);
        }
        if (vs.mtp > 0) out.add(kp.layer[m.uniform() ? 0 : m.stack->kind_of.back()], vs.mtp);
    }
    return out;
}

// Exposed expert-data-parallel seconds of the step and what the collectives take.
void set_expert_dp(const Job& job, const PassSetup& s, const Breakdown& bd, ExpertWall& w) {
    const ParallelPlan& p = job.plan;
    const double expert = s.first_stage.expert_params;
    if (!(expert > 0) || s.ctx.edp_group.size <= 1) return;
    const PlanContext& ctx = s.ctx;
    const double gb = grad_bytes_per_param(p, job.training.precision);
    double mine = 0, all = 0;
    if (p.zero == 0) {
        mine = collective_time_s(ctx.comm, Collective::all_reduce, ctx.edp_group, expert * gb);
        all = s.dp.all_reduce_s;
    } else {
        mine = collective_time_s(ctx.comm, Collective::reduce_scatter, ctx.edp_group, expert * gb) +
               collective_time_s(ctx.comm, Collective::all_gather, ctx.edp_group,
                                 expert * tensor_bytes(job.training.precision));
        all = s.dp.reduce_scatter_s + s.dp.all_gather_s;
    }
    const double tied = job.model.tied_embeddings && p.pp > 1 ? s.dp.tied_embedding_s : 0.0;
    w.collective_s = mine;
    w.in.dp_comm_s = all > 0 ? std::max(0.0, bd.dp_comm_s - tied) * mine / all : 0.0;
}

}  // namespace

Breakdown ExpertWalls::sum() const {
    Breakdown b;
    for (const ExpertWall& w : walls)
        for (const WallInfo& main : kWalls) b.*main.seconds += w.in.*main.seconds;
    return b;
}

const char* key_of(ExpertWallId id) {
    static constexpr const char* kKeys[] = {"router", "permute", "dispatch", "combine",
                                            "expert_gemm", "shared_experts", "expert_dp"};
    return kKeys[static_cast<size_t>(id)];
}

const char* words_of(ExpertWallId id) {
    static constexpr const char* kWords[] = {"router (gate GEMM, scores, top-k)",
                                             "permute / unpermute (token copies)",
                                             "dispatch all-to-all, exposed",
                                             "combine all-to-all, exposed",
                                             "expert GEMMs (grouped)",
                                             "shared experts' GEMMs",
                                             "expert-DP gradient traffic, exposed"};
    return kWords[static_cast<size_t>(id)];
}

ExpertWalls expert_walls(const Job& job, const Calibration& cal) {
    ExpertWalls out;
    for (int i = 0; i < kExpertWallCount; ++i) out.walls[static_cast<size_t>(i)].id = static_cast<ExpertWallId>(i);
    out.dispatcher = job.plan.moe_dispatcher;
    if (!job.model.is_moe()) return out;
    out.moe = true;
    const PassSetup s = pass_setup(job, cal);
    const PipelinePhase ph = pipeline_phase(job, s, ScheduleModel::closed_form);
    Breakdown bd;
    finish_breakdown(job, cal, s, ph, bd);
    const LayerParts per_mb = rank_parts(job, kind_parts(job, s), charged_rank(job, s));
    const double m = static_cast<double>(ph.micro_batches);
    LayerParts step;
    step.add(per_mb, schedule_info(effective_schedule(job.plan)).two_directions ? m / 2 : m);
    if (!standard_mapping(job.plan)) {  // DualPipe's F&B passes hid part of the all-to-all
        const double passes = step.in[kDispatch].ep_comm_s + step.in[kCombine].ep_comm_s;
        const double keep = passes > 0 ? bd.ep_comm_s / passes : 0.0;
        step.in[kDispatch].ep_comm_s *= keep;
        step.in[kCombine].ep_comm_s *= keep;
    }
    for (size_t i = 0; i < out.walls.size(); ++i) {
        out.walls[i].in = step.in[i];
        out.walls[i].collective_s = step.collective_s[i];
    }
    set_expert_dp(job, s, bd, out.walls[kExpertDp]);
    return out;
}

}  // namespace lostflops
