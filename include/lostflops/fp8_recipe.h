// The fp8 recipes (spec.h Fp8Recipe), one row each: the word a job file
// gives (training.fp8_recipe, Megatron-Core's --fp8-recipe names, torchao's
// rowwise), the GEMM format the calibration prices it at (spec.h GemmDtype,
// data/calibration/gemm.csv), and what the casts in front of each GEMM cost
// (workload/layer_gemms.cpp add_fp8_casts).
//
// Casts, read in Transformer Engine 2.x (transformer_engine/pytorch/csrc):
// every recipe's quantize kernel reads the 16-bit tensor once and writes it in
// fp8 as is and transposed (1 + 1 bytes; the block formats' scales add about a
// 32nd of a byte an element: one E8M0 byte per 32, one fp32 per 128). Current
// scaling (tensorwise) first runs nvte_compute_amax over the tensor (one more
// read) and nvte_compute_scale_from_amax (quantizer.cpp
// Float8CurrentScalingQuantizer, cast.cpp multi_tensor_quantize); torchao's
// dynamic scaling, tensorwise or per row, is the same two passes
// (float8_utils.py tensor_to_amax, then the cast). A norm in front of a GEMM
// writes the fp8 operand itself only under delayed scaling:
// extensions/normalization.cpp keeps the fused kernel for Float8Quantizer
// alone ("Always used fused kernel for FP8 delayed scaling"); under the others
// it writes 16-bit (current scaling: with its amax,
// create_hp_tensor_with_amax) and the quantizer casts that. torchao's
// Float8Linear sits after a norm module: its input is always 16-bit
// (fp8_casts_by_torchao).
#pragma once

#include "lostflops/spec.h"

namespace lostflops {

struct Fp8RecipeRow {
    Fp8Recipe recipe;
    const char* name;       // as a job file and Megatron-Core's --fp8-recipe write it
    GemmDtype gemm;         // the GEMM format priced
    bool amax_pass;         // an amax kernel reads each operand, and a scale kernel runs, before its cast
    bool norm_writes_fp8;   // a norm writes its consumer GEMM's fp8 operand itself: no cast
    // The stacks that run it. Transformer Engine: DelayedScaling,
    // Float8CurrentScaling, Float8BlockScaling, MXFP8BlockScaling
    // (transformer_engine/common/recipe; Megatron-Core's --fp8-recipe
    // choices). torchao through torchtitan's converters: float8's tensorwise
    // and rowwise (torchao/float8/config.py Float8LinearRecipeName), mx's
    // MXFP8 (components/quantization/mx.py); delayed scaling was removed from
    // torchao in v0.10 (pytorch/ao#1753, torchtitan#812).
    bool te_runs;
    bool torchao_runs;
};

inline constexpr Fp8RecipeRow kFp8Recipes[] = {
    {Fp8Recipe::delayed, "delayed", GemmDtype::fp8_tensor, false, true, true, false},
    {Fp8Recipe::tensorwise, "tensorwise", GemmDtype::fp8_tensor, true, false, true, true},
    {Fp8Recipe::rowwise, "rowwise", GemmDtype::fp8_row, true, false, false, true},
    {Fp8Recipe::blockwise, "blockwise", GemmDtype::fp8_block, false, false, true, false},
    {Fp8Recipe::mxfp8, "mxfp8", GemmDtype::mxfp8, false, false, true, true},
};

// Who casts a job's fp8 operands: torchao's Float8Linear under fsdp
// (torchtitan's float8 converter) and hf (eager PyTorch), Transformer
// Engine's modules under Megatron and DeepSpeed.
inline bool fp8_casts_by_torchao(Framework f) { return f == Framework::fsdp || f == Framework::hf; }

// torchao's axiswise casts: its per-row recipe and its MXFP8 (MXLinear)
// keep the 16-bit GEMM input for backward and cast one axis at a time,
// casting the input again along the other in backward (torchao/float8/
// float8_linear.py manual_float8_matmul_with_args_in_hp and
// torchao/prototype/mx_formats/mx_linear.py mx_mm: ctx.save_for_backward(
// input_hp, ...)).
inline bool fp8_torchao_axiswise(const Training& t) {
    return t.precision == Precision::fp8 && fp8_casts_by_torchao(t.framework) &&
           (t.fp8_recipe == Fp8Recipe::rowwise || t.fp8_recipe == Fp8Recipe::mxfp8);
}
// Whether an fp8 job saves its GEMM inputs for backward in fp8 (1 byte an
// element): Transformer Engine saves its quantized inputs under every
// recipe, torchao its tensorwise casts (the torchao of late 2024; its
// current matmul_with_hp_or_float8_args keeps the 16-bit input under every
// recipe, not priced), not its axiswise ones.
inline bool fp8_saves_fp8_inputs(const Training& t) {
    return t.precision == Precision::fp8 && !fp8_torchao_axiswise(t);
}

inline const Fp8RecipeRow& fp8_recipe_row(Fp8Recipe r) {
    for (const Fp8RecipeRow& row : kFp8Recipes)
        if (row.recipe == r) return row;
    return kFp8Recipes[0];
}

}  // namespace lostflops
