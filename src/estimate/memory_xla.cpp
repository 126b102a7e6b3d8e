// Memory per TPU chip of a JAX / XLA (MaxText) job: the state the compiled
// step keeps, in place of the GPU stacks' (estimate/memory.cpp). Activations
// and logits are the shared per-layer counts (workload/layer_work.cpp):
// MaxText's remat policy `full` keeps each scanned layer's input
// (decoder_layer_input, "periodic checkpoints that act as the remat start
// points"), the others keep matmul outputs (selective), and its loss keeps
// fp32 logits and exp(logits - max) for the backward, 8 B per logit, its
// gradient fused into the output layer's backward dots (cast_logits_to_fp32
// and max_utils._cross_entropy_with_logits_fwd; workload/layer_work.cpp).
//
//  weights     4 B/param: weight_dtype float32 (MaxText base.yml); each layer
//              casts its kernel to dtype bfloat16 when it uses it
//  gradients   4 B/param: grad_dtype float32 (base.yml)
//  optimizer   AdamW mu (mu_dtype "inherits from weight_dtype if unset") and nu
//              ("nu_dtype is always inherited from weights"), 4 B each: 8 B;
//              4 with training.optimizer adam-bf16. No separate master copy:
//              the fp32 parameters are it.
//  sharding    as ZeRO stages (parameters, gradients and optimizer state at
//              zero 3, 2, 1), over the ranks that hold a replica: MaxText's
//              fsdp axes shard all three (the importer writes zero: 3).
//  buffers     no framework reserve (no CUDA context, cuBLAS or NCCL
//              workspaces). Sharded parameters (zero 3) are gathered one
//              weight matrix at a time: XLA's SPMD partitioner inserts the
//              all-gather on the operand of the dot that needs it (Xu et al.
//              2021, "GSPMD: General and Scalable Parallelization for ML
//              Computation Graphs"), after the bf16 convert, which stays on
//              the shard; the latency-hiding scheduler issues the next
//              matrix's all-gather under the current dot (ASSUMPTION: one
//              in flight ahead): two matrices of the largest kind live, 16-bit. In the backward a weight's gradient
//              is reduce-scattered as its dot produces it, before the
//              transpose of the convert makes it fp32 on the shard: one more
//              16-bit matrix. Not FSDP's whole layers plus a root unit
//              (zero3_live), which keep the GPU stacks' gathered units.
//  liveness    XLA's buffer assignment frees each buffer at its last use
//              (static liveness over the compiled program): the loss's fp32
//              buffers die in the output layer's backward, before the first
//              layer's backward recomputes its working set, so under full
//              remat that working set reuses their space and the peak holds
//              the larger of the two, not both (xla_reuse_loss_space).
//  capacity    HBM less the TPU runtime's reserve: a 32 GiB TPU reports
//              bytes_limit 34,088,157,184 B (jax Device.memory_stats(),
//              pytorch/xla PR #7086, 2024-05-20), 271,581,184 B below 2^35.
//              XLA assigns every buffer at compile time: no caching allocator
//              and no fragmentation share (calibration
//              memory_usable_fraction is the PyTorch allocator's).
#include "estimate/memory.h"

#include <algorithm>

namespace lostflops {

namespace {

// jax Device.memory_stats() on a 32 GiB TPU: 2^35 - 34,088,157,184 bytes
// (pytorch/xla PR #7086). Taken as the same on every TPU generation
// (ASSUMPTION: no other generation's bytes_limit is published).
constexpr double kTpuRuntimeReserveBytes = 271'581'184.0;
constexpr double kXlaWeightBytes = 4.0;  // weight_dtype float32
constexpr double kXlaGradBytes = 4.0;    // grad_dtype float32
constexpr double kXla16BitBytes = 2.0;   // a gathered weight or an unreduced gradient, dtype bfloat16
constexpr double kXlaGatheredMatrices = 2.0;  // the current dot's weight and the next one's, in flight

double adam_bytes(Optimizer o) { return o == Optimizer::adam_bf16 || o == Optimizer::adam_bf16_moments ? 4.0 : 8.0; }

}  // namespace

double xla_state_bytes_per_param(Optimizer o) { return kXlaWeightBytes + kXlaGradBytes + adam_bytes(o); }

double xla_capacity_bytes(const Gpu& gpu) {
    return std::max(0.0, static_cast<double>(gpu.memory_bytes) - kTpuRuntimeReserveBytes);
}

Memory memory_state_xla(const Job& job, const LayerWork& mean, const StageParams& sp) {
    const ParallelPlan& p = job.plan;
    const double nd = dense_replicas(p), ne = expert_replicas(p);
    const auto held = [&](int from_stage) {
        return p.zero >= from_stage ? sp.params / nd + sp.expert_params / ne : sp.params + sp.expert_params;
    };
    Memory mem;
    mem.weights_bytes = kXlaWeightBytes * held(3);
    mem.gradients_bytes = kXlaGradBytes * held(2);
    mem.optimizer_bytes = adam_bytes(job.training.optimizer) * held(1);
    if (p.zero >= 3) {
        double largest = 0;  // elements of the largest weight matrix on this rank
        for (int g = 0; g < mean.gemm_count; ++g) largest = std::max(largest, mean.gemms[g].n * mean.gemms[g].k);
        mem.zero_live_params = std::min(kXlaGatheredMatrices * largest, sp.params + sp.expert_params);
        mem.zero_live_bytes = kXla16BitBytes * (mem.zero_live_params + std::min(largest, sp.params + sp.expert_params));
        mem.buffers_bytes = mem.zero_live_bytes;
    }
    const double usable = xla_capacity_bytes(job.cluster.gpu);
    mem.headroom_bytes = headroom_bytes(job.cluster, usable);
    mem.capacity_bytes = usable - mem.headroom_bytes;
    return mem;
}

void xla_reuse_loss_space(const Job& job, KindWorks works, Memory& act) {
    if (job.plan.recompute != Recompute::full || act.logits_bytes <= 0) return;
    double working_set = 0;
    for (const LayerWork& w : works) working_set = std::max(working_set, w.activation_bytes_full);
    act.activations_bytes -= std::min(std::min(working_set, act.logits_bytes), act.activations_bytes);
}

}  // namespace lostflops
