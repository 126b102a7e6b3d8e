// Expert all-to-all overlap (moe_a2a_overlap, estimate/stage_time.h): the
// dispatch / combine split of the dispatcher's time, and each collective
// hidden only under the compute it is paired with (Megatron-Core's
// schedule_layer_1f1b; DeepSeek-V3 report fig. 4). Figures by hand.
#include <gtest/gtest.h>

#include "cost/expert_dispatch.h"
#include "estimate/stage_time.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"

namespace lostflops {
namespace {

TEST(MoeOverlap, EachCollectiveHidesUnderItsPartnerOnly) {
    // Forward dispatch 1 s, combine 2 s; backward dispatch-like 3 s (the
    // combine's gradient), combine-like 4 s (the dispatch's gradient).
    const ExpertDispatchTime f{1, 2}, b{3, 4};
    const MoeOverlapSides s{2.5, 1, 1, 5};  // attention F, MLP F, attention B, MLP B
    const MoeOverlapExposed e = moe_a2a_exposed(f, b, s, 0.2);
    // dispatch(F) 1 under MLP(B) 5: hidden 1, exposed 0, slowdown 0.2
    // combine(F) 2 under attention(B) 1: exposed 1, hidden 1, slowdown 0.2
    EXPECT_NEAR(e.fwd_s, 0 + 0.2 + 1 + 0.2, 1e-12);
    // combine(B) 3 under attention(F) 2.5: exposed 0.5, slowdown 0.5
    // dispatch(B) 4 under MLP(F) 1: exposed 3, slowdown 0.2
    EXPECT_NEAR(e.bwd_s, 0.5 + 0.5 + 3 + 0.2, 1e-12);
    // A pooled rule (hide min(comm, compute) of the whole layer) would leave
    // 10 - 9.5 = 0.5 s of the 10 s exposed; the pairing leaves 4.5 s.
    const MoeOverlapExposed none = moe_a2a_exposed(f, b, s, 0.0);
    EXPECT_NEAR(none.fwd_s + none.bwd_s, 1 + 0.5 + 3, 1e-12);
}

TEST(MoeOverlap, MemoryBoundWorkSpreadOverTheSides) {
    // Forward: attention 1 s, MLP 3 s of compute, memory-bound 1 s and
    // launches 1 s: each side grows by (4 + 2) / 4 = 1.5. Backward: 2 and 6 s,
    // memory-bound 4 s: (8 + 4) / 8 = 1.5.
    LayerTime t;
    t.fwd.memory_bound_s = 1;
    t.fwd.overhead_s = 1;
    t.bwd.memory_bound_s = 4;
    const MoeOverlapSides s = moe_overlap_sides(t, 1, 3, 2, 6);
    EXPECT_NEAR(s.attn_f, 1.5, 1e-12);
    EXPECT_NEAR(s.mlp_f, 4.5, 1e-12);
    EXPECT_NEAR(s.attn_b, 3, 1e-12);
    EXPECT_NEAR(s.mlp_b, 9, 1e-12);
}

TEST(MoeOverlap, DispatchAndCombineSumToTheDispatcherTime) {
    // ep 8 over two nodes with etp 2 (etp x ep = 16 ranks): the dispatch
    // carries the etp all-gather, the combine its reduce-scatter; the two
    // parts sum to expert_dispatch_s, and fp8 dispatch with deepep halves
    // only the dispatch's bytes.
    const Job job = parse_job(
        "model:\n  num_hidden_layers: 4\n  hidden_size: 2048\n  num_attention_heads: 16\n"
        "  num_local_experts: 64\n  num_experts_per_tok: 8\n  moe_intermediate_size: 1024\n"
        "  intermediate_size: 4096\n  vocab_size: 32000\n  hidden_act: silu\n"
        "cluster: {gpu: h100-sxm, num_gpus: 64, gpus_per_node: 8,\n"
        "  intra_node: {bandwidth_GBps: 450, latency_us: 2}, inter_node: {bandwidth_GBps: 50, latency_us: 5}}\n"
        "training: {seq_length: 4096, global_batch_size: 256, micro_batch_size: 2}\n"
        "parallel: {tp: 2, ep: 8, etp: 2, sequence_parallel: true, moe_dispatcher: deepep}\n",
        "job.yaml");
    const Calibration cal;
    const CommModel cm = make_comm_model(job.cluster, cal);
    const ExpertGroups g = place_expert_groups(job.plan, 8);
    const ExpertDispatchTime bf16 = expert_dispatch_time(cm, g, job.plan, 4096, 8, 4096, false);
    const ExpertDispatchTime fp8 = expert_dispatch_time(cm, g, job.plan, 4096, 8, 4096, true);
    EXPECT_DOUBLE_EQ(bf16.total_s(), expert_dispatch_s(cm, g, job.plan, 4096, 8, 4096, false));
    EXPECT_DOUBLE_EQ(fp8.combine_s, bf16.combine_s);
    EXPECT_LT(fp8.dispatch_s, bf16.dispatch_s);
    // The etp all-gather of the received copies (4096 x 8 x 4096 bytes per
    // rank, gathered over 2) sits in the dispatch.
    const double gather = collective_time_s(cm, Collective::all_gather, g.etp, 4096.0 * 8 * 4096 * 2);
    EXPECT_GT(gather, 0);
    EXPECT_GE(bf16.dispatch_s, gather);
}

// A job of 4 MoE layers on 64 H100 (8 nodes), ep 16 over two nodes.
std::string moe_job(const std::string& parallel, const std::string& training_extra = "", int gbs = 256) {
    return "model:\n  num_hidden_layers: 4\n  hidden_size: 2048\n  num_attention_heads: 16\n"
           "  num_local_experts: 64\n  num_experts_per_tok: 8\n  moe_intermediate_size: 1024\n"
           "  intermediate_size: 4096\n  vocab_size: 32000\n  hidden_act: silu\n"
           "cluster: {gpu: h100-sxm, num_gpus: 64, gpus_per_node: 8,\n"
           "  intra_node: {bandwidth_GBps: 450, latency_us: 2}, inter_node: {bandwidth_GBps: 50, latency_us: 5}}\n"
           "training: {seq_length: 4096, global_batch_size: " + std::to_string(gbs) + ", micro_batch_size: 1" +
           training_extra + "}\n"
           "parallel: {" + parallel + "}\n";
}

TEST(MoeOverlap, WarmUpAndCoolDownPassesHaveNoPartner) {
    // pp 2, vpp 2, dp 32: m = 256 / 32 = 8 micro-batches, 16 chunk passes a
    // rank; rank 0's warm-up 2(pp-1) + (vpp-1)pp + 1 = 5 forwards run alone
    // (the overlap's one extra, Megatron-Core schedules.py; as many cool-down
    // backwards): paired share 1 - 5/16 = 0.6875.
    const Calibration cal = default_calibration();
    const Job job = parse_job(moe_job("pp: 2, vpp: 2, ep: 16, moe_dispatcher: deepep, moe_a2a_overlap: true"),
                              "job.yaml");
    const PlanContext ctx = make_plan_context(job, cal);
    EXPECT_TRUE(ctx.moe_layer_overlap);
    EXPECT_DOUBLE_EQ(ctx.moe_overlap_paired, 0.6875);
    // m == pp with Megatron: every pass is warm-up (estimate/inflight.cpp), nothing pairs.
    const Job all_warm =
        parse_job(moe_job("pp: 2, vpp: 2, ep: 16, moe_dispatcher: deepep, moe_a2a_overlap: true", "", 64), "job.yaml");
    EXPECT_DOUBLE_EQ(make_plan_context(all_warm, cal).moe_overlap_paired, 0.0);
    // Without overlap the share is not used, and the overlapped step lies
    // between no overlap and the fully paired rule.
    const Job off = parse_job(moe_job("pp: 2, vpp: 2, ep: 16, moe_dispatcher: deepep"), "job.yaml");
    EXPECT_FALSE(make_plan_context(off, cal).moe_layer_overlap);
    EXPECT_LT(estimate(job, cal).breakdown.ep_comm_s, estimate(off, cal).breakdown.ep_comm_s);
}

TEST(MoeOverlap, Fp8DispatchOnlyWhenAsked) {
    // Megatron-Core hands DeepEP BF16 hidden states (fused_a2a.py): fp8
    // training alone does not halve the dispatch; moe_fp8_dispatch does, and
    // only the dispatch-direction collectives (forward dispatch, the combine's
    // gradient; the combine and the dispatch's gradient stay BF16).
    const Calibration cal = default_calibration();
    const Job bf16 = parse_job(moe_job("ep: 16, moe_dispatcher: deepep", ", precision: fp8"), "job.yaml");
    const Job fp8 = parse_job(moe_job("ep: 16, moe_dispatcher: deepep, moe_fp8_dispatch: true", ", precision: fp8"),
                              "job.yaml");
    EXPECT_FALSE(make_plan_context(bf16, cal).fp8);
    EXPECT_TRUE(make_plan_context(fp8, cal).fp8);
    EXPECT_LT(estimate(fp8, cal).breakdown.ep_comm_s, estimate(bf16, cal).breakdown.ep_comm_s);
    // The key belongs to the deepep dispatcher, and does nothing (warned) without fp8.
    EXPECT_THROW(parse_job(moe_job("ep: 16, moe_fp8_dispatch: true"), "job.yaml"), InputError);
    const Job idle = parse_job(moe_job("ep: 16, moe_dispatcher: deepep, moe_fp8_dispatch: true"), "job.yaml");
    EXPECT_FALSE(make_plan_context(idle, cal).fp8);
    bool warned = false;
    for (const auto& w : job_warnings(idle)) warned |= w.key == "parallel.moe_fp8_dispatch";
    EXPECT_TRUE(warned);
    for (const auto& w : job_warnings(fp8)) EXPECT_NE(w.key, "parallel.moe_fp8_dispatch");
}

TEST(MoeOverlap, DualPipeOverlapsByItsPassesNotTwice) {
    // Under DualPipe the F&B passes hide the all-to-all; moe_a2a_overlap on
    // top would hide it a second time: it changes nothing and is warned about.
    const std::string job =
        "model:\n  num_hidden_layers: 4\n  hidden_size: 2048\n  num_attention_heads: 16\n"
        "  num_local_experts: 64\n  num_experts_per_tok: 8\n  moe_intermediate_size: 1024\n"
        "  intermediate_size: 4096\n  vocab_size: 32000\n  hidden_act: silu\n"
        "cluster: {gpu: h100-sxm, num_gpus: 64, gpus_per_node: 8,\n"
        "  intra_node: {bandwidth_GBps: 450, latency_us: 2}, inter_node: {bandwidth_GBps: 50, latency_us: 5}}\n"
        "training: {seq_length: 4096, global_batch_size: 256, micro_batch_size: 1}\n"
        "parallel: {pp: 2, ep: 16, pipeline_schedule: dualpipe";
    const Calibration cal = default_calibration();
    const Job plain = parse_job(job + "}\n", "job.yaml");
    const Job both = parse_job(job + ", moe_a2a_overlap: true}\n", "job.yaml");
    EXPECT_EQ(estimate(both, cal).step_time_s, estimate(plain, cal).step_time_s);
    bool warned = false;
    for (const auto& w : job_warnings(both)) warned |= w.key == "parallel.moe_a2a_overlap";
    EXPECT_TRUE(warned);
    for (const auto& w : job_warnings(plain)) EXPECT_NE(w.key, "parallel.moe_a2a_overlap");
}

TEST(MoeOverlap, DualPipeHiddenCommSlowsTheOtherPass) {
    // DualPipe's F&B pairs hide the all-to-all but its SMs slow the pass it
    // overlaps (overlap_slowdown): with 0.2 the exposed expert time and the
    // step grow over slowdown 0.
    const std::string job =
        "model:\n  num_hidden_layers: 4\n  hidden_size: 2048\n  num_attention_heads: 16\n"
        "  num_local_experts: 64\n  num_experts_per_tok: 8\n  moe_intermediate_size: 1024\n"
        "  intermediate_size: 4096\n  vocab_size: 32000\n  hidden_act: silu\n"
        "cluster: {gpu: h100-sxm, num_gpus: 64, gpus_per_node: 8,\n"
        "  intra_node: {bandwidth_GBps: 450, latency_us: 2}, inter_node: {bandwidth_GBps: 50, latency_us: 5}}\n"
        "training: {seq_length: 4096, global_batch_size: 256, micro_batch_size: 1}\n"
        "parallel: {pp: 2, ep: 16, pipeline_schedule: ";
    Calibration free = default_calibration(), slow = default_calibration();
    free.overlap_slowdown = 0;
    slow.overlap_slowdown = 0.2;
    const Job dual = parse_job(job + "dualpipe}\n", "job.yaml");
    const Estimate a = estimate(dual, free), b = estimate(dual, slow);
    EXPECT_GT(b.breakdown.ep_comm_s, a.breakdown.ep_comm_s);
    EXPECT_GT(b.step_time_s, a.step_time_s);
}

}  // namespace
}  // namespace lostflops
