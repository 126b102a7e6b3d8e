// Closed forms of the schedules beyond the 1F1B family (the table:
// lostflops/pipeline_schedules.h). F, B, W: means over the passes of one
// chunk; T: a rank's F + B + W per micro-batch over its chunks.
//
// Zero bubble ZB-H1 (Qi et al., ICLR 2024, sec. 2.1): 1F1B's fill and drain,
// (p-1)(F + B + W) for uniform stages, become (p-1)(F + B - W): the W's fill
// the tail. That holds while W <= F and W <= B; derived against the
// simulation of schedule_order.cpp's order, the bubble is
// (p-1) max(F + B - W, F, B) in general. Uneven stages: 1F1B's closed form
// (its longest path, pipeline_closed_form.cpp) less (p-1) T_mean plus the
// above; transfers as 1F1B's.
//
// DualPipe (DeepSeek-V3 Technical Report, sec. 3.2.1, table 2) and DualPipeV
// (deepseek-ai/DualPipe README): bubble (S/2 - 1)(F&B + B + W - 3W) with S
// stages (dualpipe: S = p; dualpipev: S = 2p, F, B, W of half a rank's
// layers). The simulation reproduces it exactly when F = B = W and F&B =
// F + B + W (no overlap gain); when F&B saves time the formula, which adds the
// bubble to the busiest rank, is up to a few per cent long (tests). A rank's
// busy time: M micro-batches per chunk (dualpipe M = m/2, dualpipev M = m)
// times T, less each F&B pair's saving (dual_overlapped_pairs). Transfers: the
// first micro-batch's forward and the last one's backward cross every rank
// boundary once each way: 2(p-1) transfers (dualpipe), 4(p-1) (dualpipev's V
// crosses each boundary twice).
//
// ZB-V (Qi et al., ICLR 2024, sec. 6; the order of zbv_order.cpp): the rank's
// busy time, m (F + B + W) on each chunk, plus (p - 1) max(F, B, 2(B - W)),
// F, B, W of one chunk, derived against the simulation of that order: exact
// for uniform stages with m >= 2p - 1 when B >= F and W <= B (the usual
// passes: B and W each about F), (p - 1) F when F = B = W, a sixth of 1F1B's
// (p - 1)(2F + 2B + 2W) over a rank's two chunks; outside that domain it is
// short (a few per cent of the step at m = 2p; tests). Transfers: the first
// micro-batch's V crosses each rank boundary twice each way, 4(p - 1), and
// the simulation exposes p - 3 more in the drain: 5p - 7 when a transfer is
// small beside a pass (within 4 % at a third of a pass).
#include <algorithm>

#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"
#include "schedule/pipeline_detail.h"

namespace lostflops {

PipelineResult schedule_closed_form(const PipelineSums& in, const PipelineScan& scan, const PipelineResult& family) {
    const int p = in.stages;
    const double c = p > 1 ? in.p2p_s : 0.0;
    const double t_mean = scan.t_sum / p;
    const double f = in.fwd_mean_s, w = in.wgrad_mean_s;
    PipelineResult res;
    const ScheduleInfo& si = schedule_info(in.schedule);
    switch (si.order) {
        case ScheduleOrder::megatron_1f1b: return family;
        case ScheduleOrder::zero_bubble_h1: {
            const double b = t_mean - f - w;  // input gradient
            res.makespan_s = family.makespan_s - (p - 1) * t_mean + (p - 1) * std::max({f + b - w, f, b});
            res.busy_max_s = family.busy_max_s;
            break;
        }
        case ScheduleOrder::zero_bubble_v: {
            // F, B, W of one chunk; a rank runs m of each on both chunks.
            const double b = t_mean / 2 - f - w;  // input gradient
            double busy = 0;
            for (int r = 0; r < p; ++r) busy = std::max(busy, in.micro_batches * in.rank_s[r]);
            res.busy_max_s = busy;
            res.makespan_s = busy + (p - 1) * std::max({f, b, 2 * (b - w)}) + (5.0 * p - 7) * c;
            break;
        }
        case ScheduleOrder::dual_pipe: {
            const bool v_shape = si.stage_mapping == StageMapping::v_shape;
            const double M = v_shape ? in.micro_batches : in.micro_batches / 2;
            double busy = 0, saved_sum = 0;
            for (int r = 0; r < p; ++r) {
                const double saved = in.saved_s != nullptr ? in.saved_s[r] : 0.0;
                saved_sum += saved;
                const int pairs = dual_overlapped_pairs(in.schedule, p, in.micro_batches, r);
                busy = std::max(busy, M * in.rank_s[r] - pairs * saved);
            }
            const double b_full = t_mean / 2 - f;  // one chunk's B + W
            const double fb = f + b_full - saved_sum / p;
            const double half = v_shape ? p - 1.0 : p / 2 - 1.0;
            const double hops = v_shape ? 4.0 * (p - 1) : 2.0 * (p - 1);
            res.busy_max_s = busy;
            res.makespan_s = busy + half * std::max(0.0, fb + b_full - 3 * w) + hops * c;
            break;
        }
    }
    res.bubble_s = res.makespan_s - res.busy_max_s;
    return res;
}

}  // namespace lostflops
