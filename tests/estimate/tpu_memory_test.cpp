// A TPU job's memory (estimate/memory_xla.cpp) and XLA's fusion of the
// elementwise work into the matmuls (workload/layer_work.cpp), on MaxText's
// 32B model on v5e-256 (data/published/maxtext/runs/; MaxText ran it, README
// @04fa3732c): fp32 parameters, gradients and AdamW moments sharded over the
// fsdp axis, two gathered weight matrices and one unreduced gradient matrix,
// no framework reserve, HBM less the TPU runtime's reserve.
#include <gtest/gtest.h>

#include <string>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

const std::string kRun =
    std::string(LOSTFLOPS_SOURCE_DIR) + "/data/published/maxtext/runs/maxtext2403-v5e-32b-1x-v5e-256.yaml";

TEST(TpuMemory, MaxTextStateGatherBuffersAndCapacity) {
    const Job j = load_job(kRun);
    ASSERT_TRUE(j.training.xla);
    const Estimate e = estimate(j, default_calibration());
    const Memory& m = e.memory;
    // pp 1, tp 1: every parameter on the rank, sharded over the 256 fsdp
    // ranks (params_total also counts the final norm, 8192 parameters, that
    // the stage's count leaves out: within 1e-5).
    const double shard = e.params_total / 256;
    EXPECT_NEAR(m.weights_bytes, 4 * shard, 1e-5 * shard);
    EXPECT_NEAR(m.gradients_bytes, 4 * shard, 1e-5 * shard);
    EXPECT_NEAR(m.optimizer_bytes, 8 * shard, 1e-5 * shard);
    // The largest weight: the fused gate and up projection, h x 2 ffn.
    const double largest = 8192.0 * 2 * 28672;
    EXPECT_DOUBLE_EQ(m.buffers_bytes, 2.0 * (2 * largest + largest));
    // 16 GiB less the runtime's 271,581,184 bytes; no allocator share.
    EXPECT_DOUBLE_EQ(m.capacity_bytes, 16.0 * (1 << 30) - 271581184.0);
    EXPECT_TRUE(m.fits) << m.peak_bytes / (1 << 30) << " GiB";
}

TEST(TpuMemory, TheSameJobOnAGpuKeepsTheGpuModel) {
    const Job j = load_job(kRun, {"cluster.gpu=h100-sxm"});
    ASSERT_FALSE(j.training.xla);
    const Calibration cal = default_calibration();
    const Memory m = estimate(j, cal).memory;
    EXPECT_GE(m.buffers_bytes, cal.workspace_bytes);
    // The caching allocator's model: the driver's total less what lives
    // outside the allocator, and a fragmentation share of the churned
    // memory (estimate/memory.cpp).
    EXPECT_DOUBLE_EQ(m.capacity_bytes, static_cast<double>(j.cluster.gpu.memory_total_bytes) - cal.memory_reserved_bytes);
    EXPECT_GT(m.fragmentation_bytes, 0);
}

// XLA fuses the activation function and the rotary embedding into the
// matmuls; a norm reads its input once, a residual add reads and writes.
TEST(XlaFusion, OnlyNormReadsAndResidualAddsCrossHbm) {
    const Job j = load_job(kRun);
    const LayerWork xla = layer_work(j.model, j.training, j.plan);
    const double act = static_cast<double>(j.training.micro_batch) * j.training.seq_length * 8192 * 2;
    EXPECT_DOUBLE_EQ(xla.mem_bytes_fwd, (2 * 1 + 2 * 2) * act);
    EXPECT_DOUBLE_EQ(xla.mem_bytes_bwd, 2 * xla.mem_bytes_fwd);

    Training eager = j.training;
    eager.xla = false;  // the same plan under an eager PyTorch stack
    const LayerWork gpu = layer_work(j.model, eager, j.plan);
    EXPECT_GT(gpu.mem_bytes_fwd, 6 * xla.mem_bytes_fwd);
    EXPECT_DOUBLE_EQ(gpu.gemm_count, xla.gemm_count);  // the matmuls are the same
}

}  // namespace
}  // namespace lostflops
