// The host's operators of one Megatron-LM layer (as Megatron-DeepSpeed runs
// it, the code of vTrain's runs) and the step time of a host-bound job, each
// against values computed by hand from src/workload/host_ops.cpp's counts.
#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/host_ops.h"

namespace lostflops {
namespace {

// One GPU, four layers of hidden 256, four micro-batches of one sequence of
// 256 tokens: microseconds of GPU work per layer against milliseconds of host.
Job tiny_megatron_job(std::vector<std::string> sets = {}) {
    std::vector<std::string> all = {"model.num_hidden_layers=4", "model.hidden_size=256",
                                    "model.num_attention_heads=4", "model.vocab_size=1024",
                                    "cluster.num_gpus=1", "cluster.gpus_per_node=1",
                                    "training.seq_length=256", "training.global_batch_size=4",
                                    "training.micro_batch_size=1", "training.precision=fp16",
                                    "training.framework=megatron-lm", "training.attention=unfused",
                                    "parallel.tp=1", "parallel.pp=1", "parallel.recompute=full"};
    all.insert(all.end(), sets.begin(), sets.end());
    return parse_job(test::small_job_text(), "tiny.yaml", all);
}

TEST(HostOps, MegatronLayerByHand) {
    // Forward, tp 1, unfused: LayerNorm 1, QKV 2, view + split 2, core
    // attention 25, output linear 2, expand + bias-dropout-add 2, LayerNorm 1,
    // two torch.tensor 2, MLP 5, expand + bias-dropout-add + viewless 3 = 45.
    // Backward Python: linears 8 + 7 + 7 + 7, LayerNorms 3 + 3, softmax 2,
    // bias-GeLU 2 = 39. C++ nodes: view-like 20, compute 5, Function nodes 13,
    // AccumulateGrad 12 = 50. Checkpoint: 3 + 11 = 14.
    const Job job = tiny_megatron_job();
    const HostOps h = host_ops(job.model, job.training, job.plan);
    EXPECT_DOUBLE_EQ(h.layer_fwd, 45);
    EXPECT_DOUBLE_EQ(h.layer_bwd_py, 39);
    EXPECT_DOUBLE_EQ(h.layer_bwd, 50);
    EXPECT_DOUBLE_EQ(h.checkpoint_py, 14);
    // Flash attention's core is 19 operators instead of 25, its backward
    // Function 5 Python operators instead of the softmax's 2, 45 nodes.
    const Job flash = tiny_megatron_job({"training.attention=flash"});
    const HostOps f = host_ops(flash.model, flash.training, flash.plan);
    EXPECT_DOUBLE_EQ(f.layer_fwd, 39);
    EXPECT_DOUBLE_EQ(f.layer_bwd_py, 42);
    EXPECT_DOUBLE_EQ(f.layer_bwd, 45);
}

TEST(HostOps, SequenceParallelCollectivesAreIssuedFromPython) {
    // tp 2 with SP: forward + 4 (an all-gather per column linear, a
    // reduce-scatter per row linear); backward Python + 4 + 4.
    const Job job = tiny_megatron_job({"cluster.num_gpus=2", "cluster.gpus_per_node=2", "parallel.tp=2",
                                       "parallel.sequence_parallel=true"});
    const HostOps h = host_ops(job.model, job.training, job.plan);
    EXPECT_DOUBLE_EQ(h.layer_fwd, 49);
    EXPECT_DOUBLE_EQ(h.layer_bwd_py, 47);
    EXPECT_DOUBLE_EQ(h.layer_bwd, 50);
}

TEST(HostBound, StepGrowsByTheHostTimeOfEveryMicroBatch) {
    // Host-bound at both costs, the GPU's part of the step is the same, so
    // doubling both per-operator costs adds exactly one more host time per
    // micro-batch. By hand, per micro-batch: Python operators 4 layers x
    // (45 forward + 45 recomputed + 39 backward + 14 checkpoint) + output
    // layer 23 + embedding 8 + schedule 10 + 4 = 617 at host_op_us; C++ nodes
    // 4 x 50 + output layer 12 + embedding 4 = 216 at host_bwd_op_us.
    const Job job = tiny_megatron_job();
    Calibration one = default_calibration(), two = default_calibration();
    one.host_op_us = 20;
    one.host_bwd_op_us = 5;
    two.host_op_us = 40;
    two.host_bwd_op_us = 10;
    const Estimate e1 = estimate(job, one), e2 = estimate(job, two);
    ASSERT_GT(e1.breakdown.host_s, 0.0);  // host-bound already at the lower cost
    const double per_microbatch_s = (617 * 20 + 216 * 5) * 1e-6;
    EXPECT_NEAR(e2.step_time_s - e1.step_time_s, 4 * per_microbatch_s, 1e-9);
}

}  // namespace
}  // namespace lostflops
