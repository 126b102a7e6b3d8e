// Three GPU-side mechanisms of framework hf against hand-computed values:
// torch.optim's foreach AdamW traffic and its kernel launches, and
// transformers' experts run as fp32 CUDA-core GEMMs under autocast
// (estimate.cpp optimizer_extra_bytes, hf_optimizer_launches;
// workload/layer_work.h GemmShape::fp32_loop).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "estimate/stage_time.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// One Qwen3-MoE-like layer: 8 experts of width 128, top 2, hidden 256.
Job moe_job(const std::string& gpu, int zero) {
    return parse_job("model:\n"
                     "  model_type: qwen3_moe\n"
                     "  num_hidden_layers: 1\n"
                     "  hidden_size: 256\n"
                     "  num_attention_heads: 4\n"
                     "  num_key_value_heads: 4\n"
                     "  head_dim: 64\n"
                     "  num_experts: 8\n"
                     "  num_experts_per_tok: 2\n"
                     "  moe_intermediate_size: 128\n"
                     "  intermediate_size: 512\n"
                     "  vocab_size: 1000\n"
                     "cluster: {gpu: " + gpu + ", num_gpus: 1}\n"
                     "training: {seq_length: 1024, global_batch_size: 1, micro_batch_size: 1, framework: hf}\n"
                     "parallel: {zero: " + std::to_string(zero) + ", recompute: none}\n",
                     "moe.yaml");
}

double fwd_compute_s(const Job& j, const Calibration& cal) {
    const PlanContext ctx = make_plan_context(j, cal);
    const LayerWork w = layer_work(j.model, j.model.kind(0), j.training, j.plan);
    return layer_time(ctx, w, host_ops(j.model, j.training, j.plan), j.plan).fwd.compute_s;
}

TEST(HfExperts, AutocastRunsTheExpertsAsFp32CudaCoreGemms) {
    // Halving fp32_gemm_efficiency adds the experts' fp32 time once more:
    // forward FLOPs 2 x 1,024 tokens x top 2 x 256 x (2 x 128 + 128) =
    // 402,653,184 at 66.9 TFLOP/s x 0.51 (h100-sxm's fp32 peak).
    const Job j = moe_job("h100-sxm", 0);
    Calibration half = default_calibration();
    half.fp32_gemm_efficiency = default_calibration().fp32_gemm_efficiency / 2;
    ASSERT_DOUBLE_EQ(default_calibration().fp32_gemm_efficiency, 0.51);
    const double expert_s = 402653184.0 / (66.9e12 * 0.51);
    EXPECT_NEAR(fwd_compute_s(j, half) - fwd_compute_s(j, default_calibration()), expert_s, expert_s * 1e-9);
    // The loop is the host's: 2 calls of 8 groups forward, 4 backward, each
    // after a copy of the offsets to the host (estimate/host_time.cpp), not
    // operators of the layer's count; FSDP2's bf16 grouped GEMM has none.
    const HostOps fsdp2 = host_ops(moe_job("h100-sxm", 3).model, moe_job("h100-sxm", 3).training,
                                   moe_job("h100-sxm", 3).plan);
    const HostOps autocast = host_ops(j.model, j.training, j.plan);
    // FSDP2's forward hooks: a cast and a copy per parameter tensor and one
    // more (2 norms, q, k, v, o, q_norm, k_norm, router, gate_up, down: 11).
    EXPECT_DOUBLE_EQ(autocast.layer_fwd - (fsdp2.layer_fwd - (2 * 11 + 1)), 0);
    EXPECT_DOUBLE_EQ(autocast.expert_loop_calls_fwd, 2);
    EXPECT_DOUBLE_EQ(autocast.expert_loop_calls_bwd, 4);
    EXPECT_DOUBLE_EQ(autocast.expert_loop_groups, 8);
    EXPECT_DOUBLE_EQ(fsdp2.expert_loop_calls_fwd + fsdp2.expert_loop_calls_bwd, 0);
    // Their GPU side is the layer's, call by call: gate_up (2 x 128) then
    // down (128) of the 402,653,184 FLOPs.
    const PlanContext ctx = make_plan_context(j, default_calibration());
    const LayerTime t = layer_time(ctx, layer_work(j.model, j.model.kind(0), j.training, j.plan), autocast, j.plan);
    EXPECT_NEAR(t.expert_loop_s[0], expert_s * 2 / 3, expert_s * 1e-9);
    EXPECT_NEAR(t.expert_loop_s[1], expert_s / 3, expert_s * 1e-9);
}

TEST(HfExperts, Fsdp2ComputesInBf16AndAGpuWithoutAnFp32PeakIsNamed) {
    // FSDP2's bf16 experts keep the grouped path: the fp32 efficiency plays no part.
    const Job fsdp2 = moe_job("h100-sxm", 3);
    Calibration half = default_calibration();
    half.fp32_gemm_efficiency /= 2;
    EXPECT_DOUBLE_EQ(fwd_compute_s(fsdp2, half), fwd_compute_s(fsdp2, default_calibration()));
    // b200's catalog entry has no fp32 figure: priced as bf16, and said.
    const Job b200 = moe_job("b200", 0);
    EXPECT_DOUBLE_EQ(fwd_compute_s(b200, half), fwd_compute_s(b200, default_calibration()));
    const auto w = job_warnings(b200);
    EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const JobWarning& x) {
        return x.key == "cluster.gpu" && x.message.find("no fp32 (CUDA-core) peak") != std::string::npos;
    }));
    const auto h = job_warnings(moe_job("h100-sxm", 0));
    EXPECT_TRUE(std::none_of(h.begin(), h.end(), [](const JobWarning& x) { return x.key == "cluster.gpu"; }));
}

TEST(HfOptimizer, ForeachAdamWMovesEightyFourBytesPerParameterWhereFusedMovesThirtyTwo) {
    // optimizer_s = params x bytes / (hbm x memory_bound) + 8 launches: the
    // launches cancel in the difference, so foreach - fused is params x 52
    // bytes over the same bandwidth, and (foreach - launches) / (fused -
    // launches) = 84 / 32.
    Job fused = moe_job("h100-sxm", 0);
    fused.training.optimizer_kernel = OptimizerKernel::fused;
    Job foreach = fused;
    foreach.training.optimizer_kernel = OptimizerKernel::foreach;
    const Calibration cal = default_calibration();
    // (Eager autocast: each launch at the gap between queued kernels.)
    const double launches = 8 * cal.hf_kernel_gap_us * 1e-6;
    const double a = estimate(fused, cal).breakdown.optimizer_s - launches;
    const double b = estimate(foreach, cal).breakdown.optimizer_s - launches;
    ASSERT_GT(a, 0.0);
    EXPECT_NEAR(b / a, 84.0 / 32.0, 1e-9);
}

// multi_tensor_apply's launches (65,536-element chunks, 320 a launch), as
// the shared H200 traces count them: the Llama-3.2-1B shape's 1,235,814,400
// parameters in 146 tensors are 1,235,814,400 / 65,536 + 146 / 2 = 18,930.2
// chunks, 60 launches a pass (59.2); foreach AdamW's eight passes 480. The
// 3B shape's 3,212,749,824 in 254: 49,022.5 + 127 = 49,149.5 chunks, 154 a
// pass (153.6), 1,232. Each is a gap the GPU idles (hf_kernel_gap_us), which
// trace --job counts as idle, not among the memory-bound kernels.
TEST(HfOptimizer, LaunchesAreMultiTensorApplysAndAProfilerSeesTheirGapsAsIdle) {
    const Calibration cal = default_calibration();
    const double gap_s = cal.hf_kernel_gap_us * 1e-6;
    const std::string one_b = test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml");
    const auto overhead_with = [&](const std::string& set) {
        return estimate(load_job(one_b, {set}), cal).optimizer_overhead_s;
    };
    const Job fsdp2 = load_job(one_b);
    ASSERT_DOUBLE_EQ(hf_param_tensors(fsdp2.model), 146);
    const Estimate e = estimate(fsdp2, cal);
    ASSERT_NEAR(e.params_total, 1235814400, 1);
    EXPECT_NEAR(e.optimizer_overhead_s, 480 * gap_s, 1e-15);
    EXPECT_NEAR(overhead_with("training.optimizer_kernel=fused"), 60 * gap_s, 1e-15);
    const Job three = load_job(test::source_path("tests/data/trace/job-h200-llama3.2-3b-s8192-b2-fsdp2.yaml"));
    ASSERT_DOUBLE_EQ(hf_param_tensors(three.model), 254);
    const Estimate e3 = estimate(three, cal);
    ASSERT_NEAR(e3.params_total, 3212749824, 1);
    EXPECT_NEAR(e3.optimizer_overhead_s, 1232 * gap_s, 1e-15);
    // The gap is the GPU's, whatever the layers run: in fp32 (whose layers'
    // kernels keep the fitted kernel_overhead_us) as in bf16.
    EXPECT_NEAR(overhead_with("training.precision=fp32"), 480 * gap_s, 1e-15);
    // Another stack: the eight kernels its optimizer_s adds, at the fitted overhead.
    EXPECT_NEAR(estimate(default_job(), cal).optimizer_overhead_s, 8 * cal.kernel_overhead_us * 1e-6, 1e-15);
}

}  // namespace
}  // namespace lostflops
