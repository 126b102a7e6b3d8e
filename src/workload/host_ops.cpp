// Operators a training stack issues from the host per layer and micro-batch.
//
// Eager PyTorch runs every operator through Python, the dispatcher and a CUDA
// launch; the GPU cannot start a kernel before the CPU has issued it, so a
// layer whose kernels are shorter than their issue cost leaves the GPU
// waiting (the "host-bound" regime of small layers and micro-batches; see
// PyTorch's CUDA Graphs notes, which exist to remove exactly this cost). The
// counts below are read off each stack's layer code; they are counts, not
// fitted numbers. docs/host-time.md gives the per-operator times and their
// sources.
//
// Megatron-LM legacy as Megatron-DeepSpeed runs it (megatron/model/
// transformer.py ParallelTransformerLayer, megatron/core/tensor_parallel/
// layers.py, mappings.py, random.py; microsoft/Megatron-DeepSpeed of
// 2023-09, commit 4822c87e, the code base of vTrain's measured runs), counted
// in the unit the PyTorch profiler records on the issuing thread: one
// top-level operator per Python call into the framework (an ATen operator, a
// Python autograd Function's apply, an extension or TorchScript call); module
// calls and Python glue are the time between them, inside host_op_us.
// Forward, tp 1, unfused attention: input LayerNorm (apex Function) 1; QKV
// ColumnParallelLinear: copy-to-TP-region apply, linear-with-grad-
// accumulation apply 2; view + split 2; CoreAttention 25 (views of q and k 2,
// global-buffer slice + view 2, three transposes 3, baddbmm 1, view 1, fused
// scale-mask-softmax view + apply + view 3, CUDA RNG tracker fork: get and set
// the state on entry and on exit 4, dropout 1, value path: views of v and of
// the probabilities 2, transpose 1, bmm 1, view 1, permute 1, contiguous 1,
// view 1); output RowParallelLinear: linear apply, reduce-from-TP-region
// apply 2; bias expand_as + scripted bias-dropout-add 2; post-attention
// LayerNorm 1; the layer's two torch.tensor(0.0, device=...) (moe_loss,
// mlp_bias) 2; MLP: fc1 2, bias-GeLU Function 1, fc2 2; expand_as +
// bias-dropout-add + make_viewless_tensor 3 = 45. Flash attention instead of
// the unfused core (einops rearrange + contiguous of q, k, v 6, RNG fork 4,
// FlashSelfAttention: rearranges 3, cu_seqlens aranges 2, flash Function 1,
// output rearrange 1, back to [s, b, h] + contiguous 2 = 19): 39.
// Backward, Python: linear-with-grad-accumulation backward (saved tensors,
// matmul, contiguous, two views, t, matmul; + sum for the bias QKV keeps
// inside) 8 + 7 + 7 + 7; apex LayerNorm backward (saved tensors, contiguous,
// extension call) 2 x 3; softmax backward 2; bias-GeLU backward (saved
// tensors, scripted call) 2 = 39; flash attention's backward Function
// instead of the softmax's (saved tensors, three empty_like, extension call)
// 5: 42. Backward, C++ engine nodes: view-like (views, transposes, permute,
// split, expand_as, the contiguous copy) 20, baddbmm, dropout, bmm and the two
// scripted bias-dropout-adds 5, one Python-function node per Function applied
// in forward 13, AccumulateGrad per parameter (two LayerNorms, four linears,
// weight and bias each) 12 = 50; with flash attention 45.
// Tensor parallelism: the forward's two all-reduces are Python calls inside
// the mapping Functions (+2; +4 with sequence parallelism, an all-gather per
// column linear and a reduce-scatter per row linear); the backward's column
// linears launch their input-gradient all-reduce and wait for it, and the
// copy-to-region Functions all-reduce (+6 Python; +8 with sequence
// parallelism). Full recompute (megatron CheckpointFunction around each
// layer): forward apply + CPU and CUDA RNG states 3; backward: saved tensors,
// get and set both RNG states twice, detach the inputs, torch.autograd.backward
// 11 = 14 Python operators, besides the forward's operators issued again.
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
    double bwd_nodes_unfused, bwd_nodes_flash;                 // C++ autograd nodes
    double bwd_py_unfused, bwd_py_flash;                       // Python operators in backward
    double engine_hooks;  // per-layer hooks of the sharding engine (ZeRO-3 / FSDP units)
    double tp_bwd_py;     // Python operators tensor parallelism adds to backward (beyond the collectives)
    double checkpoint_py; // Python operators of the full-recompute checkpoint per layer
};

StackCounts counts(Framework f) {
    switch (f) {
        // Module calls are not counted apart: they are time between operators.
        case Framework::megatron_lm: return {0, 45, 39, 50, 45, 39, 42, 0, 4, 14};
        case Framework::megatron_core: return {12, 30, 30, 14, 14, 0, 0, 0, 0, 0};
        case Framework::fsdp:
        case Framework::hf:  // not reached: host_ops() sends hf to host_ops_hf.cpp
            return {12, 51, 51, 30, 30, 0, 0, 2, 0, 0};
        case Framework::deepspeed: return {12, 51, 51, 30, 30, 0, 0, 12, 0, 0};
    }
    return {0, 45, 39, 50, 45, 39, 42, 0, 4, 14};
}

}  // namespace

HostOps host_ops(const Model& m, const Training& t, const ParallelPlan& p) { return host_ops(m, m.kind(0), t, p); }

HostOps host_ops(const Model& model, const LayerKind& m, const Training& t, const ParallelPlan& p) {
    if (t.framework == Framework::hf) return hf_host_ops(model, m, t, p);
    const StackCounts c = counts(t.framework);
    const bool unfused = t.attention == AttentionKernel::unfused;
    HostOps h;
    h.layer_fwd = c.layer_modules + (unfused ? c.layer_ops_unfused : c.layer_ops_flash);
    h.layer_bwd = unfused ? c.bwd_nodes_unfused : c.bwd_nodes_flash;
    h.layer_bwd_py = unfused ? c.bwd_py_unfused : c.bwd_py_flash;
    h.checkpoint_py = c.checkpoint_py;
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
        // A stack whose backward runs Python Functions issues them from Python.
        if (c.tp_bwd_py > 0)
            h.layer_bwd_py += colls + c.tp_bwd_py;
        else
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
