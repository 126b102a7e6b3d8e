// The host's share of a layer, the output layer and the embedding
// (stage_time.h set_*_host_time): operators times their costs
// (workload/host_ops.cpp counts them, calibration host_op_us and its kin
// price them), and where the host synchronises with the GPU, the part of
// the pass it cannot run ahead across, bound on its own (PassTime::sync_s).
//
// A synchronisation (a blocking device-to-host copy: .cpu(), .item(), a GPU
// tensor in a Python `if`) makes the host wait until the GPU has run all it
// was given; after it the GPU waits for the host's next launch (calibration
// hf_sync_us, measured after every such copy of the H200 traces) and the
// host starts again with no lead. A stretch between two synchronisations is
// then a two-stage flow shop (host issues, GPU runs) of its pieces in order;
// for a first piece a (host h_a, GPU g_a) and the rest b, each spread
// evenly, the GPU finishes at
//
//     T = max(h_a + h_b, max(h_a, g_a) + g_b)
//
// (the GPU either waits for the host's last launch, or runs b after a,
// which itself took the longer of its issue and its run; Johnson 1954, the
// two-machine flow shop). Without synchronisations the pass is bound as a
// whole, max(host, GPU) (PassTime::bind_host).
//
// Where they are, framework hf (counts in workload/host_ops_hf.cpp):
// - transformers' packed-sequence check, once per forward call after the
//   embedding's operators (masking_utils.py find_packed_sequence_indices):
//   the step starts with an idle GPU (the training loop synchronises every
//   step), so the embedding's operators and the copy's idle are the GPU's
//   wait: sync_s = embedding host time + hf_sync_us.
// - torch._grouped_mm's fallback (PyTorch aten/src/ATen/native/
//   GroupedMMUtils.h _grouped_mm_fallback, `offs.value().cpu()` before its
//   per-group loop), which transformers' grouped_mm_experts_forward
//   (integrations/moe.py) calls with GPU offsets from histc and cumsum:
//   each call is a stretch starting with its loop (groups x
//   hf_expert_loop_us of host, the call's fp32 GEMMs on the GPU). Forward:
//   [gate_up loop, activation] [down loop, the rest of the layer: its
//   attention, router and permutation, which the next stretch would hold
//   for the next layer]; backward (GroupedMmBackward0, two calls each):
//   down's input and weight gradients, then gate_up's, the rest after the
//   last. The other operators of the layer are the `b` of the stretch they
//   follow; the activation's few are left in the rest.
#include "estimate/stage_time.h"

#include <algorithm>

namespace lostflops {

namespace {

// The flow shop's makespan of a stretch: first piece (host ha, GPU ga), rest (hb, gb).
double stretch_s(double ha, double ga, double hb = 0, double gb = 0) {
    return std::max(ha + hb, std::max(ha, ga) + gb);
}

// One pass of a layer whose expert calls synchronise: `calls` stretches, the
// i-th starting with a loop of `loop_h` host seconds on GPU time gpu(i), the
// last also holding the rest of the pass (rest_h, rest_g); each after the
// GPU's idle at its synchronisation.
template <class Gpu>
double synced_pass_s(int calls, double loop_h, Gpu gpu, double rest_h, double rest_g, double sync_s) {
    double t = 0;
    for (int i = 0; i < calls; ++i)
        t += sync_s + (i + 1 < calls ? stretch_s(loop_h, gpu(i)) : stretch_s(loop_h, gpu(i), rest_h, rest_g));
    return t;
}

// Binds a layer's passes at its expert calls: the pass's time becomes the
// stretches' sum, its host time all inside them (cpu_s 0), the GPU's waits
// in sync_s.
void bind_expert_loops(LayerTime& t, const PlanContext& ctx, const HostOps& h, const ParallelPlan& p) {
    const double loop_h = h.expert_loop_groups * ctx.expert_loop_group_s;
    const double up = t.expert_loop_s[0], down = t.expert_loop_s[1];
    const int fwd_calls = static_cast<int>(h.expert_loop_calls_fwd);
    const int bwd_calls = static_cast<int>(h.expert_loop_calls_bwd);
    // Forward: gate_up, down, alternating.
    const auto fwd_gpu = [&](int i) { return i % 2 == 0 ? up : down; };
    const double f_gpu = t.fwd.gpu_s();
    double loops = 0;
    for (int i = 0; i < fwd_calls; ++i) loops += fwd_gpu(i);
    const double f_rest_g = std::max(0.0, f_gpu - loops);
    const double f_s = synced_pass_s(fwd_calls, loop_h, fwd_gpu, t.fwd.cpu_s, f_rest_g, ctx.sync_s);
    // Backward: the later GEMM's gradients first (down), each call of the
    // same FLOPs as its forward GEMM; full recompute runs the forward's
    // stretches again inside it.
    const auto bwd_gpu = [&](int i) { return 2 * i < bwd_calls ? down : up; };
    const double b_gpu = t.bwd.gpu_s();
    double b_loops = 0;
    for (int i = 0; i < bwd_calls; ++i) b_loops += bwd_gpu(i);
    double redo_s = 0;
    if (p.recompute == Recompute::full) {
        b_loops += loops;
        redo_s = synced_pass_s(fwd_calls, loop_h, fwd_gpu, 0.0, 0.0, ctx.sync_s);
    }
    const double b_rest_g = std::max(0.0, b_gpu - b_loops);
    const double b_s = redo_s + synced_pass_s(bwd_calls, loop_h, bwd_gpu, t.bwd.cpu_s, b_rest_g, ctx.sync_s);
    t.fwd.sync_s = std::max(0.0, f_s - f_gpu);
    t.bwd.sync_s = std::max(0.0, b_s - b_gpu);
    t.fwd.cpu_s = 0;
    t.bwd.cpu_s = 0;
}

}  // namespace

void set_layer_host_time(LayerTime& t, const PlanContext& ctx, const HostOps& h, const ParallelPlan& p) {
    t.fwd.cpu_s = h.layer_fwd * ctx.host_op_s;
    t.bwd.cpu_s = h.layer_bwd * ctx.host_bwd_op_s + h.layer_bwd_py * ctx.host_op_s;
    // The forward's operators are issued again, inside the checkpoint's own,
    // but FSDP2's hooks (HostOps::fsdp_fwd_ops).
    if (p.recompute == Recompute::full) {
        t.bwd.cpu_s += t.fwd.cpu_s + h.checkpoint_py * ctx.host_op_s;
        if (h.fsdp_fwd_ops > 0) t.bwd.cpu_s -= h.fsdp_fwd_ops * ctx.host_op_s;
    }
    t.fwd.sync_s = t.bwd.sync_s = 0;
    t.hook_host_s = t.hook_gpu_s = t.lead_host_s = t.lead_gpu_s = 0;
    if (h.lead_fwd > h.fsdp_fwd_ops && h.layer_fwd > h.fsdp_fwd_ops && h.expert_loop_calls_fwd == 0) {
        // FSDP2's hook: its operators on the host, the unshard on the GPU.
        // Then the layer's own operators before the core: on the GPU its
        // GEMMs and the forward's other memory-bound kernels and launches in
        // proportion to its operators.
        const double own_ops = h.lead_fwd - h.fsdp_fwd_ops;
        const double share = own_ops / (h.layer_fwd - h.fsdp_fwd_ops);
        const double unshard_s = h.fsdp_fwd_ops > 0 ? t.unshard_s : 0.0;  // the hook's, none without it
        const double rest_s = std::max(0.0, t.fwd.memory_bound_s + t.fwd.overhead_s - unshard_s);
        t.hook_host_s = h.fsdp_fwd_ops * ctx.host_op_s;
        t.hook_gpu_s = unshard_s;
        t.lead_host_s = own_ops * ctx.host_op_s;
        t.lead_gpu_s = t.lead_gemm_s + share * rest_s;
    }
    if (h.expert_loop_calls_fwd > 0) bind_expert_loops(t, ctx, h, p);
}

void set_head_host_time(LayerTime& t, const PlanContext& ctx, const HostOps& h) {
    t.fwd.cpu_s = h.head_fwd * ctx.host_op_s;
    t.bwd.cpu_s = h.head_bwd * ctx.host_bwd_op_s;
}

void set_embedding_host_time(LayerTime& t, const PlanContext& ctx, const HostOps& h) {
    t.fwd.cpu_s = h.embed_fwd * ctx.host_op_s;
    t.bwd.cpu_s = h.embed_bwd * ctx.host_bwd_op_s;
    t.fwd.sync_s = 0;
    t.pre_sync_host_s = 0;
    if (h.forward_syncs > 0) {
        // The step's first operators meet an idle GPU, then the check's copy.
        t.fwd.sync_s = t.fwd.cpu_s + h.forward_syncs * ctx.sync_s;
        t.fwd.cpu_s = 0;
        t.pre_sync_host_s = std::max(0.0, h.embed_fwd - h.embed_fwd_after_check) * ctx.host_op_s;
    }
}

}  // namespace lostflops
