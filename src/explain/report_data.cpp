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
    st.step_s = st.pipeline_s + dp + opt;
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
    if (attn_t > 0 && attn_f > 0) rl.points.push_back({"attention", attn_f / (3 * qkvo_bytes), attn_f / attn_t, attn_t});
    // Memory-bound kernels (norms, activations, residuals, dropout, softmax):
    // ASSUMPTION for the picture only: 1 FLOP per 16-bit element moved, the
    // order of an elementwise kernel; their time is bytes / (HBM * efficiency).
    const double mb = w.mem_bytes_fwd + w.mem_bytes_bwd;
    const double mt = memory_time_s(d, mb);
    if (mt > 0) rl.points.push_back({"memory-bound operators", 0.5, 0.5 * mb / mt, mt});
    return rl;
}

std::vector<MemoryCurve> memory_over_step(const StepTimeline& tl, const std::vector<Memory>& ranks) {
    std::vector<MemoryCurve> out;
    // A pass's activations grow through its forward and shrink through its
    // backward, layer by layer: ramps. A change over [t0, t1] is a slope
    // change at t0 and its opposite at t1 (an instant change: t0 == t1).
    struct Change {
        double t, slope, jump;
    };
    for (size_t r = 0; r < ranks.size(); ++r) {
        const Memory& m = ranks[r];
        // What stays: the state at the peak less the passes' share.
        const double base = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes +
                            (m.buffers_bytes - m.fragmentation_bytes) + m.weight_copies_bytes;
        // One chunk pass of one micro-batch: the in-flight activations per
        // whole-stage micro-batch, split over the rank's chunks.
        const double per_pass = m.inflight_microbatches > 0 && m.moment == MemoryMoment::first_backward
                                    ? m.activations_bytes / m.inflight_microbatches / tl.chunks
                                    : 0.0;
        std::vector<Change> ch;
        const auto ramp = [&](double t0, double t1, double bytes) {
            if (t1 > t0) ch.push_back({t0, bytes / (t1 - t0), 0}), ch.push_back({t1, -bytes / (t1 - t0), 0});
            else ch.push_back({t0, 0, bytes});
        };
        for (const Segment& s : tl.segments) {
            if (s.rank != static_cast<int>(r)) continue;
            const bool loss = m.logits_bytes > 0 && s.chunk == tl.chunks - 1;
            if (s.kind == SegmentKind::forward) {
                ramp(s.start_s, s.end_s, per_pass);
                if (loss) ramp(s.end_s, s.end_s, m.logits_bytes);  // the loss's buffers at the forward's end
            } else if (s.kind == SegmentKind::recompute) {
                if (loss) ramp(s.start_s, s.start_s, -m.logits_bytes);  // the loss's backward comes first
            } else if (s.kind == SegmentKind::backward) {
                ramp(s.start_s, s.end_s, -per_pass);
            } else if (s.kind == SegmentKind::optimizer && m.temporary_bytes > 0) {
                ramp(s.start_s, s.start_s, m.temporary_bytes);
                ramp(s.end_s, s.end_s, -m.temporary_bytes);
            }
        }
        std::stable_sort(ch.begin(), ch.end(), [](const Change& a, const Change& b) { return a.t < b.t; });
        MemoryCurve c;
        c.rank = static_cast<int>(r);
        double v = base, slope = 0, t = 0;
        c.points.push_back({0.0, v});
        c.peak_bytes = v;
        for (const Change& e : ch) {
            v += slope * (e.t - t);
            t = e.t;
            c.points.push_back({t, v});
            if (e.jump != 0) {
                v += e.jump;
                c.points.push_back({t, v});
            }
            slope += e.slope;
            c.peak_bytes = std::max(c.peak_bytes, v);
        }
        c.points.push_back({std::max(t, tl.step_s), v + slope * (std::max(t, tl.step_s) - t)});
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
