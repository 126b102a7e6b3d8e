// The host-speed range of a host-bound step (host_speed.h
// host_speed_range): which costs it scales, bounds derived by hand from the
// host-bound flow, and the H200 table's host-bound rows inside it.
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/calibration_fields.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/host_speed.h"
#include "lostflops/report.h"
#include "lostflops/validate.h"
#include "test_util.h"

namespace lostflops {
namespace {

// Every scalar of the profile is either a host cost the range scales or one
// it leaves (the GPU's side, the engine's start and finish, the memory and
// efficiency factors): a field added later fails here until it is sorted.
TEST(HostSpeed, ScalesEveryHostCostAndNothingElse) {
    const std::set<std::string> scaled = {"host_op_us",        "host_bwd_op_us",        "hf_host_op_us",
                                          "hf_host_bwd_op_us", "hf_optimizer_tensor_us", "hf_zero_grad_tensor_us",
                                          "hf_expert_loop_us", "compiled_launch_us", "cuda_graph_node_us"};
    const std::set<std::string> left = {
        "gemm_k_half",          "sustained_compute",         "kernel_overhead_us",      "collective_launch_us",
        "hf_backward_call_us",  "hf_sync_us",                "hf_kernel_gap_us",        "hf_upcast_hbm_fraction",
        "hf_broadcast_hbm_fraction", "hf_strided_hbm_fraction", "hf_masked_attention_fwd_fraction", "hf_power_bound_gemm_fraction",
        "hf_masked_attention_bwd_fraction", "fp32_gemm_efficiency", "bus_eff_intra",
        "bus_eff_inter",        "p2p_eff",                   "dp_overlap",              "tp_overlap",
        "overlap_slowdown",     "optimizer_bytes_per_param", "memory_usable_fraction",  "memory_reserved_bytes",
        "cuda_context_bytes",   "workspace_bytes",           "profiler_event_us"};
    const Calibration& cal = default_calibration();
    const Calibration c = with_host_speed(cal, 2.0);
    for (const calib::ScalarField& f : calib::kScalarFields) {
        SCOPED_TRACE(f.key);
        ASSERT_TRUE(scaled.count(f.key) + left.count(f.key) == 1) << "sort the field into one list";
        EXPECT_DOUBLE_EQ(c.*f.member, (scaled.count(f.key) ? 2.0 : 1.0) * (cal.*f.member));
    }
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

// Llama-3.2-1B at 4,096 x 2 tokens keeps the GPU busy: its host, even at
// the slowest speed, stays behind the GPU; no range, no line, no key.
TEST(HostSpeed, GpuBoundStepHasNone) {
    const Calibration& cal = default_calibration();
    const Job job = load_job(test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-autocast.yaml"));
    const Estimate e = estimate(job, cal);
    EXPECT_LT(estimate(job, with_host_speed(cal, kHostSpeedSlowest)).step_time_s,
              (1 + kHostSpeedShownShare) * e.step_time_s);
    EXPECT_FALSE(host_speed_range(job, e, cal).has_value());
    const ReportExtras x = estimate_extras(job, e, cal, std::nullopt);
    EXPECT_EQ(estimate_table(job, e, x).find("host speed"), std::string::npos);
    EXPECT_FALSE(estimate_json(job, e, x).contains("host_speed_range"));
}

// The host-bound job's estimate says it, in text and JSON.
TEST(HostSpeed, EstimateShowsTheRange) {
    const Calibration& cal = default_calibration();
    const Job job = load_job(test::source_path("tests/data/trace/job-h200-qwen05-like-s2048-b1-autocast.yaml"));
    const Estimate e = estimate(job, cal);
    const ReportExtras x = estimate_extras(job, e, cal, std::nullopt);
    ASSERT_TRUE(x.host_speed.has_value());
    EXPECT_NE(estimate_table(job, e, x).find("host speed: with 0.79–1.67 x the calibrated CPU time per operator"),
              std::string::npos);
    const nlohmann::json j = estimate_json(job, e, x).at("host_speed_range");
    EXPECT_DOUBLE_EQ(j.at("factor")[0].get<double>(), kHostSpeedFastest);
    EXPECT_DOUBLE_EQ(j.at("factor")[1].get<double>(), kHostSpeedSlowest);
    EXPECT_DOUBLE_EQ(j.at("step_time_s")[1].get<double>(), x.host_speed->step_time_s_hi);
    EXPECT_DOUBLE_EQ(j.at("tokens_per_s_per_gpu")[0].get<double>(), x.host_speed->tokens_per_s_per_gpu_lo);
}

// Every host-bound row of the H200 table (launches and host wait beyond
// any published run's share: the estimate marks it outside calibration) ran
// inside its range (issue 39: a host-bound single-GPU job's printed range
// covers its measured value); the two host-bound rows at least. Not a test
// of an interval: the range holds the estimate, so a row predicted within
// the range's width passes. A GPU-bound row can have a range too, when a
// slower host would hold up its forward (the Qwen2.5-0.5B shape at 4,096 x
// 4 under FSDP2: 3.9 % fewer tokens a second at 1.67 times the calibration's
// host); its error is the GPU's, and it is not checked here.
TEST(HostSpeed, HostBoundRowsRanInsideTheirRange) {
    const std::string table = test::source_path("../shared/reference/h200/measured-runs.csv");
    if (!std::filesystem::exists(table)) GTEST_SKIP() << "../shared/reference/h200 absent";
    const Calibration& cal = default_calibration();
    int host_bound = 0;
    for (const MeasuredRun& run : throughput_runs(load_run_table(table))) {
        SCOPED_TRACE(run.name);
        const Estimate e = estimate(run.job, cal);
        const auto r = host_speed_range(run.job, e, cal);
        if (!r) continue;
        const double share = (e.breakdown.overhead_s + e.breakdown.host_s) / e.step_time_s;
        if (share <= kMaxCalibratedOverheadShare) continue;
        ++host_bound;
        EXPECT_GE(run.measured_tokens_per_s_per_gpu, r->tokens_per_s_per_gpu_lo);
        EXPECT_LE(run.measured_tokens_per_s_per_gpu, r->tokens_per_s_per_gpu_hi);
    }
    EXPECT_GE(host_bound, 2);
}

}  // namespace
}  // namespace lostflops
