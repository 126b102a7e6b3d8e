// DeepEP overlapped with compute (cost/expert_dispatch.h
// overlapped_dispatch_efficiency, dispatcher_sms; estimate/stage_time.h
// PlanContext::moe_overlap_comm, moe_overlap_slowdown), and the FP8 of the
// backward's dispatch under moe_fp8_dispatch. Figures by hand from DeepEP's
// README (docs/legacy.md) and DeepSeek's training profile
// (deepseek-ai/profile-data train.json).
#include <gtest/gtest.h>

#include "cost/expert_dispatch.h"
#include "estimate/estimate_parts.h"
#include "estimate/stage_time.h"
#include "lostflops/job.h"
#include "test_util.h"

#include <algorithm>
#include <string>

namespace lostflops {
namespace {

TEST(DeepEpOverlap, EfficiencyIsTheProfilesOverTheReadmes) {
    // One layer of the profile: 2 FP8 dispatches, 4,096 tokens x 4 nodes x
    // 7,168 x (1 + 4/128) bytes at 51 GB/s, and 2 BF16 combines, 4,096 x 4 x
    // 7,168 x 2 bytes at 50 GB/s (README, EP64); 4 layers. The profile's
    // communication stream spent 113,440 us in DeepEP's kernels.
    const double fp8 = 4096.0 * 4 * 7168 * (1 + 4.0 / 128), bf16 = 4096.0 * 4 * 7168 * 2;
    const double isolated_s = 4 * (2 * fp8 / 51e9 + 2 * bf16 / 50e9);
    EXPECT_NEAR(isolated_s, 56.58e-3, 0.01e-3);
    EXPECT_NEAR(overlapped_dispatch_efficiency(MoeDispatcher::deepep), isolated_s / 113.44e-3, 1e-3);
    // No measurement for NCCL's all-to-all under overlap: isolated time.
    EXPECT_EQ(overlapped_dispatch_efficiency(MoeDispatcher::alltoall), 1.0);
    EXPECT_EQ(overlapped_dispatch_efficiency(MoeDispatcher::allgather), 1.0);
    EXPECT_EQ(dispatcher_sms(MoeDispatcher::deepep), 20);
    EXPECT_EQ(dispatcher_sms(MoeDispatcher::alltoall), 0);
}

// 4 MoE layers on 64 H100 (132 SMs), ep 16 over two nodes.
std::string job_text(const std::string& parallel, const std::string& training_extra = "") {
    return "model:\n  num_hidden_layers: 4\n  hidden_size: 2048\n  num_attention_heads: 16\n"
           "  num_local_experts: 64\n  num_experts_per_tok: 8\n  moe_intermediate_size: 1024\n"
           "  intermediate_size: 4096\n  vocab_size: 32000\n  hidden_act: silu\n"
           "cluster: {gpu: h100-sxm, num_gpus: 64, gpus_per_node: 8,\n"
           "  intra_node: {bandwidth_GBps: 450, latency_us: 2}, inter_node: {bandwidth_GBps: 50, latency_us: 5}}\n"
           "training: {seq_length: 4096, global_batch_size: 256, micro_batch_size: 1" + training_extra + "}\n"
           "parallel: {" + parallel + "}\n";
}

TEST(DeepEpOverlap, OverlappedDeepEpTakesItsMeasuredTimeAndSms) {
    const Calibration cal = default_calibration();
    // Megatron-Core's layer overlap with DeepEP: 1 / 0.499 of the isolated
    // time, and a hidden second costs 20 of the H100's 132 SMs.
    const PlanContext layer =
        make_plan_context(parse_job(job_text("pp: 2, vpp: 2, ep: 16, moe_dispatcher: deepep, moe_a2a_overlap: true"),
                                    "job.yaml"),
                          cal);
    EXPECT_DOUBLE_EQ(layer.moe_overlap_comm, 1 / 0.499);
    EXPECT_DOUBLE_EQ(layer.moe_overlap_slowdown, 20.0 / 132);
    // NCCL's all-to-all overlapped: its time, and the calibration's slowdown.
    const PlanContext nccl = make_plan_context(
        parse_job(job_text("pp: 2, vpp: 2, ep: 16, moe_a2a_overlap: true"), "job.yaml"), cal);
    EXPECT_DOUBLE_EQ(nccl.moe_overlap_comm, 1.0);
    EXPECT_DOUBLE_EQ(nccl.moe_overlap_slowdown, cal.overlap_slowdown);
    // Not overlapped: DeepEP at its isolated time, nothing slowed.
    const PlanContext alone =
        make_plan_context(parse_job(job_text("pp: 2, ep: 16, moe_dispatcher: deepep"), "job.yaml"), cal);
    EXPECT_DOUBLE_EQ(alone.moe_overlap_comm, 1.0);
    EXPECT_DOUBLE_EQ(alone.moe_overlap_slowdown, 0.0);
}

TEST(DeepEpOverlap, DualPipePassesCarryTheOverlappedTime) {
    // Under DualPipe every pass's dispatch and combine are the isolated ones
    // over 0.499; without the schedule (pp 2, 1F1B) the isolated ones.
    const Calibration cal = default_calibration();
    const Job dual = parse_job(job_text("pp: 2, ep: 16, moe_dispatcher: deepep, pipeline_schedule: dualpipe"),
                               "job.yaml");
    const Job plain = parse_job(job_text("pp: 2, ep: 16, moe_dispatcher: deepep"), "job.yaml");
    const PassSetup d = pass_setup(dual, cal), s = pass_setup(plain, cal);
    ASSERT_GT(s.layer.fwd.ep_comm_s, 0);
    const ExpertDispatchTime f = expert_dispatch_time(s.ctx.comm, s.ctx.experts, plain.plan, s.lw.moe_tokens,
                                                      s.lw.moe_top_k, s.lw.moe_token_bytes, false);
    EXPECT_DOUBLE_EQ(s.layer.fwd.ep_comm_s, f.total_s());
    EXPECT_DOUBLE_EQ(s.layer.bwd.ep_comm_s, f.total_s());
    EXPECT_NEAR(d.layer.fwd.ep_comm_s, f.total_s() / 0.499, 1e-15);
    EXPECT_NEAR(d.layer.bwd.ep_comm_s, f.total_s() / 0.499, 1e-15);
}

TEST(DeepEpOverlap, Fp8DispatchCoversTheBackwardsDispatch) {
    // DeepSeek-V3 sec. 3.3.2 (and the profile's FP8 cast before the cached
    // dispatch): the combine's gradient travels to the experts in FP8, the
    // dispatch's gradient (a combine) in BF16. Backward = forward.
    const Calibration cal = default_calibration();
    const Job fp8 = parse_job(job_text("pp: 2, ep: 16, moe_dispatcher: deepep, moe_fp8_dispatch: true",
                                       ", precision: fp8"),
                              "job.yaml");
    const PassSetup s = pass_setup(fp8, cal);
    const ExpertDispatchTime t = expert_dispatch_time(s.ctx.comm, s.ctx.experts, fp8.plan, s.lw.moe_tokens,
                                                      s.lw.moe_top_k, s.lw.moe_token_bytes, true);
    const ExpertDispatchTime bf = expert_dispatch_time(s.ctx.comm, s.ctx.experts, fp8.plan, s.lw.moe_tokens,
                                                       s.lw.moe_top_k, s.lw.moe_token_bytes, false);
    EXPECT_LT(t.dispatch_s, bf.dispatch_s);
    EXPECT_DOUBLE_EQ(s.layer.fwd.ep_comm_s, t.total_s());
    EXPECT_DOUBLE_EQ(s.layer.bwd.ep_comm_s, t.total_s());
}

TEST(DeepEpOverlap, DualPipeLayerPairMatchesDeepSeeksProfile) {
    // The profile's F&B chunk pair (4 MoE layers, H800, EP64, TP1, 4,096
    // tokens, FP8) spans 129.0 ms: 32.25 ms a layer. The example's MoE layer
    // paired as DualPipe pairs it (estimate/phase_passes.cpp
    // dual_saved_s): F + B - min(fc, B - bc) - min(bc, F - fc), fc and bc
    // the comm times (1 - slowdown) of each pass. Within 5 %.
    const Calibration cal = default_calibration();
    const Job job = load_job(test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml"));
    const PassSetup s = pass_setup(job, cal);
    ASSERT_EQ(s.kind_time.size(), 2u);
    const LayerTime& moe = s.kind_time[1].layer;
    ASSERT_GT(moe.fwd.ep_comm_s, 0);
    const double hide = 1 - s.ctx.moe_overlap_slowdown;
    EXPECT_DOUBLE_EQ(s.ctx.moe_overlap_slowdown, 20.0 / 132);
    const double f = moe.fwd.total_s(), b = moe.bwd.total_s();
    const double fc = moe.fwd.ep_comm_s * hide, bc = moe.bwd.ep_comm_s * hide;
    const double pair_s = f + b - std::min(fc, b - bc) - std::min(bc, f - fc);
    EXPECT_NEAR(pair_s, 32.25e-3, 0.05 * 32.25e-3);
    // The communication stream per layer: 113.44 / 4 = 28.36 ms measured.
    EXPECT_NEAR(moe.fwd.ep_comm_s + moe.bwd.ep_comm_s, 28.36e-3, 0.05 * 28.36e-3);
}

}  // namespace
}  // namespace lostflops
