// The pipeline timeline: the same makespan as pipeline_simulate, the bubble
// of 1F1B and interleaved 1F1B against Narayanan et al. 2021's (p-1)/(v*m) on
// uniform stages without transfers, and a job's timeline against estimate()
// with the simulated schedule.
#include <algorithm>
#include <map>
#include <random>
#include <regex>

#include <gtest/gtest.h>

#include "explain/charts.h"
#include "explain/report_data.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_timeline.h"

namespace lostflops {
namespace {

PipelineInput uniform(int p, int v, int m, double f, double b) {
    PipelineInput in;
    in.stages = p;
    in.chunks = v;
    in.micro_batches = m;
    in.fwd_s.assign(static_cast<size_t>(p * v), f);
    in.bwd_s.assign(static_cast<size_t>(p * v), b);
    return in;
}

TEST(PipelineTimeline, MakespanEqualsTheSimulationOnRandomInputs) {
    std::mt19937 rng(20261123);
    std::uniform_real_distribution<double> t(0.1, 2.0);
    for (int trial = 0; trial < 200; ++trial) {
        const int p = 1 + static_cast<int>(rng() % 8);
        const int v = 1 + static_cast<int>(rng() % 4);
        const int m = (v > 1 ? p : 1) * (1 + static_cast<int>(rng() % 6));
        PipelineInput in = uniform(p, v, m, 0, 0);
        for (auto& x : in.fwd_s) x = t(rng);
        for (auto& x : in.bwd_s) x = t(rng);
        in.p2p_s = (rng() % 2) ? 0.0 : 0.05;
        const PipelineTimeline tl = pipeline_timeline(in);
        const PipelineResult ref = pipeline_simulate(in);
        EXPECT_DOUBLE_EQ(tl.result.makespan_s, ref.makespan_s);
        EXPECT_DOUBLE_EQ(tl.result.bubble_s, ref.bubble_s);
        ASSERT_EQ(tl.passes.size(), static_cast<size_t>(2 * p * v * m));
        // One pass at a time per rank.
        for (size_t i = 1; i < tl.passes.size(); ++i)
            if (tl.passes[i].rank == tl.passes[i - 1].rank) { EXPECT_GE(tl.passes[i].start_s, tl.passes[i - 1].end_s); }
    }
}

TEST(PipelineTimeline, BubbleIsNarayanansFractionOnUniformStages) {
    // (p, v, m): 1F1B and interleaved; forward 1, backward 2 per chunk, no p2p.
    const int cases[][3] = {{4, 1, 8}, {4, 2, 8}, {8, 1, 16}, {8, 4, 16}, {2, 3, 4}, {4, 5, 12}, {16, 2, 32}};
    for (const auto& c : cases) {
        const int p = c[0], v = c[1], m = c[2];
        SCOPED_TRACE(::testing::Message() << "p=" << p << " v=" << v << " m=" << m);
        const PipelineTimeline tl = pipeline_timeline(uniform(p, v, m, 1.0 / v, 2.0 / v));
        const double expected = static_cast<double>(p - 1) / (v * m);
        EXPECT_NEAR(tl.result.bubble_s / tl.result.busy_max_s, expected, 1e-9);
        // Of the step (the pipeline phase): (p-1) / (v*m + p-1).
        EXPECT_NEAR(tl.result.bubble_s / tl.result.makespan_s, (p - 1.0) / (v * m + p - 1.0), 1e-9);
    }
}

TEST(PipelineTimeline, InterleavingShrinksTheBubbleOfAJob) {
    const Calibration cal = default_calibration();
    const Job plain = default_job({"parallel.vpp=1"});
    const Job inter = default_job();  // vpp 5
    ASSERT_GT(inter.plan.vpp, 1);
    const StepTimeline a = step_timeline(plain, cal, estimate(plain, cal));
    const StepTimeline b = step_timeline(inter, cal, estimate(inter, cal));
    EXPECT_LT(b.bubble_s, a.bubble_s * 0.5);
    // Bubbles as idle time on the rows: rank 0 waits at the end of the phase in both.
    const double m = static_cast<double>(a.micro_batches);
    EXPECT_NEAR(a.bubble_s / a.busy_max_s, (plain.plan.pp - 1) / m, 0.05);
    EXPECT_NEAR(b.bubble_s / b.busy_max_s, (inter.plan.pp - 1) / (inter.plan.vpp * m), 0.05);
}

TEST(PipelineTimeline, JobTimelineMatchesEstimateWithTheSimulatedSchedule) {
    const Calibration cal = default_calibration();
    for (const auto& sets : std::vector<std::vector<std::string>>{
             {}, {"parallel.vpp=1"}, {"parallel.recompute=full"}, {"parallel.pp=8", "parallel.vpp=2", "parallel.dp=16"},
             {"parallel.pp=1", "parallel.vpp=1", "parallel.dp=128"}}) {
        const Job job = default_job(sets);
        const Estimate e = estimate(job, cal, ScheduleModel::simulation);
        const Breakdown& bd = e.breakdown;
        const StepTimeline t = step_timeline(job, cal, e);
        EXPECT_NEAR(t.step_s, e.step_time_s, 1e-9 * e.step_time_s) << ::testing::PrintToString(sets);
        EXPECT_NEAR(t.pipeline_s, e.step_time_s - bd.dp_comm_s - bd.optimizer_s, 1e-9 * e.step_time_s);
        for (const Segment& s : t.segments) {
            EXPECT_GE(s.start_s, 0);
            EXPECT_LE(s.end_s, t.step_s * (1 + 1e-12));
            EXPECT_GE(s.end_s, s.start_s);
        }
    }
}

// The whole-step chart with more passes than pixels: each kind's area is its
// time (a column used to go wholly to the kind that filled most of it, so
// 1F1B's steady state was drawn all backward, without forward, recompute or
// TP communication).
TEST(PipelineTimeline, ChartAreaOfEachKindIsItsTime) {
    const Calibration cal = default_calibration();
    const Job job = default_job({"parallel.recompute=full", "training.global_batch_size=4096"});
    const Estimate e = estimate(job, cal, ScheduleModel::simulation);
    const StepTimeline t = step_timeline(job, cal, e);
    const std::string svg = timeline_svg(t, 0, "tl", "timeline");
    // The chart's geometry (chart_timeline.cpp): 960 px wide, 70 + 20 margins, rows below y = 44.
    const double plot_w = 960 - 70 - 20, row_h = std::clamp(420.0 / t.stages, 9.0, 30.0) - 4;
    ASSERT_GT(t.segments.size(), static_cast<size_t>(t.stages) * 445 / 2) << "not the binned drawing";
    std::map<std::string, double> time_s, area;
    for (const Segment& sg : t.segments) time_s[to_string(sg.kind)] += sg.end_s - sg.start_s;
    const std::map<std::string, std::string> cls = {
        {"tl-fwd", "forward"}, {"tl-bwd", "backward"}, {"tl-rec", "recompute"}, {"tl-comm", "TP/CP/EP communication"},
        {"tl-host", "host wait"}, {"tl-dp", "DP/ZeRO communication"}, {"tl-opt", "optimizer"}};
    const std::regex rect(R"re(<rect class="([a-z-]+)" x="[-0-9.]+" y="([-0-9.]+)" width="([-0-9.]+)" height="([-0-9.]+)")re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        if (std::stod(m[2]) < 44 || cls.count(m[1]) == 0) continue;  // the legend, the idle background
        area[cls.at(m[1])] += std::stod(m[3]) * std::stod(m[4]);
    }
    double busy = 0;
    for (const auto& [k, v] : time_s) busy += v;
    ASSERT_GT(time_s["recompute"], 0);
    ASSERT_GT(time_s["TP/CP/EP communication"], 0);
    for (const auto& [kind, s] : time_s) {
        if (s < 0.02 * busy) continue;  // a kind this small is within the 1/16-row rounding
        const double want = s / t.step_s * plot_w * row_h;
        EXPECT_NEAR(area[kind], want, 0.05 * want) << kind;
    }
}

}  // namespace
}  // namespace lostflops
