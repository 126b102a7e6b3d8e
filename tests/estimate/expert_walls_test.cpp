// The expert walls (lostflops/expert_walls.h): the router's and the
// permutation's seconds by hand on a small MoE job, and the walls as slices
// of the main walls: dispatch + combine hold all of ep_comm, the others no
// more than their main walls, the expert GEMMs move compute by themselves.
#include <filesystem>

#include <gtest/gtest.h>

#include "cost/device_time.h"
#include "estimate/estimate_parts.h"
#include "lostflops/expert_walls.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/validate.h"
#include "test_util.h"

namespace lostflops {
namespace {

// Two layers, h 256, 4 heads, 8 experts of 128 (top 2) and a shared expert,
// on two H100s (dp 2, ep 2), sequence 1024, four micro-batches per rank.
Job small_moe(const std::vector<std::string>& overrides = {}) {
    return parse_job(R"(name: small-moe
model: {model_type: deepseek_v3, num_hidden_layers: 2, hidden_size: 256, num_attention_heads: 4, vocab_size: 1000,
        n_routed_experts: 8, num_experts_per_tok: 2, moe_intermediate_size: 128, n_shared_experts: 1}
cluster: {gpu: h100-sxm, num_gpus: 2}
training: {seq_length: 1024, global_batch_size: 8, micro_batch_size: 1, framework: megatron-core}
parallel: {ep: 2, recompute: none}
)",
                     "small-moe.yaml", overrides);
}

double memory_s(const Job& job, double bytes) {
    const DeviceModel d = make_plan_context(job, default_calibration()).dev;
    return bytes / (d.hbm_Bps * d.memory_bound);
}

TEST(ExpertWalls, RouterAndPermuteByHand) {
    const Job job = small_moe();
    const ExpertWalls w = expert_walls(job, default_calibration());
    ASSERT_TRUE(w.moe);
    const double layers = 2, m = 4, tokens = 1024, experts = 8, k = 2, h = 256;
    // Forward + backward (2x): three times the forward, per layer and micro-batch.
    // Router scores: fp32 logits written, read, probabilities written: 12 bytes per token and expert.
    const double router_bytes = tokens * experts * 12;
    EXPECT_NEAR(w[ExpertWallId::router].in.memory_bound_s, layers * m * 3 * memory_s(job, router_bytes),
                1e-12);
    // The router GEMM: tokens x experts x hidden.
    const DeviceModel d = make_plan_context(job, default_calibration()).dev;
    EXPECT_NEAR(w[ExpertWallId::router].in.compute_s, layers * m * 3 * gemm_time_s(d, tokens, experts, h), 1e-12);
    // Permute before dispatch and unpermute after combine, each read and
    // written: 4 x tokens x top-k x hidden x 2 bytes = 4 MiB a layer.
    const double permute_bytes = 4 * tokens * k * h * 2;
    EXPECT_DOUBLE_EQ(permute_bytes, 4194304.0);
    EXPECT_NEAR(w[ExpertWallId::permute].in.memory_bound_s, layers * m * 3 * memory_s(job, permute_bytes), 1e-12);
    EXPECT_EQ(w[ExpertWallId::permute].in.compute_s, 0);
    // No recompute: nothing redone.
    EXPECT_EQ(w.sum().recompute_s, 0);
}

TEST(ExpertWalls, SelectiveMoeRecomputeRedoesRouterAndPermuteOnce) {
    const Job job = small_moe({"parallel.recompute=selective", "parallel.recompute_modules=[moe]"});
    const ExpertWalls w = expert_walls(job, default_calibration());
    const double layers = 2, m = 4;
    const DeviceModel d = make_plan_context(job, default_calibration()).dev;
    EXPECT_NEAR(w[ExpertWallId::permute].in.recompute_s, layers * m * memory_s(job, 4194304.0), 1e-12);
    EXPECT_NEAR(w[ExpertWallId::router].in.recompute_s,
                layers * m * (memory_s(job, 1024 * 8 * 12.0) + gemm_time_s(d, 1024, 8, 256)), 1e-12);
    // The module moe redoes the dispatch too: each wall's forward once more.
    const ExpertWalls plain = expert_walls(small_moe(), default_calibration());
    EXPECT_NEAR(w[ExpertWallId::dispatch].in.ep_comm_s, 1.5 * plain[ExpertWallId::dispatch].in.ep_comm_s, 1e-12);
}

// The slices against the step's main walls.
void expect_slices_of(const Job& job, bool all_of_ep = true) {
    SCOPED_TRACE(job.name);
    const Calibration cal = default_calibration();
    const Estimate e = estimate(job, cal);
    const ExpertWalls w = expert_walls(job, cal);
    ASSERT_TRUE(w.moe);
    const Breakdown s = w.sum();
    const Breakdown& b = e.breakdown;
    const double tol = 1e-9 * e.step_time_s;
    if (all_of_ep) { EXPECT_NEAR(s.ep_comm_s, b.ep_comm_s, tol); }
    EXPECT_LE(s.ep_comm_s, b.ep_comm_s + tol);
    EXPECT_LE(s.compute_s, b.compute_s + tol);
    EXPECT_LE(s.memory_bound_s, b.memory_bound_s + tol);
    EXPECT_LE(s.recompute_s, b.recompute_s + tol);
    EXPECT_LE(s.dp_comm_s, b.dp_comm_s + tol);
    EXPECT_GT(w[ExpertWallId::expert_gemm].in.compute_s, 0);
    for (const ExpertWall& x : w.walls) {
        EXPECT_GE(x.in.total_s(), 0) << key_of(x.id);
        EXPECT_GE(x.collective_s + tol, x.in.ep_comm_s + x.in.dp_comm_s) << key_of(x.id);
    }
}

TEST(ExpertWalls, DispatchAndCombineHoldAllOfTheAllToAll) {
    expect_slices_of(small_moe());
    expect_slices_of(small_moe({"parallel.moe_a2a_overlap=true", "parallel.recompute=full"}));
    expect_slices_of(small_moe({"parallel.moe_dispatcher=deepep", "parallel.moe_a2a_overlap=true"}));
    expect_slices_of(small_moe({"parallel.moe_dispatcher=allgather", "parallel.recompute=selective",
                                "parallel.recompute_modules=[moe,moe_act]"}));
    // Pipelined: the rank the estimate charges (the last, with the output layer).
    expect_slices_of(small_moe({"model.num_hidden_layers=4", "parallel.pp=2", "parallel.dp=2", "cluster.num_gpus=4",
                                "training.global_batch_size=16"}));
    // DualPipeV hides part of the all-to-all by its passes: the slices are scaled to what stays.
    expect_slices_of(small_moe({"model.num_hidden_layers=4", "parallel.pp=2", "parallel.dp=2", "cluster.num_gpus=4",
                                "training.global_batch_size=16",
                                "parallel.pipeline_schedule=dualpipev", "parallel.vpp=2"}),
                     false);
}

TEST(ExpertWalls, ExpertGemmsAreWhatTheImbalanceMovesInCompute) {
    // moe_imbalance scales the grouped expert GEMMs and nothing else that
    // compute holds: compute grows by exactly what the expert_gemm wall grows.
    const Calibration cal = default_calibration();
    const Job even = small_moe();
    const Job skew = small_moe({"parallel.moe_imbalance=1.5"});
    const double grew = estimate(skew, cal).breakdown.compute_s - estimate(even, cal).breakdown.compute_s;
    const double wall = expert_walls(skew, cal)[ExpertWallId::expert_gemm].in.compute_s -
                        expert_walls(even, cal)[ExpertWallId::expert_gemm].in.compute_s;
    EXPECT_GT(wall, 0);
    EXPECT_NEAR(grew, wall, 1e-12);
}

TEST(ExpertWalls, PublishedMoeRuns) {
    // The MoE rows of the 2024-26 published runs (DeepSeek-V3, Qwen3, gpt-oss,
    // Mixtral: every dispatcher, DualPipe, overlap, pipelines) and the DeepSeek-V3 example.
    const std::string path = test::source_path("data/published/modern/published-runs.csv");
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
    std::vector<MeasuredRun> runs = load_run_table(path);
    runs.push_back({});
    runs.back().job = load_job(test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml"));
    int moe = 0;
    for (const auto& run : runs) {
        if (!run.job.model.is_moe()) continue;
        ++moe;
        expect_slices_of(run.job, standard_mapping(run.job.plan));
    }
    EXPECT_GT(moe, 0);
}

TEST(ExpertWalls, DenseJobHasNone) {
    const ExpertWalls w = expert_walls(default_job(), default_calibration());
    EXPECT_FALSE(w.moe);
    EXPECT_EQ(w.sum().total_s(), 0);
}

}  // namespace
}  // namespace lostflops
