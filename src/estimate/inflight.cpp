// In-flight activations of the pipeline schedules, by their order's family
// (ScheduleInfo::order). Zero-bubble, ZB-V and
// DualPipe(V): their rows of lostflops/pipeline_schedules.h, counted from
// schedule/schedule_order.cpp's orders (tests hold the two together).
// Megatron-LM's schedules
// (megatron/core/pipeline_parallel/schedules.py):
//   1F1B (forward_backward_pipelining_without_interleaving):
//     warm-up = min(p - r - 1, m) forwards, then one forward before each
//     backward: alive = min(p - r, m) micro-batches.
//   interleaved (forward_backward_pipelining_with_interleaving), over m*v
//     chunk passes: warm-up = min(2(p - r - 1) + (v - 1)p, m v); Megatron
//     (Megatron-LM, and Megatron-Core through its 2024 releases) runs all
//     m v in warm-up when m == p ("run all forward passes and then all
//     backward passes"; later Megatron-Core's get_pp_rank_microbatches
//     dropped that case, not modelled); other stacks keep the formula; the
//     steady state runs one forward before each backward, so
//     alive = min(warm-up + 1, m v) chunk passes. Forward pass k runs chunk
//     (k mod pv) / p, so chunk c holds p per full group of pv passes plus
//     min(p, max(0, rest - c p)).
// Megatron-Core's expert all-to-all overlap (moe_a2a_overlap) pairs one
// micro-batch's forward with another's backward, so one more forward runs
// before each backward: interleaved, "we schedule one extra micro-batch
// forward step before the 1f1b stages" (schedules.py
// get_pp_rank_microbatches: warm-up + 1); without a pipeline, combined
// 1F1B's "1st microbatch backward + 2nd microbatch forward"
// (combined_1f1b.py combined_1f1b_schedule_for_no_pipelining): two alive.
// Each alive pass keeps one chunk's activations for one micro-batch; rank 0
// with m > p holds p(1 + (p-1)/(pv)) stage units (Korthikanti et al. 2022,
// sec. 4.2.3).
// MaxText's pipeline on a TPU (training.xla; AI-Hypercomputer/maxtext
// src/maxtext/layers/pipeline.py @e591f30, Pipeline.__call__): the forward
// is one jax.lax.scan of m r + forwarding_delay (p - 1) iterations (r =
// num_pipeline_repeats, here vpp), each running, vmapped over the stages,
// one chunk of every stage; the backward is the scan's autodiff, in reverse
// after the whole forward (GPipe's order, circular). Under the scan's
// jax.checkpoint (get_pipeline_remat_policy: save_only_these_names
// "iteration_input", "decoder_layer_input", with the remat policy's) each
// iteration's saved tensors stay alive until the backward reaches it:
// every rank holds all m v chunk passes, m stage units, at its first
// backward; with m = p (base.yml's default num_pipeline_microbatches -1 =
// the stages) that is 1F1B's rank 0, with m > p more.
#include "estimate/inflight.h"

#include <algorithm>

#include "estimate/memory.h"
#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"
#include "job/stage_layout.h"

namespace lostflops {

InFlight inflight_passes(const Job& job, int rank) {
    const ParallelPlan& p = job.plan;
    const int64_t m = p.micro_batches(job.training);
    const int64_t pp = p.pp, v = p.vpp, r = rank;
    const int64_t total = m * v;
    InFlight f;
    const PipelineSchedule sched = effective_schedule(p);
    const ScheduleOrder order = schedule_info(sched).order;
    if (order == ScheduleOrder::zero_bubble_h1) {
        // ZB-H1 delays rank r's W by r: every rank holds min(p, m) (schedule_order.cpp).
        f.warmup = std::min(pp - r - 1, m);
        f.alive = std::min(pp, m);
        f.first_chunk = static_cast<double>(f.alive);
        f.stage_units = static_cast<double>(f.alive);
        return f;
    }
    if (order == ScheduleOrder::dual_pipe || order == ScheduleOrder::zero_bubble_v) {
        // Per chunk, closed form (schedule_order.cpp dual_alive, zbv_order.cpp
        // zbv_alive); a stage unit is the rank's two chunks, weighted by their layers.
        const DualAlive a = order == ScheduleOrder::dual_pipe ? dual_alive(sched, p.pp, rank)
                                                              : zbv_alive(p.pp, static_cast<int>(m), rank);
        f.dual_chunk[0] = a.chunk0;
        f.dual_chunk[1] = a.chunk1;
        f.alive = a.chunk0 + a.chunk1;
        f.warmup = f.alive;
        double layers[2] = {0, 0};
        for (int c = 0; c < 2; ++c) {
            const LayoutPosition lp = layout_position(p, rank, c);
            const VirtualStage vs = virtual_stage(job, lp.rank, lp.chunk);
            layers[c] = vs.layers;
            if (vs.embedding) f.first_chunk = static_cast<double>(f.dual_chunk[c]);
        }
        const double sum = layers[0] + layers[1];
        f.stage_units = sum > 0 ? (a.chunk0 * layers[0] + a.chunk1 * layers[1]) / sum : 0.5 * static_cast<double>(f.alive);
        return f;
    }
    // Pipelines without interleaving run no overlap (Megatron-Core asserts
    // vpp with pp > 1: the a2a_overlap_setup rule of lostflops/framework_rules.h).
    const int64_t overlap = p.moe_a2a_overlap && job.model.is_moe() && (pp == 1 || v > 1) ? 1 : 0;
    if (maxtext_scan(job)) {
        // MaxText's scan: every chunk pass of every micro-batch before the
        // first backward (the header's MaxText paragraph), m on each chunk
        // whatever its layers.
        f.warmup = f.alive = total;
        f.every_chunk = m;
        f.first_chunk = f.stage_units = static_cast<double>(m);
        return f;
    }
    if (v == 1) {
        f.warmup = std::min(pp - r - 1 + overlap, m);
    } else if (m == pp && (job.training.framework == Framework::megatron_lm ||
                           job.training.framework == Framework::megatron_core)) {
        f.warmup = total;
    } else {
        f.warmup = std::min(2 * (pp - r - 1) + (v - 1) * pp + overlap, total);
    }
    f.alive = std::min(f.warmup + 1, total);
    const int64_t group = pp * v;
    const int64_t full = f.alive / group, rest = f.alive % group;
    f.first_chunk = static_cast<double>(full * pp + std::clamp<int64_t>(rest, 0, pp));
    // Even split: every chunk has the same layers.
    if (job.model.layers % group == 0 || !default_split(p)) {
        f.stage_units = static_cast<double>(f.alive) / static_cast<double>(v);
        return f;
    }
    // Chunk c holds n_c alive passes; the light chunks (the first `head` and
    // the last `tail`) one layer fewer: layers alive = (base + 1) * alive -
    // the light chunks' passes, in closed form (O(1) for any vpp).
    const RankSplit rs = default_rank_split(job.model.layers, static_cast<int>(pp), static_cast<int>(v), rank);
    const int64_t q = rest / pp, rr = rest % pp;
    const auto passes_before = [&](int64_t a) {  // chunks [0, a)
        return a * full * pp + pp * std::min(a, q) + (a > q ? rr : 0);
    };
    const int64_t light_passes = passes_before(rs.head) + passes_before(v) - passes_before(v - rs.tail);
    const double layers_alive = static_cast<double>((rs.base + 1) * f.alive - light_passes);
    f.stage_units = layers_alive / static_cast<double>(rs.layers());
    return f;
}

}  // namespace lostflops
