// fp8 training's quantization traffic (workload/layer_gemms.cpp add_fp8_casts),
// pinned to a hand-computed layer: each cast reads bf16 and writes fp8 and its
// transpose, 4 bytes per element; forward casts the inputs no norm writes,
// backward every output gradient; each recipe's extra passes
// (lostflops/fp8_recipe.h); and the activations fp8 keeps at 1 byte.
#include <gtest/gtest.h>

#include <array>

#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// h 1024, 16 heads, ffn 4096, GeLU MLP; s 2048, b 1, flash attention: 2,048 tokens.
LayerWork gpt_layer(Precision precision, int tp, Fp8Recipe recipe = Fp8Recipe::delayed,
                    Framework framework = Framework::megatron_core, bool compile = false, bool sp = false) {
    const Model m = test::uniform_model(1, 1024, 16, 16, 4096, 50304, MlpKind::dense, true);
    Training tr;
    tr.seq_length = 2048;
    tr.micro_batch = 1;
    tr.attention = AttentionKernel::flash;
    tr.precision = precision;
    tr.fp8_recipe = recipe;
    tr.framework = framework;
    tr.compile = compile;
    ParallelPlan p;
    p.tp = tp;
    p.sequence_parallel = sp;
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

// The recipes against delayed scaling (lostflops/fp8_recipe.h), on the same
// layer: T = 2,048 tokens; the norm-fed inputs (QKV, fc1) are T x 1024 each,
// the others' inputs T x (1024 + 4096), the output gradients
// T x (3072 + 1024 + 4096 + 1024).
TEST(Fp8Casts, RecipesAgainstDelayedScaling) {
    const double T = 2048, norm_fed = 2 * 1024.0, others = 1024 + 4096.0, grads = 3072 + 1024 + 4096 + 1024.0;
    // Each against delayed scaling in the same stack (the eager stack's
    // norms and element-wise work are not Megatron's).
    const auto d = [&](const LayerWork& w, Framework f = Framework::megatron_core, bool compile = false) {
        const LayerWork delayed = gpt_layer(Precision::fp8, 1, Fp8Recipe::delayed, f, compile);
        return std::array<double, 4>{w.mem_bytes_fwd - delayed.mem_bytes_fwd, w.mem_bytes_bwd - delayed.mem_bytes_bwd,
                                     w.kernels_fwd - delayed.kernels_fwd, w.kernels_bwd - delayed.kernels_bwd};
    };
    // Current scaling under Transformer Engine: an amax pass (2 bytes an
    // element, one kernel) before every cast but those of the norm's
    // output, which TE's norm writes in 16-bit with its amax and the
    // quantizer casts (4 bytes, one kernel).
    const auto te = d(gpt_layer(Precision::fp8, 1, Fp8Recipe::tensorwise));
    EXPECT_DOUBLE_EQ(te[0], T * (2 * others + 4 * norm_fed));
    EXPECT_DOUBLE_EQ(te[1], T * 2 * grads);
    EXPECT_DOUBLE_EQ(te[2], 2 + 2);
    EXPECT_DOUBLE_EQ(te[3], 4);
    // torch.compile cannot reach into Transformer Engine's kernels: a
    // compiled Megatron job keeps its amax passes.
    const auto te_compiled = d(gpt_layer(Precision::fp8, 1, Fp8Recipe::tensorwise, Framework::megatron_core, true),
                               Framework::megatron_core, true);
    EXPECT_EQ(te_compiled, te);
    // torchao's Float8Linear sits behind a norm module that writes 16-bit
    // under every recipe: against bf16 in the same stack, eager tensorwise
    // casts every input (4 bytes) after an amax pass (2) over it, each a
    // kernel, and every output gradient the same way.
    const auto casts = [&](const LayerWork& w, bool compile) {
        const LayerWork bf16 = gpt_layer(Precision::bf16, 1, Fp8Recipe::delayed, Framework::fsdp, compile);
        return std::array<double, 4>{w.mem_bytes_fwd - bf16.mem_bytes_fwd, w.mem_bytes_bwd - bf16.mem_bytes_bwd,
                                     w.kernels_fwd - bf16.kernels_fwd, w.kernels_bwd - bf16.kernels_bwd};
    };
    const auto ao = casts(gpt_layer(Precision::fp8, 1, Fp8Recipe::tensorwise, Framework::fsdp), false);
    EXPECT_DOUBLE_EQ(ao[0], T * 6 * (others + norm_fed));
    EXPECT_DOUBLE_EQ(ao[1], T * 6 * grads);
    EXPECT_DOUBLE_EQ(ao[2], 4 * 2);
    EXPECT_DOUBLE_EQ(ao[3], 4 * 2);
    // torch.compile computes the amax where the operand is written: the
    // casts alone remain, the norm's output's among them.
    const auto compiled = casts(gpt_layer(Precision::fp8, 1, Fp8Recipe::tensorwise, Framework::fsdp, true), true);
    EXPECT_DOUBLE_EQ(compiled[0], T * 4 * (others + norm_fed));
    EXPECT_DOUBLE_EQ(compiled[1], T * 4 * grads);
    EXPECT_DOUBLE_EQ(compiled[2], 4);
    EXPECT_DOUBLE_EQ(compiled[3], 4);
    // Delayed scaling under torchao (removed there, priced with a warning):
    // the same casts, no amax pass, and no norm writing fp8.
    EXPECT_EQ(casts(gpt_layer(Precision::fp8, 1, Fp8Recipe::delayed, Framework::fsdp), false), compiled);
    // torchao's per-row scales cast along one axis at a time (read 2, write
    // 1: 3 bytes), each after an amax pass (2) in eager: forward every input
    // once; backward each output gradient along both axes and the saved
    // 16-bit input again along the other.
    const auto rows = casts(gpt_layer(Precision::fp8, 1, Fp8Recipe::rowwise, Framework::fsdp), false);
    EXPECT_DOUBLE_EQ(rows[0], T * 5 * (others + norm_fed));
    EXPECT_DOUBLE_EQ(rows[1], T * (2 * 5 * grads + 5 * (others + norm_fed)));
    EXPECT_DOUBLE_EQ(rows[2], 4 * 2);
    EXPECT_DOUBLE_EQ(rows[3], 4 * 2 * 2 + 4 * 2);
    // Compiled, the amax is fused where a producer writes the operand; the
    // saved input's per-column scales still need their own pass (2 + 3).
    const auto rows_compiled = casts(gpt_layer(Precision::fp8, 1, Fp8Recipe::rowwise, Framework::fsdp, true), true);
    EXPECT_DOUBLE_EQ(rows_compiled[0], T * 3 * (others + norm_fed));
    EXPECT_DOUBLE_EQ(rows_compiled[1], T * (2 * 3 * grads + 5 * (others + norm_fed)));
    EXPECT_DOUBLE_EQ(rows_compiled[2], 4);
    EXPECT_DOUBLE_EQ(rows_compiled[3], 4 * 2 + 4 * 2);
    // torchao's MXFP8 casts the same way, its 32-element block scales found
    // inside each cast: no amax pass, eager or compiled.
    const auto mx = casts(gpt_layer(Precision::fp8, 1, Fp8Recipe::mxfp8, Framework::fsdp), false);
    EXPECT_DOUBLE_EQ(mx[0], T * 3 * (others + norm_fed));
    EXPECT_DOUBLE_EQ(mx[1], T * (2 * 3 * grads + 3 * (others + norm_fed)));
    EXPECT_DOUBLE_EQ(mx[2], 4);
    EXPECT_DOUBLE_EQ(mx[3], 4 * 2 + 4);
    // Block scales (blockwise, MXFP8): one pass, the norm's output cast.
    for (const Fp8Recipe r : {Fp8Recipe::blockwise, Fp8Recipe::mxfp8}) {
        const auto b = d(gpt_layer(Precision::fp8, 1, r));
        EXPECT_DOUBLE_EQ(b[0], T * 4 * norm_fed);
        EXPECT_DOUBLE_EQ(b[1], 0);
        EXPECT_DOUBLE_EQ(b[2], 2);
        EXPECT_DOUBLE_EQ(b[3], 0);
    }
    // Sequence parallelism: the norm's output is cast on the rank's share
    // of the tokens, before the all-gather (tp 4: a quarter).
    const LayerWork sp_delayed = gpt_layer(Precision::fp8, 4, Fp8Recipe::delayed, Framework::megatron_core, false, true);
    const LayerWork sp_block = gpt_layer(Precision::fp8, 4, Fp8Recipe::mxfp8, Framework::megatron_core, false, true);
    EXPECT_DOUBLE_EQ(sp_block.mem_bytes_fwd - sp_delayed.mem_bytes_fwd, T * 4 * norm_fed / 4);
}

// Korthikanti et al.'s 34 sbh per layer (flash attention, tp 1): fp8 keeps
// the block inputs (2 x sbh), the output projection's input (sbh) and fc2's
// input (4 sbh) at 1 byte: 27 sbh.
TEST(Fp8Activations, GemmInputsKeptInFp8) {
    const double s = 2048, h = 1024;
    EXPECT_DOUBLE_EQ(gpt_layer(Precision::bf16, 1).activation_bytes, 34 * s * h);
    EXPECT_DOUBLE_EQ(gpt_layer(Precision::fp8, 1).activation_bytes, 27 * s * h);
    // torchao's per-row recipe and its MXFP8 save the 16-bit inputs
    // (fp8_torchao_axiswise): no byte saved; its tensorwise
    // recipe saves the same 7 sbh as Transformer Engine.
    const double fsdp_bf16 = gpt_layer(Precision::bf16, 1, Fp8Recipe::delayed, Framework::fsdp).activation_bytes;
    EXPECT_DOUBLE_EQ(gpt_layer(Precision::fp8, 1, Fp8Recipe::rowwise, Framework::fsdp).activation_bytes, fsdp_bf16);
    EXPECT_DOUBLE_EQ(gpt_layer(Precision::fp8, 1, Fp8Recipe::mxfp8, Framework::fsdp).activation_bytes, fsdp_bf16);
    EXPECT_DOUBLE_EQ(gpt_layer(Precision::fp8, 1, Fp8Recipe::tensorwise, Framework::fsdp).activation_bytes,
                     fsdp_bf16 - 7 * s * h);
}

}  // namespace
}  // namespace lostflops
