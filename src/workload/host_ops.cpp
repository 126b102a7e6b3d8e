// Operators a training stack issues from the host per layer and micro-batch.
//
// Eager PyTorch runs every operator through Python, the dispatcher and a CUDA
// launch; the GPU cannot start a kernel before the CPU has issued it, so a
// layer whose kernels are shorter than their issue cost leaves the GPU
// waiting (the "host-bound" regime of small layers and micro-batches; see
// PyTorch's CUDA Graphs notes, which exist to remove exactly this cost). The
// counts below are read off each stack's layer forward, one per module call,
// tensor operator (views included: each goes through the dispatcher) and
// collective; they are counts, not fitted numbers.
//
// Megatron-LM legacy (megatron/model/transformer.py, ParallelTransformerLayer,
// 2021-2022, used by Megatron-DeepSpeed): 11 module calls (layer, two
// LayerNorms, attention, QKV/proj/fc1/fc2 linears, MLP, softmax, dropout);
// input LN 1; QKV linear 2 (copy-to-TP region, GEMM+bias); view + split 2;
// unfused attention: 2 views, buffer, 3 transposes, baddbmm, view, fused
// scale-mask-softmax 3, CUDA RNG tracker fork 3, dropout 1, value path 7
// (views, bmm, permute, contiguous) = 21; flash attention instead: 6;
// output projection 2 (GEMM, reduce-from-TP region); two fused
// bias-dropout-adds 2 each; post-attention LN 1; MLP fc1 2, bias-GeLU 1,
// fc2 2. Backward: one autograd node per differentiable op that launches work
// (views and module calls launch none).
// Megatron-Core + Transformer Engine (2023 on): fused LayerNorm+linear
// modules, fused attention, fused bias-dropout-add; TE modules do more Python
// per call (fp8 metadata, workspace checks), so fewer but heavier calls.
// PyTorch eager Llama (torchtitan, HF models under FSDP/DeepSpeed): two
// unfused RMSNorms of 7 ops each, Q/K/V linears and views 6, rotary 12
// (view_as_complex, multiply, view_as_real, flatten, type_as, for Q and K),
// repeat_kv 4, transposes 4, SDPA 1, output 3, SwiGLU MLP 5, residual adds 2,
// 12 module calls; plus the sharding engine's pre/post-forward hooks.
// Tensor parallelism adds the collectives' launches; pipeline parallelism the
// send/receive per micro-batch; the loss and embedding their own operators
// (Megatron's vocab-parallel cross-entropy: max, all-reduce, subtract, mask,
// gather, exp, sum, all-reduce, log, mean ~ 20).
#include "workload/host_ops.h"

namespace lostflops {

namespace {

struct StackCounts {
    double layer_modules, layer_ops_unfused, layer_ops_flash;  // forward, tp = 1
    double bwd_nodes_unfused, bwd_nodes_flash;
    double engine_hooks;  // per-layer hooks of the sharding engine (ZeRO-3 / FSDP units)
};

StackCounts counts(Framework f) {
    switch (f) {
        case Framework::megatron_lm: return {11, 38, 23, 22, 14, 0};
        case Framework::megatron_core: return {12, 30, 30, 14, 14, 0};
        case Framework::fsdp: return {12, 51, 51, 30, 30, 2};
        case Framework::deepspeed: return {12, 51, 51, 30, 30, 12};
    }
    return {11, 38, 23, 22, 14, 0};
}

}  // namespace

HostOps host_ops(const Model& m, const Training& t, const ParallelPlan& p) { return host_ops(m.kind(0), t, p); }

HostOps host_ops(const LayerKind& m, const Training& t, const ParallelPlan& p) {
    const StackCounts c = counts(t.framework);
    const bool unfused = t.attention == AttentionKernel::unfused;
    HostOps h;
    h.layer_fwd = c.layer_modules + (unfused ? c.layer_ops_unfused : c.layer_ops_flash);
    h.layer_bwd = unfused ? c.bwd_nodes_unfused : c.bwd_nodes_flash;
    // Sharding engine hooks run only when parameters are sharded (ZeRO-3).
    if (p.zero >= 3) {
        h.layer_fwd += c.engine_hooks;
        h.layer_bwd += c.engine_hooks;
    }
    if (p.tp > 1) {
        // Two all-reduces (or all-gather + reduce-scatter pairs with sequence
        // parallelism) per layer each way.
        const double colls = p.sequence_parallel ? 4 : 2;
        h.layer_fwd += colls;
        h.layer_bwd += colls;
    }
    if (m.is_moe()) {
        // Router (linear, softmax, top-k), permute, per-local-expert MLPs,
        // un-permute, and the two all-to-alls.
        const double local = static_cast<double>(m.moe.experts) / p.ep;
        h.layer_fwd += 8 + 5 * local + (p.ep > 1 ? 2 : 0);
        h.layer_bwd += 4 + 4 * local + (p.ep > 1 ? 2 : 0);
    }
    if (p.cp > 1) {
        // Ring attention: one send/receive pair and one partial attention per step.
        h.layer_fwd += 3.0 * p.cp;
        h.layer_bwd += 3.0 * p.cp;
    }
    h.head_fwd = 3 + 20;  // final norm, output linear, vocab-parallel cross-entropy
    h.head_bwd = 12;
    h.embed_fwd = 8;      // vocab-parallel embedding: mask, subtract, lookup, fill, all-reduce
    h.embed_bwd = 4;
    h.microbatch_fwd = 10 + (p.pp > 1 ? 4 : 0);  // batch slicing, loss scaling, p2p
    h.microbatch_bwd = 4 + (p.pp > 1 ? 4 : 0);
    return h;
}

}  // namespace lostflops
