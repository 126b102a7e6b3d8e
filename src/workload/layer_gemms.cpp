// The fp8 casts of every GEMM's operands of a layer (the mixer's GEMMs are
// its kind's, job/mixers/; the MLP's and experts' workload/layer_work.cpp's).
// Transformer Engine's cast-transpose (below).
#include "workload/layer_work_parts.h"

namespace lostflops {

// fp8 training quantizes each GEMM operand from bf16 before the GEMM:
// Transformer Engine's cast-transpose kernel reads the bf16 tensor (2 B) and
// writes it in fp8 twice, as is and transposed (1 + 1 B), because Hopper's fp8
// GEMMs take only the "TN" layout, so the weight-gradient GEMM needs the
// transposed copy (Transformer Engine, docs/examples/fp8_primer.ipynb and
// transformer_engine/common/transpose/cast_transpose.cu; Blackwell's MXFP8
// likewise keeps row-wise and column-wise copies with their own block scales).
// torchao's Float8Linear (torchtitan) casts the same tensors. Forward: the
// input of every GEMM, except those whose input a norm writes directly in fp8
// (TE's LayerNormLinear: QKV / the mixer's input projection, fc1 of a dense
// MLP) and the router (kept in 16/32-bit). Backward: the output gradient of
// every GEMM but the router. Weights are cast once per step (Megatron's
// is_first_microbatch caching) and left out. One kernel per cast.
void add_fp8_casts(LayerWork& w, int norm_fed_mixer, int norm_fed_fc1, int router) {
    constexpr double kCastBytes = 2.0 + 1.0 + 1.0;  // read bf16, write fp8 and its transpose
    for (int i = 0; i < w.gemm_count; ++i) {
        if (i == router) continue;
        const GemmShape& g = w.gemms[static_cast<size_t>(i)];
        if (i != norm_fed_mixer && i != norm_fed_fc1) {
            w.mem_bytes_fwd += kCastBytes * g.count * g.m * g.k;
            w.kernels_fwd += 1;
        }
        w.mem_bytes_bwd += kCastBytes * g.count * g.m * g.n;
        w.kernels_bwd += 1;
    }
}

}  // namespace lostflops
