// A transformers step's own rates on the H200 (data/measured/h200-steps):
// its GEMMs at the step's clock (calibration hf_power_bound_gemm_fraction)
// and, under torch.compile, attention over the whole square with the boolean
// mask transformers materialises while dynamo traces (spec.h
// masked_square_attention; hf_masked_attention_{fwd,bwd}_fraction), by hand.
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cost/device_time.h"
#include "lostflops/calibration.h"
#include "lostflops/catalog.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

Job llama1b(std::vector<std::string> sets = {}) { return test::h200_llama1b(4096, std::move(sets)); }

DeviceModel device(const Job& job) {
    return make_device_model(job.cluster.gpu, job.training.precision, default_calibration(), device_use(job));
}

// The 1B down projection (8,192 x 8,192 -> 2,048) takes 0.864 of its time
// under another stack: the same GEMM at the step's clock.
TEST(HfStepRates, GemmsRunAtTheStepsClock) {
    const Job hf = llama1b(), fsdp = llama1b({"training.framework=fsdp"});
    const DeviceModel a = device(hf), b = device(fsdp);
    EXPECT_DOUBLE_EQ(a.gemm_max, b.gemm_max / 0.864);
    const double t_hf = gemm_time_s(a, 8192, 2048, 8192), t_fsdp = gemm_time_s(b, 8192, 2048, 8192);
    EXPECT_NEAR(t_hf / t_fsdp, 0.864, 1e-9);
    // 2 x 8,192 x 8,192 x 2,048 = 274.9 GFLOP: the eager trace's 336 us is
    // 818 TFLOP/s (docs/trace-memory.md); priced within 10 % of it now.
    EXPECT_NEAR(t_hf, 336e-6, 33.6e-6);
    // A user's calibration cannot push a GEMM past the peak.
    Calibration cal = default_calibration();
    cal.hf_power_bound_gemm_fraction = 0.01;
    EXPECT_DOUBLE_EQ(make_device_model(hf.cluster.gpu, Precision::bf16, cal, device_use(hf)).gemm_max, 1.0);
}

TEST(HfStepRates, CompiledTransformersAttendOverTheWholeSquare) {
    const Job eager = llama1b(), compiled = llama1b({"training.compile=true"});
    // torchtitan's own model calls SDPA with is_causal under compile too.
    const Job titan = llama1b({"training.framework=fsdp", "training.compile=true"});
    const double full = 4.0 * 2 * 32 * 4096.0 * 4096 * 64;  // 274,877,906,944 forward FLOPs a layer
    EXPECT_DOUBLE_EQ(layer_work(compiled.model, compiled.training, compiled.plan).attention_flops_fwd, full);
    EXPECT_DOUBLE_EQ(layer_work(eager.model, eager.training, eager.plan).attention_flops_fwd, full / 2);
    EXPECT_DOUBLE_EQ(layer_work(titan.model, titan.training, titan.plan).attention_flops_fwd, full / 2);
    EXPECT_TRUE(masked_square_attention(compiled.training));
    EXPECT_FALSE(masked_square_attention(eager.training));
    EXPECT_FALSE(masked_square_attention(titan.training));
}

TEST(HfStepRates, MaskedAttentionRunsAtItsFractionOfTheUnmaskedCurve) {
    const Calibration& cal = default_calibration();
    const Job compiled = llama1b({"training.compile=true"});
    const DeviceModel d = device(compiled);
    const DeviceFamily& f = cal.device(compiled.cluster.gpu.arch);
    const double power = d.power_factor;
    const double fwd = attention_efficiency(f, AttentionImpl::cudnn, false, false, 64, 4096);
    const double bwd = attention_efficiency(f, AttentionImpl::cudnn, true, false, 64, 4096);
    ASSERT_GT(fwd, 0);
    ASSERT_GT(bwd, 0);
    EXPECT_DOUBLE_EQ(d.attention_fwd, fwd * power * 0.51);
    EXPECT_DOUBLE_EQ(d.attention_bwd, bwd * power * 0.58);
    // The compiled trace (data/measured/h200-steps/trace-1b-s4096-b2-
    // autocast-compiled.json.gz): cuDNN's masked kernels take 17.29 ms
    // forward and 47.59 ms backward a step of 16 layers, 4.055 ms a layer;
    // priced within 15 % of that.
    const double full = 4.0 * 2 * 32 * 4096.0 * 4096 * 64;
    const double layer_s = flash_attention_fwd_s(d, full) + flash_attention_bwd_s(d, full);
    EXPECT_NEAR(layer_s, (17.29e-3 + 47.59e-3) / 16, 0.15 * (17.29e-3 + 47.59e-3) / 16);
}

}  // namespace
}  // namespace lostflops
