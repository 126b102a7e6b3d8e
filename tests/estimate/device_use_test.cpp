// The plan context reads the attention curves at the job's own shape
// (cost/device_time.h device_use): its sequence over context parallelism, its
// head dimension and its framework's kernel. Before, make_plan_context passed
// a default DeviceUse (seq 4096, head dim 128, Megatron-Core) whatever the job.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/device_time.h"
#include "estimate/stage_time.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"
#include "lostflops/calibration.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "lostflops/job.h"

namespace lostflops {
namespace {

// Llama 3 70B (head dim 128) on H100 SXM under Megatron-Core: cuDNN fused
// attention, causal forward measured at 4,096, 8,192 and 16,384 tokens:
// 518, 529 and 539 TFLOP/s (Shah et al. 2024, FlashAttention-3, fig. 5;
// data/calibration/attention.csv), over the 989.4 TFLOP/s bf16 dense peak;
// the H100 SXM runs at its family's reference power (power factor 1).
double fwd_of(const std::vector<std::string>& overrides) {
    const Calibration cal = default_calibration();
    const Job job = default_job(overrides);
    EXPECT_EQ(job.training.framework, Framework::megatron_core);
    return make_plan_context(job, cal).dev.attention_fwd / cal.sustained_compute;
}

TEST(DeviceUse, PlanContextReadsTheCurveAtTheJobsSequence) {
    const double tflops = find_gpu("h100-sxm")->peak_bf16_tflops;
    ASSERT_DOUBLE_EQ(tflops, 989.4);
    EXPECT_NEAR(fwd_of({"training.seq_length=4096"}), 518 / tflops, 1e-12);
    EXPECT_NEAR(fwd_of({"training.seq_length=8192"}), 529 / tflops, 1e-12);
    EXPECT_NEAR(fwd_of({"training.seq_length=16384"}), 539 / tflops, 1e-12);
    // Log-linear between points: 12,288 tokens are log2(1.5) of the way from 8k to 16k.
    EXPECT_NEAR(fwd_of({"training.seq_length=12288"}), (529 + std::log2(1.5) * (539 - 529)) / tflops, 1e-12);
    // Flat beyond the measured range: 65,536 tokens read the 16k point.
    EXPECT_NEAR(fwd_of({"training.seq_length=65536"}), 539 / tflops, 1e-12);
    // Context parallelism: ring attention calls the kernel on chunks of s/cp,
    // so 32k over cp 2 reads the 16k point and 32k over cp 8 the 4k point.
    EXPECT_NEAR(fwd_of({"training.seq_length=32768", "parallel.cp=2"}), 539 / tflops, 1e-12);
    EXPECT_NEAR(fwd_of({"training.seq_length=32768", "parallel.cp=8"}), 518 / tflops, 1e-12);
}

TEST(DeviceUse, PlanContextUsesTheJobsFrameworkAndHeadDim) {
    const Calibration cal = default_calibration();
    // An FSDP stack on Hopper runs FlashAttention-2 (default.yaml attention_kernel).
    const Job fsdp = default_job({"training.framework=fsdp", "parallel.tp=1", "parallel.pp=1", "parallel.vpp=1",
                                  "parallel.zero=3", "parallel.sequence_parallel=false"});
    const PlanContext ctx = make_plan_context(fsdp, cal);
    EXPECT_EQ(ctx.dev.attention_kernel, AttentionImpl::fa2);
    // FA2 forward, causal, head dim 128, 8k: the curve itself.
    EXPECT_NEAR(ctx.dev.attention_fwd,
                attention_efficiency(cal.device("hopper"), AttentionImpl::fa2, false, true, 128, 8192) *
                    cal.sustained_compute,
                1e-15);
    const DeviceUse u = device_use(fsdp);
    EXPECT_EQ(u.framework, Framework::fsdp);
    EXPECT_EQ(u.head_dim, 128);  // Llama 3 70B: 8,192 / 64 heads
    EXPECT_EQ(u.seq, 8192);
    EXPECT_TRUE(u.causal);
}

// fp8 training runs its output layer in bf16 (Megatron-Core's output layer is
// not a Transformer Engine module; torchtitan's float8 converter skips
// "output"): the logits GEMM is priced at the bf16 peak with the family's bf16
// gemm_max, the layers at fp8.
TEST(DeviceUse, Fp8TrainingPricesTheOutputLayerInBf16) {
    const Calibration cal = default_calibration();
    const DeviceFamily& hopper = cal.device("hopper");
    const double s = cal.sustained_compute;
    const PlanContext fp8 = make_plan_context(default_job({"training.precision=fp8"}), cal);
    EXPECT_DOUBLE_EQ(fp8.dev.peak_flops, 1978.9e12);
    EXPECT_DOUBLE_EQ(fp8.dev.gemm_max, hopper.gemm_max[static_cast<int>(GemmDtype::fp8_tensor)] * s);
    EXPECT_DOUBLE_EQ(fp8.head_dev.peak_flops, 989.4e12);
    EXPECT_DOUBLE_EQ(fp8.head_dev.gemm_max, hopper.gemm_max[static_cast<int>(GemmDtype::bf16)] * s);
    EXPECT_DOUBLE_EQ(fp8.head_dev.bytes_per_element, 2.0);
    EXPECT_DOUBLE_EQ(fp8.head_dev.attention_fwd, fp8.dev.attention_fwd);  // only the GEMM pricing changes
    // A logits GEMM of 33,792 x 512 x 8,192 fills four waves of 256x128 tiles
    // on 132 SMs exactly (tile efficiency 1) and is compute-bound:
    // 2mnk / (989.4e12 * gemm_max(bf16) * s * k / (k + gemm_k_half * 989.4 / 132)).
    HeadWork w;
    w.logits.m = 33792;
    w.logits.n = 512;
    w.logits.k = 8192;
    const double k_half = cal.gemm_k_half * 989.4 / 132;
    const double want = 2.0 * 33792 * 512 * 8192 /
                        (989.4e12 * hopper.gemm_max[0] * s * 8192 / (8192 + k_half));
    const Job job = default_job({"training.precision=fp8", "parallel.tp=1", "parallel.sequence_parallel=false"});
    const LayerTime t = head_time(make_plan_context(job, cal), w, HostOps{}, job.plan);
    EXPECT_NEAR(t.fwd.compute_s, want, want * 1e-12);
    EXPECT_NEAR(t.bwd.compute_s, 2 * want, want * 1e-12);
    // bf16 training: the same model for both.
    const PlanContext bf16 = make_plan_context(default_job({}), cal);
    EXPECT_DOUBLE_EQ(bf16.head_dev.gemm_max, bf16.dev.gemm_max);
    EXPECT_DOUBLE_EQ(bf16.head_dev.peak_flops, bf16.dev.peak_flops);
}

// make_device_model memoises the curves read at a shape (per thread, keyed
// by AttentionCurves::id): new points in the same family object, at the same
// address, must be read anew, and a copy of the calibration reads the same.
TEST(DeviceUse, NewCurvesInTheSameFamilyAreReadAnew) {
    Calibration cal = default_calibration();
    const Job job = default_job({});
    const double before = make_plan_context(job, cal).dev.attention_fwd;
    EXPECT_EQ(make_plan_context(job, Calibration(cal)).dev.attention_fwd, before);
    DeviceFamily* hopper = nullptr;
    for (DeviceFamily& f : cal.devices)
        if (f.name == "hopper") hopper = &f;
    ASSERT_NE(hopper, nullptr);
    const uint64_t id = hopper->attention.id();
    std::vector<AttentionPoint> points = hopper->attention.points();
    for (AttentionPoint& p : points) p.efficiency /= 2;
    hopper->attention = points;
    EXPECT_NE(hopper->attention.id(), id);
    EXPECT_NEAR(make_plan_context(job, cal).dev.attention_fwd, before / 2, 1e-15);
}

// The fp8 recipe picks the GEMM format the family prices (lostflops/fp8_recipe.h):
// delayed and tensorwise one scale per tensor, rowwise per row, blockwise
// 128-blocks, mxfp8 OCP MXFP8; a format the family has no measurement of is
// refused (exit 2), naming the job's file and key.
TEST(DeviceUse, Fp8RecipePicksTheGemmFormat) {
    const Calibration cal = default_calibration();
    const DeviceFamily& hopper = cal.device("hopper");
    const double s = cal.sustained_compute;
    const auto gemm_max = [&](const std::string& recipe) {
        return make_plan_context(default_job({"training.precision=fp8", "training.fp8_recipe=" + recipe}), cal)
            .dev.gemm_max;
    };
    EXPECT_DOUBLE_EQ(gemm_max("delayed"), hopper.gemm_max[static_cast<int>(GemmDtype::fp8_tensor)] * s);
    EXPECT_DOUBLE_EQ(gemm_max("tensorwise"), hopper.gemm_max[static_cast<int>(GemmDtype::fp8_tensor)] * s);
    EXPECT_DOUBLE_EQ(gemm_max("rowwise"), hopper.gemm_max[static_cast<int>(GemmDtype::fp8_row)] * s);
    EXPECT_DOUBLE_EQ(gemm_max("blockwise"), hopper.gemm_max[static_cast<int>(GemmDtype::fp8_block)] * s);
    ASSERT_EQ(hopper.gemm_max[static_cast<int>(GemmDtype::mxfp8)], 0);  // Hopper has no MXFP8 tensor cores
    try {
        gemm_max("mxfp8");
        ADD_FAILURE() << "mxfp8 on an H100 was priced";
    } catch (const InputError& e) {
        // The job's key, with the job's file; the format and family named.
        EXPECT_EQ(e.key(), "training.fp8_recipe") << e.what();
        EXPECT_EQ(e.file(), "data/jobs/default.yaml (built in)") << e.what();
        EXPECT_NE(e.message().find("mxfp8 GEMMs on the hopper family"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace lostflops
