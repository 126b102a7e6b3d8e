// The cost model pinned to its published closed forms: Narayanan et al. 2021
// eq. 3 (FLOPs), PaLM appendix B (6N + 12*L*h*s), Korthikanti et al. 2022
// table 2 (activation memory), Rajbhandari et al. 2020 (ZeRO bytes per
// parameter), Thakur et al. 2005 (ring all-reduce), NCCL's latency model
// (src/graph/tuning.cc).
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "cost/collective_time.h"
#include "cost/device_time.h"
#include "estimate/memory.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/flops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

Model gpt(int layers, int64_t h, int heads, int64_t vocab) {
    return test::uniform_model(layers, h, heads, heads, 4 * h, vocab, MlpKind::dense, true);
}

Training seq(int64_t s, int64_t b = 1) {
    Training t;
    t.seq_length = s;
    t.micro_batch = b;
    t.global_batch = b;
    t.attention = AttentionKernel::unfused;
    return t;
}

TEST(Flops, NarayananEquation3) {
    // GPT-3 175B: l = 96, h = 12288, s = 2048, V = 51200.
    const Model m = gpt(96, 12288, 96, 51200);
    const Training t = seq(2048);
    const double l = 96, h = 12288, s = 2048, V = 51200;
    const double eq3_no_recompute = 72 * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    const double eq3_recompute = 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    EXPECT_NEAR(flops_per_token(m, t, Recompute::none).model / eq3_no_recompute, 1.0, 1e-12);
    EXPECT_NEAR(flops_per_token(m, t, Recompute::full).hardware / eq3_recompute, 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(flops_per_token(m, t, Recompute::full).model, eq3_no_recompute);
}

TEST(Flops, PalmSixNPlusAttention) {
    // Llama-style model with GQA and a gated MLP: 6N + 12*L*h*s with N the
    // matmul parameters (layers + output layer).
    const Model m = test::uniform_model(32, 4096, 32, 8, 14336, 128256, MlpKind::gated, false);
    const double h = 4096, d = 128, L = 32, s = 8192;
    const double per_layer = h * d * (2 * 32 + 2 * 8) + 3 * h * 14336;
    const double n_matmul = L * per_layer + 128256 * h;
    const double palm = 6 * n_matmul + 12 * L * h * s;
    EXPECT_NEAR(flops_per_token(m, seq(8192), Recompute::none).model / palm, 1.0, 1e-12);
    // The causal convention halves the attention term only.
    Training causal = seq(8192);
    causal.causal_flops = true;
    EXPECT_NEAR(flops_per_token(m, causal, Recompute::none).model / (palm - 6 * L * h * s), 1.0, 1e-12);
}

TEST(Flops, ParameterCountOfGpt3) {
    const ParamCount p = count_params(gpt(96, 12288, 96, 50257));
    EXPECT_NEAR(p.total / 175e9, 1.0, 0.01);
}

double sbh_units(const LayerWork& w, double s, double b, double h) { return w.activation_bytes / (s * b * h); }

TEST(ActivationMemory, KorthikantiTable2) {
    const Model m = gpt(1, 12288, 96, 51200);
    const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
    const Training tr = seq(2048);
    ParallelPlan p;
    // No parallelism: sbh(34 + 5as/h).
    EXPECT_NEAR(sbh_units(layer_work(m, tr, p), s, b, h), 34 + 5 * a * s / h, 1e-9);
    // Tensor parallel, no SP: sbh(10 + 24/t + 5as/(ht)).
    p.tp = 8;
    EXPECT_NEAR(sbh_units(layer_work(m, tr, p), s, b, h), 10 + 24 / t + 5 * a * s / (h * t), 1e-9);
    // Tensor + sequence parallel: sbh/t (34 + 5as/h).
    p.sequence_parallel = true;
    EXPECT_NEAR(sbh_units(layer_work(m, tr, p), s, b, h), (34 + 5 * a * s / h) / t, 1e-9);
    // Selective recompute drops the as/h term: sbh * 34 / t.
    p.recompute = Recompute::selective;
    EXPECT_NEAR(sbh_units(layer_work(m, tr, p), s, b, h), 34 / t, 1e-9);
    // Full recompute keeps the layer input: 2sbh/t.
    p.recompute = Recompute::full;
    EXPECT_NEAR(sbh_units(layer_work(m, tr, p), s, b, h), 2 / t, 1e-9);
}

TEST(ActivationMemory, FlashAttentionHasNoScoreTerm) {
    const Model m = gpt(1, 4096, 32, 51200);
    Training tr = seq(4096);
    tr.attention = AttentionKernel::flash;
    ParallelPlan p;
    EXPECT_NEAR(sbh_units(layer_work(m, tr, p), 4096, 1, 4096), 34, 1e-9);
}

// Bytes of weights + gradients + optimizer per parameter on one GPU.
double state_bytes_per_param(int zero, bool grad_fp32, int dp, const std::string& optimizer = "auto") {
    Job job = parse_job(test::small_job_text(), "job.yaml",
                        {"parallel.tp=1", "parallel.pp=1", "cluster.num_gpus=" + std::to_string(dp),
                         "training.global_batch_size=" + std::to_string(2 * dp), "parallel.zero=" + std::to_string(zero),
                         std::string("parallel.grad_fp32=") + (grad_fp32 ? "true" : "false"),
                         "training.optimizer=" + optimizer});
    const LayerWork lw = layer_work(job.model, job.training, job.plan);
    const HeadWork hw = head_work(job.model, job.training, job.plan);
    const Memory mem = stage_memory(job, default_calibration(), lw, hw, 0);
    const StageParams sp = stage_params(job, lw, hw, 0);
    return (mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes) / sp.params;
}

TEST(Memory, ZeroBytesPerParameter) {
    const double n = 16;
    EXPECT_NEAR(state_bytes_per_param(0, false, 16), 16, 1e-9);           // 2 + 2 + 12
    EXPECT_NEAR(state_bytes_per_param(1, false, 16), 4 + 12 / n, 1e-9);   // ZeRO-1
    EXPECT_NEAR(state_bytes_per_param(2, false, 16), 2 + 14 / n, 1e-9);   // ZeRO-2
    EXPECT_NEAR(state_bytes_per_param(3, false, 16), 16 / n, 1e-9);       // ZeRO-3
    EXPECT_NEAR(state_bytes_per_param(0, true, 16), 18, 1e-9);            // Megatron fp32 grads
    EXPECT_NEAR(state_bytes_per_param(1, true, 16), 6 + 12 / n, 1e-9);    // distributed optimizer
    EXPECT_NEAR(state_bytes_per_param(1, true, 16, "adam"), 6 + 12 / n, 1e-9);  // auto is adam
}

// Apex DistributedFusedAdam with store_param_remainders (NeMo 1.x, bf16):
// fp32 m and v (4 + 4) and the master weight's low 16 bits (2) sharded, the
// bf16 weight (2) and the fp32 main gradient (4) whole: 6 + 10/N_d.
TEST(Memory, ParamRemaindersBytesPerParameter) {
    const double n = 16;
    EXPECT_NEAR(state_bytes_per_param(0, true, 16, "adam-param-remainders"), 2 + 4 + 10, 1e-9);
    EXPECT_NEAR(state_bytes_per_param(1, true, 16, "adam-param-remainders"), 6 + 10 / n, 1e-9);
    EXPECT_NEAR(state_bytes_per_param(3, false, 16, "adam-param-remainders"), (2 + 2 + 10) / n, 1e-9);
}

// Apex DistributedFusedAdam with dtype bf16 over a bf16 model (NeMo
// launcher nemotron_340b.yaml): bf16 m and v (2 + 2) sharded, no master copy.
TEST(Memory, Bf16AdamBytesPerParameter) {
    const double n = 16;
    EXPECT_NEAR(state_bytes_per_param(1, false, 16, "adam-bf16"), 2 + 2 + 4 / n, 1e-9);
    EXPECT_NEAR(state_bytes_per_param(0, true, 16, "adam-bf16"), 2 + 4 + 4, 1e-9);
}

// Eight GPUs per node; NVLink and network bandwidth per GPU per direction.
Cluster dgx(double nvlink_GBps, double network_GBps) {
    Cluster c;
    c.gpus_per_node = 8;
    c.intra_node = Link{nvlink_GBps, 2};
    c.inter_node = Link{network_GBps, 5};
    return c;
}

TEST(Collectives, RingAllReduceSingleNode) {
    Calibration cal = default_calibration();
    const CommModel cm = make_comm_model(dgx(300, 25), cal);
    const GroupPlacement g = place_group(8, 1, 8);
    EXPECT_EQ(g.nodes, 1);
    const double bytes = 1e9;
    const double expect = 2.0 * 7 / 8 * bytes / (300e9 * cal.bus_eff_intra) +
                          (cal.collective_launch_us + 2 * 7 * 2.0) * 1e-6;
    EXPECT_NEAR(collective_time_s(cm, Collective::all_reduce, g, bytes), expect, 1e-12);
    // Reduce-scatter moves half the bytes of an all-reduce.
    const double rs = collective_time_s(cm, Collective::reduce_scatter, g, bytes);
    EXPECT_NEAR(rs - (cal.collective_launch_us + 7 * 2.0) * 1e-6, 7.0 / 8 * bytes / (300e9 * cal.bus_eff_intra), 1e-12);
}

TEST(Collectives, LatencyByAlgorithmAcrossNodes) {
    // NCCL's latency model (src/graph/tuning.cc): 4 nodes of 8 GPUs, 2 us
    // NVLink and 5 us network hops. Ring all-gather / reduce-scatter: 31 steps,
    // 3 across nodes = 28*2 + 3*5 = 71 us. All-reduce: ring 2*71 = 142 us or
    // tree 2*(7*2 + log2(4)*5) = 48 us; NCCL takes the tree.
    Calibration cal = default_calibration();
    const CommModel cm = make_comm_model(dgx(300, 25), cal);
    const GroupPlacement g = place_group(32, 1, 8);
    ASSERT_EQ(g.nodes, 4);
    const double bytes = 1e9;
    const double b_intra = 300e9 * cal.bus_eff_intra, b_inter = 25e9 * cal.bus_eff_inter;
    const double ag_bw = 7.0 / 8 * bytes / b_intra + 3.0 / 4 * (bytes / 8) / b_inter;
    EXPECT_NEAR(collective_time_s(cm, Collective::all_gather, g, bytes),
                ag_bw + (cal.collective_launch_us + 71) * 1e-6, 1e-12);
    EXPECT_NEAR(collective_time_s(cm, Collective::reduce_scatter, g, bytes),
                ag_bw + (cal.collective_launch_us + 71) * 1e-6, 1e-12);
    EXPECT_NEAR(collective_time_s(cm, Collective::all_reduce, g, bytes),
                2 * ag_bw + (cal.collective_launch_us + 48) * 1e-6, 1e-12);
}

TEST(Collectives, TwoLevelPlacement) {
    // DP group of 64 with stride 8 (tp = 8): one member per node, 64 nodes.
    GroupPlacement g = place_group(64, 8, 8);
    EXPECT_EQ(g.per_node, 1);
    EXPECT_EQ(g.nodes, 64);
    // Stride 2: four members share a node.
    g = place_group(64, 2, 8);
    EXPECT_EQ(g.per_node, 4);
    EXPECT_EQ(g.nodes, 16);
    // TP of 16 spills over two nodes: the network bounds it.
    Calibration cal = default_calibration();
    const CommModel cm = make_comm_model(dgx(450, 50), cal);
    const double in_node = collective_time_s(cm, Collective::all_reduce, place_group(8, 1, 8), 1e8);
    const double spill = collective_time_s(cm, Collective::all_reduce, place_group(16, 1, 8), 1e8);
    EXPECT_GT(spill, 1.5 * in_node);
}

TEST(Gemm, WaveQuantisation) {
    DeviceModel d;
    d.sms = 108;
    // Large square GEMM fills the machine.
    EXPECT_GT(gemm_tile_efficiency(d, 8192, 8192), 0.97);
    // One more tile than the SMs can hold in a wave of 128x128-class tiles
    // costs a nearly empty second wave with the best tile shape.
    EXPECT_LT(gemm_tile_efficiency(d, 128 * 109, 128), gemm_tile_efficiency(d, 128 * 108, 128));
    // A GEMM with a single row wastes almost all of a tile.
    EXPECT_LT(gemm_tile_efficiency(d, 1, 8192), 0.05);
}

TEST(Gemm, SmallGemmsRunBelowPeak) {
    DeviceModel d;
    d.peak_flops = 312e12;
    d.hbm_Bps = 2e12;
    d.sms = 108;
    const double big = 2.0 * 8192 * 8192 * 8192 / gemm_time_s(d, 8192, 8192, 8192);
    const double small = 2.0 * 256 * 256 * 256 / gemm_time_s(d, 256, 256, 256);
    EXPECT_GT(big, 0.7 * 312e12);
    EXPECT_LT(small, 0.2 * big);
}

}  // namespace
}  // namespace lostflops
