// The profiler's own host cost in a trace comparison (trace_compare.h
// profiler_host_s, add_profiled_prediction; host_speed.h
// estimate_as_profiled): the host events and stalls a trace holds, counted
// by hand; the profiled step predicted from them.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/host_speed.h"
#include "lostflops/job.h"
#include "lostflops/trace.h"
#include "lostflops/trace_compare.h"
#include "lostflops/trace_read.h"
#include "lostflops/walls.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

// Two steps; on the host 5 operators, 3 runtime calls and 1 driver call
// (counted), an instant operator, a Python function and an annotation (not
// counted); the profiler's buffer stalls (300 and 50 us) counted, a launch
// blocked by a full GPU queue ("Command Buffer Full", the GPU's doing) not.
TEST(TraceProfiler, HostEventsAndStallsPerStep) {
    const auto trace = test::make_trace({
        {"ProfilerStep#1", "user_annotation", 0, 1000, -1},
        {"ProfilerStep#2", "user_annotation", 1000, 1000, -1},
        {"aten::mm", "cpu_op", 10, 20, -1},
        {"aten::add", "cpu_op", 40, 5, -1},
        {"aten::view", "cpu_op", 50, 1, -1},
        {"aten::mm", "cpu_op", 1010, 20, -1},
        {"aten::add", "cpu_op", 1040, 5, -1},
        {"cudaLaunchKernel", "cuda_runtime", 15, 4, -1, 1},
        {"cudaLaunchKernel", "cuda_runtime", 41, 3, -1, 2},
        {"cudaLaunchKernel", "cuda_runtime", 1015, 4, -1, 3},
        {"cuLaunchKernel", "cuda_driver", 1041, 2, -1},
        {"forward", "python_function", 5, 100, -1},
        {"Optimizer.step", "user_annotation", 1500, 100, -1},
        {"Activity Buffer Request", "overhead", 1200, 300, -1},
        {"Buffer Flush", "overhead", 1700, 50, -1},
        {"Command Buffer Full", "overhead", 1016, 900, -1},
        {"k1", "kernel", 30, 50, 7, 1},
        {"k2", "kernel", 90, 10, 7, 2},
        {"k1", "kernel", 1030, 50, 7, 3},
    });
    // An instant operator event (no duration to record): not counted.
    std::string text = trace;
    const std::string instant = R"({"ph": "i", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 60, "s": "t"},)";
    text.insert(text.find('[') + 1, instant);
    const TraceData d = read_trace_bytes(text, "t.json");
    EXPECT_EQ(d.host_events, 9u);
    EXPECT_DOUBLE_EQ(d.profiler_overhead_us, 350);
    const RankReport r = analyze(d);
    EXPECT_EQ(r.steps_total, 2);
    EXPECT_DOUBLE_EQ(r.host_events_per_step, 4.5);
    EXPECT_DOUBLE_EQ(r.profiler_overhead_us_per_step, 175);
    // Two such ranks and one without host events: (4.5 x 2 us + 175 us) a step, in seconds.
    RankReport none;
    EXPECT_DOUBLE_EQ(profiler_host_s({r, r, none}, 2.0), (4.5 * 2 + 175) * 1e-6);
    EXPECT_DOUBLE_EQ(profiler_host_s({none}, 2.0), 0);
    // Never more than the measured step (1,000 us here), whatever a trace claims.
    EXPECT_DOUBLE_EQ(profiler_host_s({r}, 1e6), r.mean_step_us * 1e-6);
}

// The Qwen2.5-0.5B shape at 2,048 tokens, host-bound: with X seconds more
// host time a step, the host's operators cost (1 + X / H) times as much (H
// the host time they add up to), so the step grows by X at most (the whole
// of it on the host) and, the GPU waiting for the host most of the step, by
// more than half of it.
TEST(TraceProfiler, ProfiledStepOfAHostBoundJob) {
    const Calibration& cal = default_calibration();
    const Job job = load_job(lostflops::test::source_path("tests/data/trace/job-h200-qwen05-like-s2048-b1-autocast.yaml"));
    const Estimate e = estimate(job, cal);
    const double h = host_scaled_s(job, cal);
    ASSERT_GT(h, e.breakdown.host_s);  // the GPU waits for part of what the host does
    ASSERT_LT(h, 2 * e.step_time_s);
    EXPECT_FALSE(estimate_as_profiled(job, cal, 0).has_value());
    const double x = 0.033;
    const auto p = estimate_as_profiled(job, cal, x);
    ASSERT_TRUE(p.has_value());
    EXPECT_LE(p->step_time_s - e.step_time_s, x * (1 + 1e-9));
    EXPECT_GT(p->step_time_s - e.step_time_s, 0.5 * x);
    // The comparison's profiled column: every wall of the profiled estimate.
    JobComparison c;
    c.walls.resize(4);
    add_profiled_prediction(c, *p, x);
    EXPECT_DOUBLE_EQ(c.profiler_host_s, x);
    EXPECT_DOUBLE_EQ(c.predicted_profiled_step_s, p->step_time_s);
    EXPECT_DOUBLE_EQ(c.predicted_profiled_mfu, p->mfu);
    EXPECT_LT(p->mfu, e.mfu);  // the same FLOPs over a longer step
    EXPECT_DOUBLE_EQ(c.walls[0].predicted_profiled_s, trace_group_s(*p, TraceGroup::compute));
    EXPECT_DOUBLE_EQ(c.walls[3].predicted_profiled_s, trace_group_s(*p, TraceGroup::idle));
}

// No profiled step where it cannot be told: a pipeline (one rank's profiler
// time against the pipeline's host time) and a job without host cost (XLA on
// a TPU: the host's slope in its costs is 0).
TEST(TraceProfiler, NoProfiledStepForAPipelineOrWithoutHostCost) {
    const Calibration& cal = default_calibration();
    const Job pp = load_job(lostflops::test::source_path("tests/data/trace/job-h200-qwen05-like-s2048-b1-autocast.yaml"),
                            {"cluster.num_gpus=2", "cluster.gpus_per_node=2", "parallel.pp=2"});
    EXPECT_FALSE(estimate_as_profiled(pp, cal, 0.033).has_value());
    const Job tpu = load_job(lostflops::test::source_path("data/published/maxtext/runs/maxtext2403-v5e-16b-1x-v5e-256.yaml"));
    EXPECT_DOUBLE_EQ(host_scaled_s(tpu, cal), 0);
    EXPECT_FALSE(estimate_as_profiled(tpu, cal, 0.033).has_value());
}

// The host-bound Qwen2.5-0.5B trace against its job: its idle (the GPU
// waiting for the host) within 15 % once the profiler's host time is in the
// prediction, where without it the prediction is a third short. In sample:
// profiler_event_us comes from this trace's step against its unprofiled run.
TEST(TraceProfiler, HostBoundTraceIdleAsProfiled) {
    LOSTFLOPS_SHARED_TRACE(path, "h200/h200-qwen05-like-s2048-b1-autocast.json.gz");
    const Calibration& cal = default_calibration();
    const Job job = load_job(lostflops::test::source_path("tests/data/trace/job-h200-qwen05-like-s2048-b1-autocast.yaml"));
    const std::vector<RankReport> ranks = {analyze(read_trace(path))};
    const Estimate e = estimate(job, cal);
    JobComparison c = compare_with_estimate(ranks, e, 1, job.cluster.gpu.peak_tflops(job.training.precision) * 1e12, "job");
    const double x = profiler_host_s(ranks, cal.profiler_event_us);
    ASSERT_GT(x, 0.02);
    const auto profiled = estimate_as_profiled(job, cal, x);
    ASSERT_TRUE(profiled.has_value());
    add_profiled_prediction(c, *profiled, x);
    const WallRow& idle = c.walls[3];
    EXPECT_LT(idle.predicted_s, 0.85 * idle.measured_s);
    EXPECT_NEAR(idle.predicted_profiled_s, idle.measured_s, 0.15 * idle.measured_s);
    EXPECT_NEAR(c.predicted_profiled_step_s, c.measured_step_s, 0.15 * c.measured_step_s);
}

}  // namespace
}  // namespace lostflops::trace
