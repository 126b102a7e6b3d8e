// Zero-bubble V (ZB-V, torchtitan's ZBVZeroBubble; schedule/zbv_order.cpp):
// its closed form against the event simulation of its order, its passes run
// once each for any m (PyTorch pads the order to 2p - 1 micro-batches), and
// its in-flight rule against the order.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <vector>

#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops {
namespace {

// p ranks of two chunks, each pass F, B (input gradient), W of one chunk.
PipelineInput zbv_input(int p, int m, double f, double b, double w, double p2p_s = 0) {
    PipelineInput in;
    in.schedule = PipelineSchedule::zbv;
    in.stages = p;
    in.chunks = 2;
    in.micro_batches = m;
    in.fwd_s.assign(static_cast<size_t>(2 * p), f);
    in.bwd_s.assign(static_cast<size_t>(2 * p), b + w);
    in.wgrad_s.assign(static_cast<size_t>(2 * p), w);
    in.p2p_s = p2p_s;
    return in;
}

TEST(ZbvSchedule, BubbleIsPMinusOneForwardsWhenFBWAreEqual) {
    for (int p : {2, 3, 4, 8})
        for (int m : {2 * p - 1, 2 * p, 3 * p + 1}) {
            const PipelineInput in = zbv_input(p, m, 1, 1, 1);
            const PipelineResult sim = pipeline_simulate(in);
            EXPECT_NEAR(sim.bubble_s, p - 1.0, 1e-9) << p << " " << m;
            EXPECT_NEAR(pipeline_closed_form(in).makespan_s, sim.makespan_s, 1e-9) << p << " " << m;
            // 1F1B on the same ranks (one stage of both chunks' layers): (p - 1)(2F + 2B + 2W), six times more.
            PipelineInput plain = in;
            plain.schedule = PipelineSchedule::one_f_one_b;
            plain.chunks = 1;
            plain.fwd_s.assign(static_cast<size_t>(p), 2.0);
            plain.bwd_s.assign(static_cast<size_t>(p), 4.0);
            plain.wgrad_s.clear();
            EXPECT_NEAR(pipeline_simulate(plain).bubble_s, 6 * sim.bubble_s, 1e-9) << p << " " << m;
        }
}

TEST(ZbvSchedule, ClosedFormWithinOnePercentOfTheSimulation) {
    // (F, B, W) of one chunk with B >= F and W <= B, the closed form's domain; a small transfer.
    const double cases[][3] = {{1, 1, 1}, {1, 1.2, 0.9}, {1, 1.5, 0.7}, {1, 2, 1}, {1, 1, 0.5}, {1, 2.5, 2}};
    for (const auto& c : cases)
        for (int p : {2, 4, 8})
            for (int m : {2 * p - 1, 2 * p, 4 * p})
                for (double p2p : {0.0, 0.02}) {
                    const PipelineInput in = zbv_input(p, m, c[0], c[1], c[2], p2p);
                    const double sim = pipeline_simulate(in).makespan_s, closed = pipeline_closed_form(in).makespan_s;
                    EXPECT_NEAR(closed / sim, 1.0, 0.01) << c[0] << " " << c[1] << " " << c[2] << " p " << p << " m " << m;
                    if (p2p == 0) {
                        EXPECT_NEAR(closed, sim, 1e-9 * sim) << c[1] << " " << c[2] << " p " << p << " m " << m;
                    }
                }
}

TEST(ZbvSchedule, EachPassRunsOnceAndWAfterItsB) {
    for (int p : {1, 2, 3, 5, 8})
        for (int m : {1, p, 2 * p - 1, 2 * p + 3}) {
            for (int r = 0; r < p; ++r) {
                // (chunk, micro-batch) -> index of its F, B, W in the rank's order.
                std::map<std::pair<int, int>, std::array<int, 3>> at;
                const std::vector<PipelineOp> ops = schedule_rank_order(PipelineSchedule::zbv, p, 2, m, r);
                ASSERT_EQ(ops.size(), static_cast<size_t>(6 * m)) << p << " " << m << " " << r;
                for (size_t i = 0; i < ops.size(); ++i) {
                    const PipelineOp& op = ops[i];
                    ASSERT_TRUE(op.kind == PassKind::forward || op.kind == PassKind::input_grad ||
                                op.kind == PassKind::weight_grad);
                    const int k = op.kind == PassKind::forward ? 0 : op.kind == PassKind::input_grad ? 1 : 2;
                    auto [it, fresh] = at.try_emplace({op.chunk, op.micro_batch}, std::array<int, 3>{-1, -1, -1});
                    EXPECT_EQ(it->second[k], -1) << "twice: rank " << r << " chunk " << op.chunk;
                    it->second[k] = static_cast<int>(i);
                }
                EXPECT_EQ(at.size(), static_cast<size_t>(2 * m));
                for (const auto& [key, idx] : at) {
                    EXPECT_LT(idx[0], idx[1]) << p << " " << m << " " << r;
                    EXPECT_LT(idx[1], idx[2]) << p << " " << m << " " << r;
                }
            }
            // The ranks' orders together run without deadlock.
            EXPECT_NO_THROW(pipeline_simulate(zbv_input(p, m, 1, 1.2, 0.8, 0.01))) << p << " " << m;
        }
}

TEST(ZbvSchedule, InFlightPassesMatchTheOrder) {
    for (int p : {2, 3, 4, 8})
        for (int m : {1, p, 2 * p - 2, 2 * p - 1, 3 * p}) {
            if (m < 1) continue;
            for (int r = 0; r < p; ++r) {
                int alive[2] = {0, 0}, peak = 0, peak0 = 0, peak1 = 0;
                for (const PipelineOp& op : schedule_rank_order(PipelineSchedule::zbv, p, 2, m, r)) {
                    if (op.kind == PassKind::forward) ++alive[op.chunk];
                    if (op.kind == PassKind::weight_grad) --alive[op.chunk];
                    if (alive[0] + alive[1] > peak) peak = alive[0] + alive[1], peak0 = alive[0], peak1 = alive[1];
                }
                const DualAlive a = zbv_alive(p, m, r);
                EXPECT_EQ(a.chunk0, peak0) << p << " " << m << " " << r;
                EXPECT_EQ(a.chunk1, peak1) << p << " " << m << " " << r;
                // 1F1B's peak of p micro-batches of a rank's layers (2p half-stage passes), the paper's claim.
                if (m >= 2 * p - 1) {
                    EXPECT_EQ(peak, 2 * p);
                }
            }
        }
}

TEST(ZbvSchedule, TheRowIsTorchtitansZBVZeroBubbleSearchedAtVpp2) {
    const ScheduleInfo& si = schedule_info(PipelineSchedule::zbv);
    EXPECT_STREQ(si.name, "zbv");
    EXPECT_STREQ(si.torchtitan_name, "ZBVZeroBubble");
    EXPECT_EQ(si.stage_mapping, StageMapping::v_shape);
    EXPECT_TRUE(si.splits_weight_grad);
    EXPECT_FALSE(si.overlaps_fwd_bwd);
    EXPECT_EQ(si.search_twin_vpp, 2);
    EXPECT_TRUE(runs_on(PipelineSchedule::zbv, LaunchStack::torchtitan));
    EXPECT_FALSE(runs_on(PipelineSchedule::zbv, LaunchStack::megatron_core));
    EXPECT_FALSE(runs_on(PipelineSchedule::zbv, LaunchStack::deepspeed));
}

}  // namespace
}  // namespace lostflops
