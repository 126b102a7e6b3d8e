// Properties of whole estimates: a one-GPU breakdown by hand, MFU follows
// its definition, each parallel dimension shows its wall, the GPT-3 175B on
// eight A100s does not fit, and the small-job regime is latency-bound.
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cost/collective_time.h"
#include "estimate/memory.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "workload/layer_work.h"
#include "test_util.h"

namespace lostflops {
namespace {

Estimate run(const std::vector<std::string>& overrides) {
    return estimate(parse_job(test::small_job_text(), "job.yaml", overrides), default_calibration());
}

// A tiny job on one GPU, by hand: no wall of any parallel dimension, and the
// optimizer step is Adam's traffic (32 bytes per parameter, default.yaml
// optimizer_bytes_per_param) through the A100's HBM (2,039 GB/s, gpus.yaml)
// at Ampere's streaming efficiency (0.70, default.yaml memory_bound), plus
// eight kernels of 15 us overhead (default.yaml kernel_overhead_us).
TEST(Estimate, OneGpuBreakdownByHand) {
    const Estimate e = run({"cluster.num_gpus=1", "cluster.gpus_per_node=1", "parallel.tp=1", "parallel.pp=1",
                            "training.global_batch_size=2"});
    const Breakdown& b = e.breakdown;
    for (double wall : {b.tp_comm_s, b.cp_comm_s, b.ep_comm_s, b.pp_bubble_s, b.pp_p2p_s, b.dp_comm_s})
        EXPECT_EQ(wall, 0);
    // h = 2048, 24 layers, V = 51,200: each layer 12 h^2 weights (QKV 3 h^2,
    // output h^2, GELU MLP 8 h^2; no biases) and two norms of h, the input
    // embedding V h shared with the output layer (tie_word_embeddings); the
    // final norm (2,048 parameters, 2e-6 of the total) within the tolerance.
    const double h = 2048, params = 24 * (12 * h * h + 2 * h) + 51200 * h;
    EXPECT_NEAR(b.optimizer_s / (params * 32 / (2039e9 * 0.70) + 8 * 15e-6), 1.0, 1e-5);
    EXPECT_GT(b.compute_s, 0);
    EXPECT_GT(b.memory_bound_s, 0);
    EXPECT_EQ(e.micro_batches, 1);
}

TEST(Estimate, MfuFollowsDefinitionAndJsonHasEveryWall) {
    const Job job = default_job();
    const Estimate e = estimate(job, default_calibration());
    const double peak = job.cluster.gpu.peak_tflops(job.training.precision) * 1e12;
    EXPECT_NEAR(e.mfu, e.model_flops_per_step / (e.step_time_s * job.cluster.num_gpus * peak), 1e-12);
    EXPECT_GE(e.hfu, e.mfu);
    EXPECT_GT(e.mfu, 0.2);
    EXPECT_LT(e.mfu, 0.7);
    const auto j = estimate_json(job, e);
    for (const char* k : {"step_time_s", "tokens_per_s_per_gpu", "mfu", "hfu", "model_tflops_per_gpu",
                          "hardware_tflops_per_gpu", "memory", "breakdown"})
        EXPECT_TRUE(j.contains(k)) << k;
    double sum = 0;
    for (const auto& [k, v] : j["breakdown"].items()) sum += v.get<double>();
    EXPECT_NEAR(sum, j["step_time_s"].get<double>(), 1e-9);
    EXPECT_TRUE(j["memory"].contains("peak_bytes"));
    EXPECT_TRUE(j["memory"].contains("capacity_bytes"));
    EXPECT_TRUE(j["memory"].contains("fits"));
}

TEST(Estimate, Gpt3On8A100DoesNotFitBecauseOfModelState) {
    const Job job = load_job(test::source_path("examples/gpt3-175b-8xa100.yaml"));
    const Estimate e = estimate(job, default_calibration());
    EXPECT_FALSE(e.memory.fits);
    // 175e9 parameters * 18 bytes / 8 GPUs.
    const double states = e.memory.weights_bytes + e.memory.gradients_bytes + e.memory.optimizer_bytes;
    EXPECT_NEAR(states / (175e9 * 18 / 8), 1.0, 0.02);
    const std::string why = memory_verdict(job, e.memory);
    EXPECT_NE(why.find("optimizer"), std::string::npos) << why;
    EXPECT_NE(why.find("shard"), std::string::npos) << why;
}

TEST(Estimate, EachParallelDimensionShowsItsWall) {
    EXPECT_GT(run({}).breakdown.tp_comm_s, 0);
    EXPECT_GT(run({}).breakdown.pp_bubble_s, 0);
    EXPECT_EQ(run({"parallel.tp=1", "parallel.pp=1"}).breakdown.pp_bubble_s, 0);
    EXPECT_EQ(run({"parallel.tp=1", "parallel.pp=1"}).breakdown.tp_comm_s, 0);
    EXPECT_GT(run({"parallel.overlap_grad_reduce=false"}).breakdown.dp_comm_s,
              run({}).breakdown.dp_comm_s);
    EXPECT_GT(run({"parallel.recompute=full"}).breakdown.recompute_s, run({"parallel.recompute=selective"}).breakdown.recompute_s);
    // Context parallel across nodes (tp 8 fills a node) at a short sequence:
    // the K/V ring cannot hide behind attention; inside a node at 2048 it does
    // better.
    const double cp_cross = run({"cluster.num_gpus=16", "parallel.tp=8", "parallel.pp=1", "parallel.cp=2",
                                 "training.seq_length=1024"}).breakdown.cp_comm_s;
    const double cp_local = run({"parallel.cp=2", "parallel.pp=1"}).breakdown.cp_comm_s;
    EXPECT_GT(cp_cross, 0);
    EXPECT_LT(cp_local, cp_cross);
}

TEST(Estimate, MoreMicroBatchesShrinkTheBubble) {
    const Estimate few = run({"training.global_batch_size=16"});
    const Estimate many = run({"training.global_batch_size=256"});
    EXPECT_GT(few.bubble_fraction, many.bubble_fraction);
    // 1F1B: bubble ~ (p-1)/m of the pipeline phase.
    EXPECT_NEAR(few.bubble_fraction, 1.0 / (2 + 1), 0.1);
}

TEST(Estimate, InterleavingShrinksTheBubble) {
    const Estimate plain = run({"training.global_batch_size=16"});
    const Estimate inter = run({"training.global_batch_size=16", "parallel.vpp=2"});
    EXPECT_LT(inter.breakdown.pp_bubble_s, plain.breakdown.pp_bubble_s);
}

TEST(Estimate, SmallJobsAreLatencyBound) {
    // A 125M-class model at a global batch of 2 on 8 GPUs: the fixed costs per
    // kernel and per collective take a large share, and MFU is low. (Where
    // the host is the slower, the gaps between kernels are its wait: host_s.)
    const Estimate e = run({"model.num_hidden_layers=12", "model.hidden_size=768", "model.num_attention_heads=12",
                            "cluster.num_gpus=8", "training.global_batch_size=2", "training.micro_batch_size=1",
                            "training.seq_length=1024", "parallel.tp=4", "parallel.pp=1"});
    EXPECT_LT(e.mfu, 0.15);
    EXPECT_GT((e.breakdown.overhead_s + e.breakdown.host_s + e.breakdown.tp_comm_s + e.breakdown.dp_comm_s) /
                  e.step_time_s,
              0.3);
}

TEST(Estimate, TensorParallelOverTheNetworkIsSlow) {
    const Estimate in_node = run({"cluster.num_gpus=32", "parallel.tp=8", "parallel.pp=1"});
    const Estimate spill = run({"cluster.num_gpus=32", "parallel.tp=16", "parallel.pp=1"});
    EXPECT_GT(spill.breakdown.tp_comm_s, 3 * in_node.breakdown.tp_comm_s);
}

TEST(Estimate, ExpertParallelAllToAll) {
    const Job job = parse_job(test::small_job_text(), "job.yaml",
                              {"model={preset: mixtral-8x7b, num_hidden_layers: 8}", "cluster.num_gpus=64",
                               "parallel.tp=2", "parallel.pp=1", "parallel.ep=8"});
    const Estimate e = estimate(job, default_calibration());
    EXPECT_GT(e.breakdown.ep_comm_s, 0);
}

TEST(Estimate, Deterministic) {
    const Estimate a = estimate(default_job(), default_calibration());
    const Estimate b = estimate(default_job(), default_calibration());
    EXPECT_EQ(a.step_time_s, b.step_time_s);
    EXPECT_EQ(a.memory.peak_bytes, b.memory.peak_bytes);
}

}  // namespace
}  // namespace lostflops

namespace lostflops {
namespace {

// llama.cpp's test-backend-ops idea: the closed-form pipeline and the
// discrete-event simulation of Megatron-LM's schedule must agree on every
// published plan (uneven first/last stages, interleaving, p2p included).
TEST(Estimate, ClosedFormAgreesWithSimulationOnPublishedRuns) {
    const Calibration cal = default_calibration();
    for (const char* name : {"narayanan21-t1-gpt-1008b", "narayanan21-t1-gpt-145.6b", "narayanan21-t1-gpt-529.6b",
                             "korthikanti22-t5-gpt-175b-selective", "megatron24-h100-gpt-462b",
                             "megatron24-h100-gpt-70b", "torchtitan24-a100-llama3-8b-selective"}) {
        const Job job = load_job(test::source_path(std::string("data/published/runs/") + name + ".json"));
        const Estimate closed = estimate(job, cal, ScheduleModel::closed_form);
        const Estimate sim = estimate(job, cal, ScheduleModel::simulation);
        EXPECT_NEAR(closed.step_time_s / sim.step_time_s, 1.0, 0.03) << name;
    }
}

}  // namespace
}  // namespace lostflops

namespace lostflops {
namespace {

TEST(Estimate, UnevenPipelineSplitPutsFewerLayersAtTheEnds) {
    // Llama 3.1 405B: 126 layers on 16 stages: 14 stages of 8, ends of 7.
    const Job job = parse_job(test::small_job_text(), "job.yaml",
                              {"model={preset: llama3.1-405b}", "cluster.num_gpus=2048", "parallel.tp=8",
                               "parallel.pp=16", "training.global_batch_size=1024", "training.micro_batch_size=1"});
    int total = 0;
    for (int r = 0; r < 16; ++r) total += layers_on(job, r, 0);
    EXPECT_EQ(total, 126);
    EXPECT_EQ(layers_on(job, 0, 0), 7);
    EXPECT_EQ(layers_on(job, 15, 0), 7);
    EXPECT_EQ(layers_on(job, 7, 0), 8);
    const Estimate e = estimate(job, default_calibration());
    EXPECT_GT(e.mfu, 0.2);
}

}  // namespace
}  // namespace lostflops

namespace lostflops {
namespace {

// Regression tests from the review of the first version.
TEST(Estimate, ContextParallelRanksReduceGradients) {
    const Estimate e = run({"cluster.num_gpus=4", "parallel.tp=2", "parallel.pp=1", "parallel.cp=2",
                            "training.global_batch_size=8"});
    EXPECT_GT(e.breakdown.dp_comm_s, 0);
}

TEST(Estimate, ExpertWeightsShardOverExpertDataParallel) {
    // 64 GPUs, tp 1, pp 8 -> dp 8; ep 8 -> expert-data-parallel group of 1:
    // expert optimizer state is not sharded at all with ZeRO-1.
    const Job job = parse_job(test::small_job_text(), "job.yaml",
                              {"model={preset: mixtral-8x7b}", "cluster.num_gpus=64", "parallel.tp=1",
                               "parallel.pp=8", "parallel.ep=8", "parallel.zero=1", "training.global_batch_size=64",
                               "training.micro_batch_size=1"});
    const LayerWork lw = layer_work(job.model, job.training, job.plan);
    const HeadWork hw = head_work(job.model, job.training, job.plan);
    const StageParams sp = stage_params(job, lw, hw, 1);
    const Memory mem = stage_memory(job, default_calibration(), lw, hw, 1);
    EXPECT_NEAR(mem.optimizer_bytes, 12.0 * (sp.params / 8 + sp.expert_params), 1.0);
    EXPECT_GT(sp.expert_params, 3 * sp.params);  // one 176M expert vs 42M of attention per layer
}

TEST(Estimate, PipelineBoundaryAcrossNodesUsesTheNetwork) {
    const Estimate one_node = run({"cluster.gpus_per_node=16", "parallel.pp=8", "parallel.tp=2",
                                   "training.global_batch_size=32"});
    const Estimate two_nodes = run({"parallel.pp=8", "parallel.tp=2", "training.global_batch_size=32"});
    EXPECT_GT(two_nodes.breakdown.pp_p2p_s, 2 * one_node.breakdown.pp_p2p_s);
}

TEST(Estimate, InterleavedInFlightMicroBatchesPerRank) {
    // Default job: p = 4, v = 5. Rank 0 holds p(1 + (p-1)/(pv)) = 4.6 stage
    // micro-batches, the last rank (2(p-r-1) + (v-1)p + 1)/v = 17/5. Of rank
    // 0's 23 chunk passes, 4 + 3 run chunk 0, which holds the embedding.
    const Job job = default_job({"parallel.recompute=selective"});
    const LayerWork lw = layer_work(job.model, job.training, job.plan);
    const HeadWork hw = head_work(job.model, job.training, job.plan);
    const Calibration cal = default_calibration();
    const double layers0 = stage_params(job, lw, hw, 0).layers;
    const double layers3 = stage_params(job, lw, hw, 3).layers;
    const Memory first = stage_memory(job, cal, lw, hw, 0);
    const Memory last = stage_memory(job, cal, lw, hw, 3);
    EXPECT_NEAR((first.activations_bytes - 7 * hw.embed_bytes_fwd) / (layers0 * lw.activation_bytes), 4.6, 1e-9);
    EXPECT_NEAR(last.activations_bytes / (layers3 * lw.activation_bytes), 17.0 / 5, 1e-9);
}

TEST(Estimate, KvHeadsReplicatedWhenTpExceedsThem) {
    // Llama-3-70B at tp 16: 64/16 query heads and one (replicated) KV head per rank.
    const Job job = default_job({"parallel.tp=16", "parallel.pp=4", "parallel.vpp=1", "parallel.sequence_parallel=false"});
    const LayerWork lw = layer_work(job.model, job.training, job.plan);
    const double hd = 8192.0 * 128;
    const double mlp = 3.0 * 8192 * 28672 / 16;
    EXPECT_NEAR(lw.params - mlp - 2 * 8192, hd * (2 * 64.0 / 16 + 2 * 1), 1.0);
}

TEST(Estimate, GroupsStraddlingNodes) {
    EXPECT_EQ(place_group(3, 1, 8).nodes, 2);
    EXPECT_EQ(place_group(4, 1, 8).nodes, 1);
    EXPECT_EQ(place_group(8, 1, 8).nodes, 1);
    EXPECT_EQ(place_group(16, 1, 8).nodes, 2);
    EXPECT_EQ(place_group(16, 1, 8).per_node, 8);
    EXPECT_EQ(place_group(64, 8, 8).nodes, 64);
    // The first and last of 4 pipeline stages, 6 ranks apart on 8 GPUs
    // (tp 2, dp 1... ranks 0 and 6): one node.
    EXPECT_EQ(place_group(2, 6, 8).nodes, 1);
    EXPECT_EQ(place_group(2, 6, 8).per_node, 2);
    // 4 members 6 apart: ranks 0, 6, 12, 18 on nodes 0, 0, 1, 2.
    EXPECT_EQ(place_group(4, 6, 8).nodes, 3);
    EXPECT_EQ(place_group(4, 6, 8).per_node, 2);
    EXPECT_EQ(place_group(5, 6, 8).nodes, 4);
}

}  // namespace
}  // namespace lostflops
