// The host-speed range of a host-bound step (prediction_interval.h
// host_speed_range): which costs it scales, bounds derived by hand from the
// host-bound flow, and the H200 table's host-bound rows inside it.
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/validate.h"
#include "test_util.h"

namespace lostflops {
namespace {

TEST(HostSpeed, ScalesEveryHostCostAndNothingElse) {
    const Calibration& cal = default_calibration();
    const Calibration c = with_host_speed(cal, 2.0);
    EXPECT_DOUBLE_EQ(c.host_op_us, 2 * cal.host_op_us);
    EXPECT_DOUBLE_EQ(c.host_bwd_op_us, 2 * cal.host_bwd_op_us);
    EXPECT_DOUBLE_EQ(c.hf_host_op_us, 2 * cal.hf_host_op_us);
    EXPECT_DOUBLE_EQ(c.hf_host_bwd_op_us, 2 * cal.hf_host_bwd_op_us);
    EXPECT_DOUBLE_EQ(c.hf_optimizer_tensor_us, 2 * cal.hf_optimizer_tensor_us);
    EXPECT_DOUBLE_EQ(c.hf_backward_call_us, 2 * cal.hf_backward_call_us);
    EXPECT_DOUBLE_EQ(c.hf_zero_grad_tensor_us, 2 * cal.hf_zero_grad_tensor_us);
    EXPECT_DOUBLE_EQ(c.hf_expert_loop_us, 2 * cal.hf_expert_loop_us);
    EXPECT_DOUBLE_EQ(c.compiled_launch_us, 2 * cal.compiled_launch_us);
    // The GPU's side stays: its per-kernel overhead, its idle after a
    // synchronisation, a collective's launch.
    EXPECT_DOUBLE_EQ(c.kernel_overhead_us, cal.kernel_overhead_us);
    EXPECT_DOUBLE_EQ(c.hf_sync_us, cal.hf_sync_us);
    EXPECT_DOUBLE_EQ(c.hf_kernel_gap_us, cal.hf_kernel_gap_us);
    EXPECT_DOUBLE_EQ(c.collective_launch_us, cal.collective_launch_us);
}

// The Qwen2.5-0.5B shape at 2,048 tokens: the GPU waits for the host most of
// the step. Where the GPU waits host_s for a host that issues H, a host
// slower by f issues f H, and the GPU then waits host_s + (f - 1) H, at
// least host_s + (f - 1) host_s longer (H >= host_s); and no step grows by
// more than f, the whole step issued f times slower.
TEST(HostSpeed, HostBoundStepGrowsWithItsHost) {
    const Calibration& cal = default_calibration();
    const Job job = load_job(test::source_path("tests/data/trace/job-h200-qwen05-like-s2048-b1-autocast.yaml"));
    const Estimate e = estimate(job, cal);
    const auto r = host_speed_range(job, e, cal);
    ASSERT_TRUE(r.has_value());
    EXPECT_DOUBLE_EQ(r->factor_lo, kHostSpeedFastest);
    EXPECT_DOUBLE_EQ(r->factor_hi, kHostSpeedSlowest);
    EXPECT_DOUBLE_EQ(r->step_time_s_hi, estimate(job, with_host_speed(cal, kHostSpeedSlowest)).step_time_s);
    EXPECT_DOUBLE_EQ(r->step_time_s_lo, estimate(job, with_host_speed(cal, kHostSpeedFastest)).step_time_s);
    ASSERT_GT(e.breakdown.host_s, 0.3 * e.step_time_s);
    EXPECT_GE(r->step_time_s_hi - e.step_time_s, (kHostSpeedSlowest - 1) * e.breakdown.host_s * (1 - 1e-9));
    EXPECT_LE(r->step_time_s_hi, kHostSpeedSlowest * e.step_time_s);
    EXPECT_LT(r->step_time_s_lo, e.step_time_s);
    EXPECT_GE(r->step_time_s_lo, kHostSpeedFastest * e.step_time_s);
    EXPECT_NEAR(r->tokens_per_s_per_gpu_lo * r->step_time_s_hi, e.tokens_per_s_per_gpu * e.step_time_s,
                1e-6 * e.tokens_per_s_per_gpu * e.step_time_s);
}

// Llama-3.2-1B at 4,096 x 2 tokens keeps the GPU busy: no range.
TEST(HostSpeed, GpuBoundStepHasNone) {
    const Calibration& cal = default_calibration();
    const Job job = load_job(test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-autocast.yaml"));
    const Estimate e = estimate(job, cal);
    EXPECT_LT((e.breakdown.overhead_s + e.breakdown.host_s) / e.step_time_s, kMaxCalibratedOverheadShare);
    EXPECT_FALSE(host_speed_range(job, e, cal).has_value());
}

// Every row of the H200 table that the range applies to ran inside it
// (issue 39: a host-bound single-GPU job's printed range covers its
// measured value); the two host-bound rows at least.
TEST(HostSpeed, HostBoundH200RowsFallInsideTheRange) {
    const std::string table = test::source_path("../shared/reference/h200/measured-runs.csv");
    if (!std::filesystem::exists(table)) GTEST_SKIP() << "../shared/reference/h200 absent";
    const Calibration& cal = default_calibration();
    int ranged = 0;
    for (const MeasuredRun& run : throughput_runs(load_run_table(table))) {
        SCOPED_TRACE(run.name);
        const Estimate e = estimate(run.job, cal);
        const auto r = host_speed_range(run.job, e, cal);
        if (!r) continue;
        ++ranged;
        EXPECT_GE(run.measured_tokens_per_s_per_gpu, r->tokens_per_s_per_gpu_lo);
        EXPECT_LE(run.measured_tokens_per_s_per_gpu, r->tokens_per_s_per_gpu_hi);
    }
    EXPECT_GE(ranged, 2);
}

}  // namespace
}  // namespace lostflops
