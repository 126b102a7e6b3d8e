// The systolic device model of TPUs (cost/device_time.cpp; docs/tpu.md):
// padding to the MXU, no launches or host operators, the TPU family of the
// default profile, and a TPU job through estimate, search and explain.
#include <gtest/gtest.h>

#include <string>

#include "cost/device_time.h"
#include "lostflops/accelerator.h"
#include "lostflops/calibration.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/explain.h"
#include "lostflops/job.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/search.h"

namespace lostflops {
namespace {

const std::string kJob = std::string(LOSTFLOPS_SOURCE_DIR) + "/tests/data/tpu/llama2-7b-v5e-256.yaml";

DeviceModel model_of(const char* gpu, int head_dim = 128) {
    DeviceUse use;
    use.head_dim = head_dim;
    return make_device_model(*find_gpu(gpu), Precision::bf16, default_calibration(), use);
}

TEST(TpuDevice, MxuSideComesFromTheTraitsTable) {
    EXPECT_EQ(find_accelerator("tpu_v5e")->mxu_dim, 128);
    EXPECT_EQ(find_accelerator("tpu_v6e")->mxu_dim, 256);
    EXPECT_EQ(find_accelerator("hopper")->mxu_dim, 0);
    EXPECT_EQ(model_of("tpu-v5p").mxu_dim, 128);
    EXPECT_EQ(model_of("tpu-v6e").mxu_dim, 256);
    EXPECT_EQ(model_of("h100-sxm").mxu_dim, 0);
}

TEST(TpuDevice, PaddedFraction) {
    EXPECT_DOUBLE_EQ(padded_fraction(256, 128), 1.0);
    EXPECT_DOUBLE_EQ(padded_fraction(129, 128), 129.0 / 256);
    EXPECT_DOUBLE_EQ(padded_fraction(4, 8), 0.5);
}

TEST(TpuDevice, LargeMatmulRunsAtTheMeasuredRate) {
    // The gemm.csv row the family is fitted on: XLA's 8192^3 bf16 matmul on
    // v5e at 181.82 TFLOP/s (jax docs/pallas/tpu/matmul.ipynb).
    const DeviceModel d = model_of("tpu-v5e");
    const double t = gemm_time_s(d, 8192, 8192, 8192);
    const double tflops = 2.0 * 8192 * 8192 * 8192 / t / 1e12;
    // sustained_compute (fitted on GPU runs) scales every family alike.
    EXPECT_NEAR(tflops / default_calibration().sustained_compute, 181.82, 0.2);
}

TEST(TpuDevice, DimensionsArePaddedToTheMxu) {
    // v6e's 256-wide MXU: an output width of 128 fills half of it, so the
    // same FLOPs take twice as long as at 256. (A dimension of 128 makes a
    // matmul HBM-bound at any size: the compute side is compared with HBM
    // taken out.)
    DeviceModel d = model_of("tpu-v6e");
    d.hbm_Bps = 1e30;
    const double m = 16384, k = 8192;
    const double t128 = gemm_time_s(d, m, 128, k), t256 = gemm_time_s(d, m, 256, k);
    EXPECT_NEAR(t128 / t256, 1.0, 1e-9);  // half the FLOPs, half the array
    const double t200 = gemm_time_s(d, m, 200, k);
    EXPECT_NEAR(t200, t256, 1e-15);       // 200 pads to 256
    // On v5e (128-wide) 128 is whole.
    DeviceModel e = model_of("tpu-v5e");
    e.hbm_Bps = 1e30;
    EXPECT_NEAR(gemm_time_s(e, m, 128, k) / gemm_time_s(e, m, 256, k), 0.5, 1e-9);
    // ... and on the real chip that shape is HBM-bound: the roofline's
    // memory side, at the family's streaming fraction.
    const DeviceModel real = model_of("tpu-v6e");
    const double bytes = 2 * (m * k + k * 128) + 2 * m * 128;
    EXPECT_NEAR(gemm_time_s(real, m, 128, k), bytes / (real.hbm_Bps * real.memory_bound), 1e-12);
    // Rows pad to 8: 9 rows cost what 16 do.
    EXPECT_DOUBLE_EQ(gemm_tile_efficiency(e, 9, 128), 9.0 / 16);
}

TEST(TpuDevice, AttentionRunsOnTheMxuWithTheHeadDimensionPadded) {
    const DeviceModel v6_128 = model_of("tpu-v6e", 128), v6_256 = model_of("tpu-v6e", 256);
    EXPECT_NEAR(v6_128.attention_fwd / v6_256.attention_fwd, 0.5, 1e-12);
    EXPECT_NEAR(v6_256.attention_fwd, v6_256.gemm_max, 1e-12);
    const DeviceModel v5_128 = model_of("tpu-v5e", 128);
    EXPECT_NEAR(v5_128.attention_bwd, v5_128.gemm_max, 1e-12);
}

TEST(TpuDevice, NoLaunchesAndNoHostOperators) {
    EXPECT_EQ(model_of("tpu-v5e").kernel_overhead_s, 0.0);
    EXPECT_GT(model_of("h100-sxm").kernel_overhead_s, 0.0);
    const Job j = load_job(kJob);
    const Estimate e = estimate(j, default_calibration());
    EXPECT_EQ(e.breakdown.host_s, 0.0);
}

TEST(TpuDevice, AFamilyPricesOneKindOfMatrixUnit) {
    try {
        overlay_calibration(default_calibration(), "devices: {hopper: {archs: [hopper, tpu_v5e]}}\n", "cal.yaml");
        FAIL() << "a family of GPUs and TPUs was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("devices.hopper.archs[1]"), std::string::npos) << e.what();
    }
    // A new systolic family needs no attention kernel.
    const Calibration c = overlay_calibration(
        default_calibration(),
        "devices: {tpu: {archs: [tpu_v4]}, tpu2: {archs: [tpu_v5e], gemm_max: {bf16: 0.8}, memory_bound: 0.8}}\n",
        "cal.yaml");
    EXPECT_EQ(c.device("tpu_v5e").name, "tpu2");
    EXPECT_EQ(make_device_model(*find_gpu("tpu-v5e"), Precision::bf16, c).mxu_dim, 128);
}

TEST(TpuJob, EstimatesSearchesAndExplains) {
    const Job j = load_job(kJob);
    const Calibration cal = default_calibration();
    const Estimate e = estimate(j, cal);
    EXPECT_GT(e.step_time_s, 0);
    EXPECT_TRUE(e.memory.fits);
    // Below the MXU's measured rate, and not far below what MaxText publishes
    // for its models on v5e-256 (55-67 %, README @04fa3732c).
    EXPECT_LT(e.mfu, 0.923);
    EXPECT_GT(e.mfu, 0.3);

    SearchOptions o;
    o.threads = 1;
    const SearchResult r = search_plans(j, cal, o);
    ASSERT_FALSE(r.ranked.empty());
    EXPECT_GT(r.counts.evaluated, 0);

    const Explanation x = explain(JobSource{kJob, {}}, cal);
    EXPECT_FALSE(explain_table(x).empty());
    double lost = 0;
    for (const auto& s : mfu_waterfall(j, cal, e)) lost += s.pp;
    EXPECT_NEAR(100 - lost, e.mfu * 100, 0.5);
}

}  // namespace
}  // namespace lostflops

namespace lostflops {
namespace {

// nccl_curve.cpp reads its device-name tokens from the traits table's
// `models`: every part of the catalog is named by one, mi355 included.
TEST(AcceleratorModels, CurvesMeasuredOnTheNewPartsAreMatched) {
    auto curve = [](const char* gpu) {
        return BusBwCurve{Collective::all_reduce, LinkScope::intra_node, 8, {{1e6, 5, 0}}, 8, 1, gpu};
    };
    const Gpu mi300x = *find_gpu("mi300x"), mi355x = *find_gpu("mi355x"), gb300 = *find_gpu("gb300"), b300 = *find_gpu("b300");
    EXPECT_FALSE(curve_gpu_mismatch(curve("AMD Instinct MI355X"), mi355x));
    EXPECT_TRUE(curve_gpu_mismatch(curve("AMD Instinct MI355X"), mi300x));
    EXPECT_TRUE(curve_gpu_mismatch(curve("AMD Instinct MI300X"), mi355x));
    EXPECT_FALSE(curve_gpu_mismatch(curve("NVIDIA GB300"), gb300));
    EXPECT_TRUE(curve_gpu_mismatch(curve("NVIDIA GB300"), b300));  // gb300 is matched before b300
}

}  // namespace
}  // namespace lostflops
