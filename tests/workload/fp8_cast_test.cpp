// fp8 training's quantization traffic (workload/layer_work.cpp add_fp8_casts),
// pinned to a hand-computed layer: each cast reads bf16 and writes fp8 and its
// transpose, 4 bytes per element; forward casts the inputs no norm writes,
// backward every output gradient; and the activations fp8 keeps at 1 byte.
#include <gtest/gtest.h>

#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// h 1024, 16 heads, ffn 4096, GeLU MLP; s 2048, b 1, flash attention: 2,048 tokens.
LayerWork gpt_layer(Precision precision, int tp) {
    const Model m = test::uniform_model(1, 1024, 16, 16, 4096, 50304, MlpKind::dense, true);
    Training tr;
    tr.seq_length = 2048;
    tr.micro_batch = 1;
    tr.attention = AttentionKernel::flash;
    tr.precision = precision;
    ParallelPlan p;
    p.tp = tp;
    return layer_work(m, tr, p);
}

TEST(Fp8Casts, HandComputedGptLayer) {
    const LayerWork bf16 = gpt_layer(Precision::bf16, 1);
    const LayerWork fp8 = gpt_layer(Precision::fp8, 1);
    // Forward: output projection input (2048 x 1024) and fc2 input (2048 x
    // 4096); QKV and fc1 read the norms' fp8 output.
    EXPECT_DOUBLE_EQ(fp8.mem_bytes_fwd - bf16.mem_bytes_fwd, 4.0 * 2048 * (1024 + 4096));  // 41,943,040
    // Backward: output gradients of QKV (3072), proj (1024), fc1 (4096), fc2 (1024).
    EXPECT_DOUBLE_EQ(fp8.mem_bytes_bwd - bf16.mem_bytes_bwd, 4.0 * 2048 * (3072 + 1024 + 4096 + 1024));
    EXPECT_DOUBLE_EQ(fp8.kernels_fwd - bf16.kernels_fwd, 2);
    EXPECT_DOUBLE_EQ(fp8.kernels_bwd - bf16.kernels_bwd, 4);
    // Selective recompute redoes the attention part only: no casts there.
    EXPECT_DOUBLE_EQ(fp8.mem_bytes_attention_fwd, bf16.mem_bytes_attention_fwd);
}

TEST(Fp8Casts, SplitOverTensorParallel) {
    const LayerWork bf16 = gpt_layer(Precision::bf16, 4);
    const LayerWork fp8 = gpt_layer(Precision::fp8, 4);
    // Each rank casts its quarter of the split dimensions: the row-parallel
    // inputs (proj, fc2) and the column-parallel output gradients (QKV, fc1);
    // the row-parallel output gradients (proj, fc2) are whole on every rank.
    EXPECT_DOUBLE_EQ(fp8.mem_bytes_fwd - bf16.mem_bytes_fwd, 4.0 * 2048 * (1024 + 4096) / 4);
    EXPECT_DOUBLE_EQ(fp8.mem_bytes_bwd - bf16.mem_bytes_bwd, 4.0 * 2048 * ((3072 + 4096) / 4 + 1024 + 1024));
}

// Korthikanti et al.'s 34 sbh per layer (flash attention, tp 1): fp8 keeps
// the block inputs (2 x sbh), the output projection's input (sbh) and fc2's
// input (4 sbh) at 1 byte: 27 sbh.
TEST(Fp8Activations, GemmInputsKeptInFp8) {
    const double s = 2048, h = 1024;
    EXPECT_DOUBLE_EQ(gpt_layer(Precision::bf16, 1).activation_bytes, 34 * s * h);
    EXPECT_DOUBLE_EQ(gpt_layer(Precision::fp8, 1).activation_bytes, 27 * s * h);
}

}  // namespace
}  // namespace lostflops
