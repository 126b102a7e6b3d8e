// Every pipeline schedule (lostflops/pipeline_schedules.h): closed form
// against the event simulation on small hand-computed cases, and in-flight
// memory against the simulation's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/pipeline_timeline.h"
#include "schedule/pipeline_detail.h"

namespace lostflops {
namespace {

// p stages of `chunks` chunks each with forward F, full backward B + W, weight W.
PipelineInput uniform(PipelineSchedule s, int p, int chunks, int m, double f, double b, double w) {
    PipelineInput in;
    in.schedule = s;
    in.stages = p;
    in.chunks = chunks;
    in.micro_batches = m;
    const size_t n = static_cast<size_t>(p) * chunks;
    in.fwd_s.assign(n, f);
    in.bwd_s.assign(n, b + w);
    in.wgrad_s.assign(n, w);
    return in;
}

TEST(Schedules, OneFOneBBubbleIsPMinusOneTimesFPlusB) {
    for (int p : {2, 4, 8})
        for (int m : {p, 2 * p, 3 * p + 1}) {
            // F = 1, B + W = 2 (W is not split by 1F1B): bubble (p-1)(F+B) = 3(p-1).
            const PipelineInput in = uniform(PipelineSchedule::one_f_one_b, p, 1, m, 1, 1, 1);
            const PipelineResult sim = pipeline_simulate(in);
            EXPECT_DOUBLE_EQ(sim.bubble_s, 3.0 * (p - 1)) << p << " " << m;
            EXPECT_NEAR(pipeline_closed_form(in).makespan_s, sim.makespan_s, 1e-9);
        }
}

TEST(Schedules, ZeroBubbleH1IsAThirdOfOneFOneBWhenFBWAreEqual) {
    for (int p : {2, 4, 8})
        for (int m : {p, 2 * p, 3 * p + 1}) {
            PipelineInput in = uniform(PipelineSchedule::zero_bubble, p, 1, m, 1, 1, 1);
            const PipelineResult zb = pipeline_simulate(in);
            in.schedule = PipelineSchedule::one_f_one_b;
            const PipelineResult plain = pipeline_simulate(in);
            EXPECT_DOUBLE_EQ(zb.bubble_s, (p - 1) * 1.0) << p << " " << m;  // (p-1)(F + B - W)
            EXPECT_DOUBLE_EQ(zb.bubble_s * 3, plain.bubble_s);
            in.schedule = PipelineSchedule::zero_bubble;
            EXPECT_NEAR(pipeline_closed_form(in).makespan_s, zb.makespan_s, 1e-9);
        }
}

TEST(Schedules, ZeroBubbleClosedFormFollowsTheSimulationForOtherRatios) {
    // (F, B, W): the paper's (p-1)(F + B - W) while W <= F, B; (p-1) max(F, B) beyond.
    const double cases[][3] = {{1, 1, 0.5}, {1, 2, 1}, {2, 1, 1}, {1, 1, 0.2}, {1, 1.5, 1.5}, {1, 0.5, 1}};
    for (const auto& c : cases) {
        const PipelineInput in = uniform(PipelineSchedule::zero_bubble, 4, 1, 12, c[0], c[1], c[2]);
        const PipelineResult sim = pipeline_simulate(in);
        EXPECT_NEAR(sim.bubble_s, 3 * std::max({c[0] + c[1] - c[2], c[0], c[1]}), 1e-9) << c[0] << c[1] << c[2];
        EXPECT_NEAR(pipeline_closed_form(in).makespan_s, sim.makespan_s, 1e-9);
    }
}

TEST(Schedules, DualPipeBubbleIsTheDeepSeekFormula) {
    // F = B = W = 1, F&B = F + B + W (nothing hidden): (S/2 - 1)(F&B + B + W - 3W).
    for (const PipelineSchedule s : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev})
        for (int p : {2, 4, 8})
            for (int m : {2 * p, 2 * p + 4, 4 * p}) {
                const PipelineInput in = uniform(s, p, 2, m, 1, 1, 1);
                const PipelineResult sim = pipeline_simulate(in);
                const int stages = s == PipelineSchedule::dualpipe ? p : 2 * p;
                EXPECT_DOUBLE_EQ(sim.bubble_s, (stages / 2 - 1) * (3.0 + 2.0 - 3.0)) << p << " " << m;
                EXPECT_NEAR(pipeline_closed_form(in).makespan_s, sim.makespan_s, 1e-9);
            }
}

TEST(Schedules, DualPipeOverlapHidesCommunicationWithinAFewPercentOfTheSimulation) {
    // Half of each pass is expert all-to-all: an F&B pair hides it behind the other pass.
    for (const PipelineSchedule s : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev})
        for (int p : {4, 8}) {
            PipelineInput in = uniform(s, p, 2, 4 * p, 1, 1, 1);
            in.fwd_comm_s.assign(in.fwd_s.size(), 0.4);
            in.bwd_comm_s.assign(in.fwd_s.size(), 0.4);
            const PipelineResult sim = pipeline_simulate(in);
            const PipelineResult closed = pipeline_closed_form(in);
            PipelineInput plain = in;
            plain.fwd_comm_s.clear();
            plain.bwd_comm_s.clear();
            EXPECT_LT(sim.makespan_s, pipeline_simulate(plain).makespan_s);
            EXPECT_NEAR(closed.makespan_s / sim.makespan_s, 1.0, 0.05) << p;
            EXPECT_GE(closed.makespan_s, sim.makespan_s - 1e-9);
        }
}

// Chunk passes alive (forward run, full backward or W not yet) at each rank's peak, by the order.
std::vector<int> order_peaks(PipelineSchedule s, int p, int chunks, int m) {
    std::vector<int> peaks;
    for (int r = 0; r < p; ++r) {
        int alive = 0, peak = 0;
        for (const PipelineOp& op : schedule_rank_order(s, p, chunks, m, r)) {
            if (op.kind == PassKind::forward) ++alive;
            if (op.kind == PassKind::backward || op.kind == PassKind::weight_grad) --alive;
            peak = std::max(peak, alive);  // an F&B adds one and frees one
        }
        peaks.push_back(peak);
    }
    return peaks;
}

TEST(Schedules, InFlightMicroBatchesMatchTheOrders) {
    for (int p : {2, 4, 6, 8}) {
        const int m = 4 * p;
        const std::vector<int> zb = order_peaks(PipelineSchedule::zero_bubble, p, 1, m);
        const std::vector<int> f1b = order_peaks(PipelineSchedule::one_f_one_b, p, 1, m);
        for (int r = 0; r < p; ++r) {
            EXPECT_EQ(zb[r], p);          // ZB-H1: 1F1B's peak on every rank
            EXPECT_EQ(f1b[r], p - r);
        }
        for (const PipelineSchedule s : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev}) {
            const std::vector<int> peaks = order_peaks(s, p, 2, m);
            int most = 0;
            for (int r = 0; r < p; ++r) {
                const DualAlive a = dual_alive(s, p, r);
                EXPECT_EQ(a.chunk0 + a.chunk1, peaks[r]) << p << " " << r;
                most = std::max(most, peaks[r]);
            }
            // DeepSeek-V3 table 2: PP + 1 stages' activations (dualpipev: 2p + 1 half-stages).
            EXPECT_EQ(most, (s == PipelineSchedule::dualpipe ? p : 2 * p) + 1);
        }
    }
}

TEST(Schedules, DualPipeOverlappedPairsMatchTheOrder) {
    for (const PipelineSchedule s : {PipelineSchedule::dualpipe, PipelineSchedule::dualpipev})
        for (int p : {2, 4, 8})
            for (int r = 0; r < p; ++r) {
                const auto ops = schedule_rank_order(s, p, 2, 3 * p + (3 * p) % 2, r);
                const auto pairs = std::count_if(ops.begin(), ops.end(),
                                                 [](const PipelineOp& op) { return op.kind == PassKind::fwd_bwd; });
                EXPECT_EQ(pairs, dual_overlapped_pairs(s, p, 3 * p + (3 * p) % 2, r));
            }
}

TEST(Schedules, TimelineRecordsSplitPasses) {
    const PipelineTimeline t = pipeline_timeline(uniform(PipelineSchedule::zero_bubble, 4, 1, 8, 1, 1, 1));
    const auto w = std::count_if(t.passes.begin(), t.passes.end(),
                                 [](const TimelinePass& tp) { return tp.op.kind == PassKind::weight_grad; });
    EXPECT_EQ(w, 4 * 8);
}

TEST(Schedules, RequirementsAreChecked) {
    EXPECT_THROW(pipeline_simulate(uniform(PipelineSchedule::dualpipe, 3, 2, 12, 1, 1, 1)), std::invalid_argument);
    EXPECT_THROW(pipeline_simulate(uniform(PipelineSchedule::dualpipe, 4, 2, 6, 1, 1, 1)), std::invalid_argument);
    EXPECT_THROW(pipeline_simulate(uniform(PipelineSchedule::dualpipev, 4, 1, 8, 1, 1, 1)), std::invalid_argument);
    EXPECT_THROW(pipeline_simulate(uniform(PipelineSchedule::zero_bubble, 4, 2, 8, 1, 1, 1)), std::invalid_argument);
    PipelineInput bad = uniform(PipelineSchedule::zero_bubble, 4, 1, 8, 1, 1, 1);
    bad.wgrad_s[0] = 5;  // W above the whole backward
    EXPECT_THROW(pipeline_simulate(bad), std::invalid_argument);
}

TEST(Schedules, TableNamesEverySchedule) {
    for (size_t i = 0; i < kSchedules.size(); ++i) {
        EXPECT_EQ(static_cast<size_t>(kSchedules[i].id), i);
        EXPECT_NE(std::string(kSchedules[i].source), "");
    }
}

}  // namespace
}  // namespace lostflops
