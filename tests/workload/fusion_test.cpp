// Kernel fusion of the elementwise chains (workload/layer_work.cpp), pinned to
// hand-computed layers: squared ReLU as NeMo runs it (torch.pow(relu(x), 2),
// two kernels forward, four backward) and torch.compile (training.compile)
// fusing an eager stack's RMSNorm, rotary and SwiGLU chains.
#include <gtest/gtest.h>

#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// h 1024, 16 heads (head dim 64), ffn 4096; s 2048, b 1, tp 1, flash
// attention, bf16: 2,048 tokens, one FFN activation 2048 x 4096 x 2 B.
constexpr double kTokens = 2048, kHidden = 1024, kFfn = 4096;

LayerWork layer(MlpKind mlp, Activation act, Framework fw, bool compile) {
    const Model m = test::uniform_model(1, 1024, 16, 16, 4096, 50304, mlp, true);
    LayerKind k = m.kind(0);
    k.mlp.act = act;
    Training tr;
    tr.seq_length = 2048;
    tr.micro_batch = 1;
    tr.attention = AttentionKernel::flash;
    tr.framework = fw;
    tr.compile = compile;
    return layer_work(m, k, tr, ParallelPlan{});
}

TEST(Fusion, SquaredReluRunsUnfused) {
    const LayerWork relu = layer(MlpKind::dense, Activation::relu, Framework::megatron_core, false);
    const LayerWork relu2 = layer(MlpKind::dense, Activation::relu2, Framework::megatron_core, false);
    // Forward: relu (read 2, write 2) and pow (read 2, write 2) against one
    // fused kernel (2 + 2): 4 B more per FFN element, one kernel more.
    EXPECT_DOUBLE_EQ(relu2.mem_bytes_fwd - relu.mem_bytes_fwd, 4.0 * kTokens * kFfn);  // 33,554,432
    // Backward: pow copy (2 + 2), scalar multiply (2 + 2), multiply by the
    // gradient (4 + 2), threshold_backward (4 + 2) = 20 B in 4 kernels,
    // against a fused backward of 8 B in 2.
    EXPECT_DOUBLE_EQ(relu2.mem_bytes_bwd - relu.mem_bytes_bwd, 12.0 * kTokens * kFfn);  // 100,663,296
    EXPECT_DOUBLE_EQ(relu2.kernels_fwd - relu.kernels_fwd, 1);
    EXPECT_DOUBLE_EQ(relu2.kernels_bwd - relu.kernels_bwd, 2);
    // torch.compile fuses it back into one kernel each way.
    const LayerWork compiled = layer(MlpKind::dense, Activation::relu2, Framework::megatron_core, true);
    EXPECT_DOUBLE_EQ(compiled.mem_bytes_fwd, relu.mem_bytes_fwd);
    EXPECT_DOUBLE_EQ(compiled.mem_bytes_bwd, relu.mem_bytes_bwd);
}

TEST(Fusion, CompileFusesTheEagerLlamaChains) {
    const LayerWork eager = layer(MlpKind::gated, Activation::silu, Framework::fsdp, false);
    const LayerWork compiled = layer(MlpKind::gated, Activation::silu, Framework::fsdp, true);
    const LayerWork fused = layer(MlpKind::gated, Activation::silu, Framework::megatron_core, false);
    // Eager, per forward element: 2 RMSNorms at 36 B against 4 (on 2048 x
    // 1024), rotary at 20 B against 4 on Q and K (2048 x 2 x 16 x 64), SwiGLU
    // at 10 B against 6 (2048 x 4096).
    const double extra = 2 * 32 * kTokens * kHidden + 16 * kTokens * 2 * 16 * 64 + 4 * kTokens * kFfn;
    EXPECT_DOUBLE_EQ(extra, 234881024.0);
    EXPECT_DOUBLE_EQ(eager.mem_bytes_fwd - compiled.mem_bytes_fwd, extra);
    EXPECT_DOUBLE_EQ(eager.kernels_fwd - compiled.kernels_fwd, 2 * 5 + 2 * 2 + 1);
    // Compiled, the eager stack's elementwise work is the fused stack's.
    EXPECT_DOUBLE_EQ(compiled.mem_bytes_fwd, fused.mem_bytes_fwd);
    EXPECT_DOUBLE_EQ(compiled.mem_bytes_bwd, fused.mem_bytes_bwd);
}

}  // namespace
}  // namespace lostflops
