// Data behind the report's charts.
// Timeline: explain/pass_model.cpp's passes through schedule/pipeline_timeline.cpp
// (Megatron-LM's per-rank order, Narayanan et al. 2021 sec. 2.2), then the
// breakdown's exposed DP traffic and optimizer step (estimate.cpp adds them
// after the pipeline phase). Roofline (Williams, Waterman, Patterson 2009,
// CACM 52(4)): per operator class, FLOPs / bytes moved against the FLOP/s the
// device model (cost/device_time.cpp) gives it. Memory: estimate/memory.cpp's
// stage_memory per pipeline rank.
#include "explain/report_data.h"

#include <algorithm>

#include "cost/device_time.h"
#include "estimate/memory.h"
#include "explain/pass_model.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/pipeline_timeline.h"

namespace lostflops {

const char* to_string(SegmentKind k) {
    switch (k) {
        case SegmentKind::forward: return "forward";
        case SegmentKind::backward: return "backward";
        case SegmentKind::recompute: return "recompute";
        case SegmentKind::comm: return "TP/CP/EP communication";
        case SegmentKind::host_wait: return "host wait";
        case SegmentKind::dp_comm: return "DP/ZeRO communication";
        case SegmentKind::optimizer: return "optimizer";
    }
    return "?";
}

StepTimeline step_timeline(const Job& job, const Calibration& cal, const Estimate& e) {
    const JobPasses jp = job_passes(job, cal);
    const PipelineTimeline tl = pipeline_timeline(jp.input);
    StepTimeline st;
    st.stages = job.plan.pp;
    st.chunks = rank_chunks(job.plan);
    st.micro_batches = jp.micro_batches;
    st.pipeline_s = tl.result.makespan_s;
    st.bubble_s = tl.result.bubble_s;
    st.busy_max_s = tl.result.busy_max_s;
    for (const TimelinePass& tp : tl.passes) {
        const size_t i = static_cast<size_t>(tp.rank) * st.chunks + tp.op.chunk;
        const PassTime& pt = tp.op.forward ? jp.fwd[i] : jp.bwd[i];
        double t = tp.start_s;
        const auto seg = [&](SegmentKind k, double d) {
            if (d <= 0) return;
            st.segments.push_back(Segment{tp.rank, k, t, t + d, tp.op.micro_batch, tp.op.chunk});
            t += d;
        };
        if (tp.op.kind != PassKind::forward && tp.op.kind != PassKind::backward) {
            // B or W alone, or an F&B pair: one backward segment of its length.
            seg(SegmentKind::backward, tp.end_s - tp.start_s);
            continue;
        }
        if (!tp.op.forward) seg(SegmentKind::recompute, pt.recompute_s);
        seg(tp.op.forward ? SegmentKind::forward : SegmentKind::backward,
            pt.compute_s + pt.memory_bound_s + pt.overhead_s);
        seg(SegmentKind::comm, pt.tp_comm_s + pt.cp_comm_s + pt.ep_comm_s);
        seg(SegmentKind::host_wait, tp.end_s - t);
    }
    const double dp = e.breakdown.dp_comm_s, opt = e.breakdown.optimizer_s;
    for (int r = 0; r < st.stages; ++r) {
        if (dp > 0) st.segments.push_back(Segment{r, SegmentKind::dp_comm, st.pipeline_s, st.pipeline_s + dp, -1, -1});
        if (opt > 0)
            st.segments.push_back(
                Segment{r, SegmentKind::optimizer, st.pipeline_s + dp, st.pipeline_s + dp + opt, -1, -1});
    }
    // The data loader's wait (Breakdown::data_loader_s) ends the step: the
    // GPU waits for the host, drawn as host wait.
    const double loader = e.breakdown.data_loader_s;
    for (int r = 0; r < st.stages && loader > 0; ++r)
        st.segments.push_back(Segment{r, SegmentKind::host_wait, st.pipeline_s + dp + opt,
                                      st.pipeline_s + dp + opt + loader, -1, -1});
    st.step_s = st.pipeline_s + dp + opt + loader;
    return st;
}

Roofline roofline(const Job& job, const Calibration& cal) {
    const PassSetup s = pass_setup(job, cal);
    const DeviceModel& d = s.ctx.dev;
    const LayerWork& w = s.lw;
    Roofline rl;
    rl.peak_flops = d.peak_flops;
    rl.hbm_Bps = d.hbm_Bps;
    // GEMMs with weights: 2mnk FLOPs, A, B and C moved once (forward; backward
    // runs two GEMMs of the same shape class, so the ratio is the same).
    double gf = 0, gb = 0, gt = 0;
    for (int i = 0; i < w.gemm_count; ++i) {
        const GemmShape& g = w.gemms[i];
        gf += g.count * 2 * g.m * g.n * g.k;
        gb += g.count * (g.m * g.k + g.k * g.n + g.m * g.n) * d.bytes_per_element;
        gt += g.count * gemm_time_s(d, g.m, g.n, g.k);
    }
    if (gt > 0) rl.points.push_back({"GEMMs", gf / gb, gf / gt, 3 * gt});
    // Attention core: executed FLOPs forward + backward (FlashAttention-2:
    // backward 2.5x forward); bytes: Q, K, V and O once forward, and about
    // twice that backward (read Q, K, V, O, dO; write dQ, dK, dV).
    const double tokens = static_cast<double>(job.training.micro_batch) * job.training.seq_length / job.plan.cp;
    // The first attention kind's Q, K, V and O (a stack without attention: none).
    double q_dim = 0, kv_dim = 0;
    for (const LayerKind& k : job.model.kinds())
        if (k.has_attention()) {
            q_dim = static_cast<double>(k.attention.heads) * static_cast<double>(k.attention.head_dim);
            kv_dim = static_cast<double>(k.attention.kv_heads) * static_cast<double>(k.attention.head_dim);
            break;
        }
    const double qkvo_bytes = tokens * (2.0 * q_dim + 2.0 * kv_dim) / job.plan.tp * 2.0;
    const double attn_t = attention_layer_s(s);
    double attn_f = 3.5 * w.attention_flops_fwd;
    if (w.unfused) attn_f = 3 * 2 * (w.scores.m * w.scores.n * w.scores.k + w.values.m * w.values.n * w.values.k);
    // A stack without softmax attention (Mamba, linear attention) has no Q, K,
    // V and O here: its scan's time is the mixer's, not drawn as attention.
    if (attn_t > 0 && attn_f > 0 && qkvo_bytes > 0)
        rl.points.push_back({"attention", attn_f / (3 * qkvo_bytes), attn_f / attn_t, attn_t});
    // Memory-bound kernels (norms, activations, residuals, dropout, softmax):
    // ASSUMPTION for the picture only: 1 FLOP per 16-bit element moved, the
    // order of an elementwise kernel; their time is bytes / (HBM * efficiency).
    const double mb = w.mem_bytes_fwd + w.mem_bytes_bwd;
    const double mt = memory_time_s(d, mb);
    if (mt > 0) rl.points.push_back({"memory-bound operators", 0.5, 0.5 * mb / mt, mt});
    return rl;
}

std::vector<MemoryCurve> memory_over_step(const Job& job, const Calibration& cal, const StepTimeline& tl) {
    std::vector<MemoryCurve> out;
    const PassSetup setup = pass_setup(job, cal);
    // A pass's activations grow through its forward and shrink through its
    // backward, layer by layer: ramps. A change over [t0, t1] is a slope
    // change at t0 and its opposite at t1 (an instant change: t0 == t1).
    struct Change {
        double t, slope, jump;
        int order = 0;  // at one instant: frees (0), then allocations (1), then the loss's backward (2)
    };
    for (int r = 0; r < job.plan.pp; ++r) {
        const StageParams sp = stage_params(job, works(setup), setup.hw, r);
        Memory act;
        const ActParts parts =
            memory_activations(job, works(setup), setup.hw, sp, inflight_passes(job, r), r, &act);
        const RankState st = memory_state(job, cal, setup.lw, sp);
        const Memory& m = st.mem;
        // What stays through the step: the state, the gradients alive from
        // the start (persistent buffers, or earlier micro-batches'), the
        // 16-bit weight copies.
        const double copies = (st.autocast_copies ? parts.layer_copies : 0.0) + parts.head_copy;
        const double base = m.weights_bytes + m.optimizer_bytes + m.buffers_bytes + st.first_backward_grads + copies;
        // One chunk pass of one micro-batch: the first backward's
        // activations per whole-stage micro-batch in flight, over the chunks.
        const double per_pass = act.inflight_microbatches > 0
                                    ? parts.activations / act.inflight_microbatches / tl.chunks
                                    : 0.0;
        std::vector<Change> ch;
        const auto ramp = [&](double t0, double t1, double bytes, int order = -1) {
            if (t1 > t0) ch.push_back({t0, bytes / (t1 - t0), 0, 0}), ch.push_back({t1, -bytes / (t1 - t0), 0, 0});
            else ch.push_back({t0, 0, bytes, order >= 0 ? order : bytes < 0 ? 0 : 1});
        };
        // Each (micro-batch, chunk) is added once, at its forward, and freed
        // through its last backward-side segment (a zero-bubble W pass holds
        // what its B pass left; a recompute comes before its backward); the
        // loss's buffers go at its first (the loss's backward comes first).
        struct Backward {
            double first_start = -1, last_start = -1, last_end = -1;
        };
        std::vector<Backward> bwd(static_cast<size_t>(tl.micro_batches * tl.chunks));
        for (const Segment& s : tl.segments) {
            if (s.rank != r || s.micro_batch < 0 || (s.kind != SegmentKind::recompute && s.kind != SegmentKind::backward))
                continue;
            const size_t key = static_cast<size_t>(s.micro_batch) * static_cast<size_t>(tl.chunks) +
                               static_cast<size_t>(s.chunk);
            if (key >= bwd.size()) continue;
            Backward& b = bwd[key];
            if (b.first_start < 0) b.first_start = s.start_s;
            if (s.start_s >= b.last_start) b.last_start = s.start_s, b.last_end = s.end_s;
        }
        double last_bwd_start = -1, last_bwd_end = -1;
        for (const Segment& s : tl.segments) {
            if (s.rank != r) continue;
            if (s.kind == SegmentKind::optimizer && st.optimizer_temp > 0) {
                ramp(s.start_s, s.start_s, st.optimizer_temp);
                ramp(s.end_s, s.end_s, -st.optimizer_temp);
            }
            if (s.kind != SegmentKind::forward || s.micro_batch < 0) continue;
            const size_t key = static_cast<size_t>(s.micro_batch) * static_cast<size_t>(tl.chunks) +
                               static_cast<size_t>(s.chunk);
            ramp(s.start_s, s.end_s, per_pass);
            if (key >= bwd.size() || bwd[key].first_start < 0) continue;
            const Backward& b = bwd[key];
            if (parts.logits > 0 && s.chunk == tl.chunks - 1) {
                ramp(s.end_s, s.end_s, parts.logits);  // the loss's buffers at the forward's end
                ramp(b.first_start, b.first_start, -parts.logits, 2);
            }
            ramp(b.last_start, b.last_end, -per_pass);
            if (b.last_start > last_bwd_start) last_bwd_start = b.last_start, last_bwd_end = b.last_end;
        }
        // The gradients the last micro-batch's backward writes, layer by layer.
        if (last_bwd_end >= 0) {
            ramp(last_bwd_start, last_bwd_end, m.gradients_bytes - st.first_backward_grads);
            ramp(last_bwd_end, last_bwd_end, -copies);  // autocast's cache and FSDP2's root end with the backward
        }
        // At one instant, what is freed goes before what is allocated, and
        // the loss's buffers last (its backward follows its forward).
        std::stable_sort(ch.begin(), ch.end(),
                         [](const Change& a, const Change& b) { return a.t < b.t || (a.t == b.t && a.order < b.order); });
        MemoryCurve c;
        c.rank = r;
        double v = base, slope = 0, t = 0;
        c.points.push_back({0.0, v});
        c.peak_bytes = v;
        for (const Change& e : ch) {
            v += slope * (e.t - t);
            t = e.t;
            c.points.push_back({t, v});
            c.peak_bytes = std::max(c.peak_bytes, v);
            if (e.jump != 0) {
                v += e.jump;
                c.points.push_back({t, v});
                c.peak_bytes = std::max(c.peak_bytes, v);
            }
            slope += e.slope;
        }
        const double end = std::max(t, tl.step_s);
        c.points.push_back({end, v + slope * (end - t)});
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<Memory> memory_per_rank(const Job& job, const Calibration& cal) {
    const PassSetup s = pass_setup(job, cal);
    std::vector<Memory> out;
    for (int r = 0; r < job.plan.pp; ++r) out.push_back(stage_memory(job, cal, works(s), s.lw, s.hw, r));
    return out;
}

}  // namespace lostflops
