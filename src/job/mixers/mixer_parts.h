// What several mixer kinds share (job/layer_kinds.h; each kind's file in
// this folder): the softmax core and its keys, tensor parallelism's
// divisibility message, and the linear mixers' (Mamba-1/2, Gated DeltaNet,
// lightning) common checks, description and per-GPU memory. Internal to
// src/job/mixers.
#pragma once

#include <string>

#include "job/layer_kinds.h"

namespace lostflops::mixers {

// "{what} {n} is not divisible by tp {tp}", or "" when it is.
std::string tp_divides(int64_t n, int64_t tp, const char* what);

// Softmax attention's core per token: 2*a*(d + dv) per key a query sees.
double softmax_core_flops(const LayerKind& k, int64_t seq, bool causal);
// Softmax attention on one GPU: the rank's sizes and the attention's heads
// a, head dim d, value head dim dv, heads on this GPU a / t.
struct SoftmaxShape {
    double t, c, tokens, h, el, a, d, dv, heads_local;
};
SoftmaxShape softmax_shape(const LayerKind& k, const MixerRank& r);

// A scan of d_inner x d_state per token, 7*di*N as Megatron-LM's
// mamba_layer_flops counts Mamba-2's (training.py): Mamba-1 and Mamba-2.
double scan_core_flops(const LayerKind& k, int64_t seq, bool causal);

// Linear mixers: heads and a head dim, groups and a state size.
KindProblem linear_problem(const LayerKind& k);
// Heads and groups split over TP (Megatron-Core's MambaMixer, GatedDeltaNet).
std::string heads_and_groups_tp_problem(const LayerKind& k, int64_t tp);
// "(HxD, groups G, state N)".
std::string linear_shape_text(const LayerKind& k);
// Their memory on one GPU: the convolution's channels on this GPU
// (conv_local) and in all (conv), the input projections' outputs (proj,
// all GPUs), from which the memory-bound traffic (convolution, the scan's
// inputs and output, the gated norm: 6 kernels), the saved tensors (the
// projections' outputs, the convolution's, the core output and the norm
// output, 2 bytes each, split over TP; the fp32 state at every chunk
// boundary), its weights (all split over TP) and its one core kernel.
void linear_on_rank(const LayerKind& k, const MixerRank& r, double conv_local, double conv, double proj,
                    MixerOnRank& o);

}  // namespace lostflops::mixers
