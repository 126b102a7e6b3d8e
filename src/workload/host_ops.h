// Host (CPU) work of one micro-batch: how many framework operators the
// training loop issues from Python per transformer layer, per output layer
// and embedding, and per micro-batch, by training stack. The GPU cannot run
// ahead of the CPU that feeds it, so a pass takes at least the host's time for
// it (estimate/stage_time.cpp). Counts, not seconds: calibration host_op_us
// and host_bwd_op_us turn them into time.
#pragma once

#include "lostflops/model.h"
#include "lostflops/spec.h"

namespace lostflops {

struct HostOps {
    // Per transformer layer: operators the forward issues from Python
    // (calibration host_op_us each), autograd nodes the backward's C++ engine
    // evaluates (host_bwd_op_us each), and operators the backward issues from
    // Python (host_op_us each: the bodies of the stack's Python autograd
    // Functions and of its activation checkpoint). Full recompute runs the
    // forward's operators again in backward (estimate/stage_time.cpp).
    double layer_fwd = 0;
    double layer_bwd = 0;
    double layer_bwd_py = 0;
    // Python operators of the activation checkpoint around a fully
    // recomputed layer (saving and restoring RNG states, the inner backward
    // call), host_op_us each; charged only to the layers recomputed.
    double checkpoint_py = 0;
    // Of layer_fwd: FSDP2's hook operators around a layer (framework hf,
    // zero 3), which full recompute does not issue again (its pre- and
    // post-forward hooks return at once in the pre-backward state).
    double fsdp_fwd_ops = 0;
    // Of layer_fwd (framework hf): the operators a layer issues before its
    // mixer's core (FSDP2's pre-forward hook, the input norm, the q, k and v
    // projections, qk-norms, rotary, a KV cache's update): after a
    // synchronisation the host issues them with no lead, and the GPU, whose
    // kernels for them are short, waits for it (host_time.cpp
    // set_layer_host_time, LayerTime::lead_*). 0 where not counted.
    double lead_fwd = 0;
    // Output layer + loss, and the input embedding.
    double head_fwd = 0, head_bwd = 0;
    double embed_fwd = 0, embed_bwd = 0;
    // Per micro-batch and stage: the schedule's own Python (get batch, send /
    // receive, loss scaling, backward call).
    double microbatch_fwd = 0, microbatch_bwd = 0;
    // Framework hf: the micro-batch's host-device synchronisations
    // (estimate/stage_time.cpp binds the host's time between them). Each
    // forward call copies a flag to the host after the embedding's
    // operators (forward_syncs: transformers' packed-sequence check). A layer
    // whose experts run torch._grouped_mm's fallback copies the offsets to
    // the host at each call (expert_loop_calls_fwd forward, _bwd backward),
    // then loops over expert_loop_groups groups from C++ (calibration
    // hf_expert_loop_us each; not part of layer_fwd / layer_bwd).
    double forward_syncs = 0;
    // Of embed_fwd, the operators after the check (the rotary tables:
    // LlamaRotaryEmbedding.forward's 15). The others a micro-batch after the
    // step's first issues while the GPU still runs the backward before it
    // (stage_pass.cpp finish_pass). All of embed_fwd where not known.
    double embed_fwd_after_check = 0;
    double expert_loop_calls_fwd = 0, expert_loop_calls_bwd = 0;
    double expert_loop_groups = 0;
};

// Framework hf (workload/host_ops_hf.cpp): transformers' own operators, and
// the parameter tensors torch.optim's Python walks once per optimizer step.
HostOps hf_host_ops(const Model& m, const LayerKind& k, const Training& t, const ParallelPlan& p);
double hf_param_tensors(const Model& m);
// A layer of kind k of model m under torch.compile (autocast: over fp32 weights): the
// kernels Inductor's wrapper launches, one host launch each, forward
// (layer_fwd) and backward (layer_bwd); layer_work.cpp takes them as the
// layer's GPU kernel counts.
HostOps hf_compiled_host_ops(const Model& m, const LayerKind& k, bool autocast);
// The parameter tensors of one layer of kind k as transformers builds it:
// norm weights (and biases), each linear's weight and bias, qk-norm weights,
// an MoE block's router and stacked experts. FSDP2 casts and copies each
// one (eager_traffic.cpp add_fsdp2_traffic, hf_host_ops).
double hf_layer_param_tensors(const Model& m, const LayerKind& k);

// The layer counts of a layer of kind `k` of `m`.
HostOps host_ops(const Model& m, const LayerKind& k, const Training& t, const ParallelPlan& p);
// A uniform model's (precondition: m.uniform()).
HostOps host_ops(const Model& m, const Training& t, const ParallelPlan& p);

}  // namespace lostflops
