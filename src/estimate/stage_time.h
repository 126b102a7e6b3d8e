// Time of one pipeline stage's work for one micro-batch, by cause. Internal.
#pragma once

#include <algorithm>

#include "cost/collective_time.h"
#include "cost/cp_attention.h"
#include "cost/device_time.h"
#include "cost/expert_dispatch.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {

// Seconds for one micro-batch, split the way Breakdown is. `cpu_s` is the
// host's time to issue the pass (not part of the total); `host_wait_s` the
// GPU's wait for it once bind_host() has compared the two. `sync_s`: the
// GPU's wait at the host's synchronisations, bound where they are
// (set_layer_host_time, set_embedding_host_time): the host cannot run ahead
// across them, so that part of the pass is bound on its own and its host
// time is not in cpu_s (Breakdown host_s holds both waits).
struct PassTime {
    double compute_s = 0, memory_bound_s = 0, recompute_s = 0, overhead_s = 0;
    double tp_comm_s = 0, cp_comm_s = 0, ep_comm_s = 0;
    // Of recompute_s (not added to it): its memory-bound kernels and its
    // kernels' launch overhead; the rest is GEMMs and attention. trace --job
    // puts each where a profiler measures it (Estimate::recompute_memory_bound_s).
    double recompute_memory_bound_s = 0, recompute_overhead_s = 0;
    double host_wait_s = 0;
    double sync_s = 0;
    double cpu_s = 0;
    double gpu_s() const {
        return compute_s + memory_bound_s + recompute_s + overhead_s + tp_comm_s + cp_comm_s + ep_comm_s;
    }
    double total_s() const { return gpu_s() + host_wait_s + sync_s; }
    // The GPU cannot run ahead of the CPU: a pass takes at least cpu_s. When
    // the host is the slower, the gaps between kernels are its (the GPU
    // waits for each launch), so the per-kernel overhead moves into the
    // host's wait; the total is the same.
    void bind_host() { bind_host_together(*this, nullptr); }
    // Forward and backward bound as one (no synchronisation between them):
    // the wait goes to `a`, the gaps of both move into it.
    static void bind_host_together(PassTime& a, PassTime* b) {
        const double cpu = a.cpu_s + (b ? b->cpu_s : 0.0);
        const double gpu = a.gpu_s() + (b ? b->gpu_s() : 0.0);
        const double gaps = a.overhead_s + (b ? b->overhead_s : 0.0);
        if (cpu > gpu) {
            a.host_wait_s = cpu - (gpu - gaps);
            a.overhead_s = 0;
            if (b) b->overhead_s = 0;
        } else {
            a.host_wait_s = 0;
        }
    }
    // Forward, then backward, of a micro-batch that starts after a
    // synchronisation (framework hf's packed-sequence check): an idle GPU and
    // a host with no lead. The host cannot bank a GPU-bound backward's slack
    // for a host-bound forward that comes before it: the two-machine flow
    // shop of the two passes in order (host_time.cpp stretch_s),
    //     end = max(h_f + h_b, max(h_f, g_f) + g_b),
    // where bind_host_together gives max(h_f + h_b, g_f + g_b). A pass the
    // host holds up has its kernel gaps inside the host's wait.
    // `lead_wait_s`: the forward's first layer's wait for a host with no
    // lead (LayerTime::lead_wait_s): its GPU ends no sooner than
    // g_f + lead_wait_s, the same flow shop with that stretch as the first
    // piece of the forward.
    // `tail`: the forward's last piece (the output layer and loss), bound
    // after the rest as the backward is after the forward: a GPU-bound head
    // cannot give back what host-bound layers before it lost,
    //     end_f = max(end_A + g_H, h_A + h_H),  end_A = max(g_A + lead, h_A),
    // where bound together they would give max(h_A + h_H, g_A + g_H); the
    // tail joins `f`.
    static void bind_host_in_order(PassTime& f, PassTime& b, double lead_wait_s = 0,
                                   const PassTime* tail = nullptr) {
        const double g_f = f.gpu_s();
        f.bind_host();
        if (f.gpu_s() + f.host_wait_s < g_f + lead_wait_s) f.host_wait_s = g_f + lead_wait_s - f.gpu_s();
        if (tail != nullptr) {
            PassTime t = *tail;
            bind_after(f, t);
            f += t;
        }
        bind_after(f, b);
    }
    // `p` issued after a bound `f`'s host work and run after its kernels:
    // the GPU ends `p` at max(f's end + p's GPU, the host's end through p);
    // the excess is p's wait, its kernel gaps inside it.
    static void bind_after(const PassTime& f, PassTime& p) {
        const double f_end = f.gpu_s() + f.host_wait_s;
        const double host_end = f.cpu_s + p.cpu_s;
        if (host_end > f_end + p.gpu_s()) {
            p.host_wait_s = host_end - f_end - (p.gpu_s() - p.overhead_s);
            p.overhead_s = 0;
        } else {
            p.host_wait_s = 0;
        }
    }
    // Inline: the estimate's per-stage loop runs these for every pipeline pass.
    PassTime& operator+=(const PassTime& o) {
        compute_s += o.compute_s;
        memory_bound_s += o.memory_bound_s;
        recompute_s += o.recompute_s;
        recompute_memory_bound_s += o.recompute_memory_bound_s;
        recompute_overhead_s += o.recompute_overhead_s;
        overhead_s += o.overhead_s;
        tp_comm_s += o.tp_comm_s;
        cp_comm_s += o.cp_comm_s;
        ep_comm_s += o.ep_comm_s;
        host_wait_s += o.host_wait_s;
        sync_s += o.sync_s;
        cpu_s += o.cpu_s;
        return *this;
    }
    PassTime scaled(double f) const {
        PassTime t = *this;
        t.compute_s *= f;
        t.memory_bound_s *= f;
        t.recompute_s *= f;
        t.recompute_memory_bound_s *= f;
        t.recompute_overhead_s *= f;
        t.overhead_s *= f;
        t.tp_comm_s *= f;
        t.cp_comm_s *= f;
        t.ep_comm_s *= f;
        t.host_wait_s *= f;
        t.sync_s *= f;
        t.cpu_s *= f;
        return t;
    }
};

struct LayerTime {
    PassTime fwd;
    PassTime bwd;  // includes recomputation
    // Of bwd, the weight-gradient work (W of the zero-bubble and DualPipe
    // schedules; lostflops/pipeline_schedules.h). The rule (stage_time.cpp):
    // the weight-gradient GEMMs, as many FLOPs as the forward GEMMs (half of
    // the backward GEMMs); the attention core, memory-bound kernels,
    // recompute and communication stay with B, the input gradient. Kept out
    // of PassTime: the 1F1B family's hot paths never add it.
    double wgrad_s = 0;
    // GPU time of each forward call of torch._grouped_mm's fallback loop
    // (GemmShape::fp32_loop: the experts' gate_up, then down); 0 without.
    std::array<double, 2> expert_loop_s{};
    // The forward's first stretch after a synchronisation (framework hf,
    // HostOps::lead_fwd), in two pieces: FSDP2's pre-forward hook, then the
    // layer's own operators before its mixer's core. GPU seconds of the
    // GEMMs before the core and of FSDP2's unshard (layer_time); the pieces'
    // host and GPU seconds (set_layer_host_time: the hook's GPU work is the
    // unshard; the other memory-bound kernels and launches are the forward's,
    // spread evenly over its operators). 0 without.
    double lead_gemm_s = 0, unshard_s = 0;
    double hook_host_s = 0, hook_gpu_s = 0, lead_host_s = 0, lead_gpu_s = 0;
    // The GPU's wait when a forward starts on this layer with no lead: the
    // flow shop's largest deficit over the two pieces (host_time.cpp),
    // max(0, h1 - g1, h1 + h2 - g1 - g2).
    // The embedding's (set_embedding_host_time): of its wait at the check,
    // the host time of its operators before the copy, which a micro-batch
    // after the step's first may issue while the GPU runs the backward
    // before it (stage_pass.cpp finish_pass).
    double pre_sync_host_s = 0;
    double lead_wait_s() const {
        const double hook = hook_host_s - hook_gpu_s;
        const double both = hook + lead_host_s - lead_gpu_s;
        return std::max({0.0, hook, both});
    }
};

struct PlanContext {
    DeviceModel dev;
    DeviceModel head_dev;       // the output layer's GEMMs: bf16 even in fp8 training (stage_time.cpp)
    CommModel comm;
    GroupPlacement tp_group, cp_group, dp_group, edp_group, pp_link, embedding_group;
    CpPlacement cp_at;          // the CP group and the ring's slowest hop (cp > 1)
    CpAttentionRates cp_rates;  // the attention kernel on CP's blocks (cp > 1)
    double cp_slowdown = 0;     // hidden CP traffic slows the attention it overlaps (overlap_slowdown)
    ExpertGroups experts;  // the expert layers' folded groups (edp_group = experts.edp)
    bool fp8 = false;      // DeepEP dispatches in fp8 (precision fp8 and parallel.moe_fp8_dispatch)
    bool moe_layer_overlap = false;   // moe_a2a_overlap, and not a DualPipe schedule (which overlaps by its passes)
    // When the all-to-all is overlapped (layer or DualPipe): the compute lost
    // per second of hidden all-to-all (the dispatcher's SMs over the GPU's
    // for DeepEP, calibration overlap_slowdown for NCCL's); else 0.
    double moe_overlap_slowdown = 0;
    // Overlapped, the dispatcher's collectives take this times their isolated
    // time (1 / overlapped_dispatch_efficiency, cost/expert_dispatch.h); else 1.
    double moe_overlap_comm = 1;
    // Share of a rank's chunk passes that have a partner to overlap with
    // (moe_layer_overlap): Megatron-Core pairs a forward with a backward only
    // in the steady state; the first rank's warm-up forwards and as many
    // cool-down backwards run alone: 1 - warm-up / (m * vpp).
    double moe_overlap_paired = 1;
    double tp_exposed = 1;  // share of TP traffic that costs step time
    double host_op_s = 0;      // CPU per forward operator (calibration host_op_us)
    double host_bwd_op_s = 0;  // CPU per autograd node (calibration host_bwd_op_us)
    // The training loop's host work once per step outside the passes
    // (framework hf: torch.optim's Python over the parameter tensors), spread
    // over the step's micro-batches as host time of their backward.
    double host_step_s = 0;
    // Framework hf: the host's work per backward call outside the nodes
    // (calibration hf_backward_call_us), the GPU's idle after each
    // synchronisation (hf_sync_us) and the host's time per group of
    // _grouped_mm's fallback loop (hf_expert_loop_us); 0 otherwise.
    double host_backward_call_s = 0;
    double sync_s = 0;
    double expert_loop_group_s = 0;
};

PlanContext make_plan_context(const Job& job, const Calibration& cal);
// The same into `ctx`, a default-initialised context (a PassSetup's, built in place).
void set_plan_context(const Job& job, const Calibration& cal, PlanContext& ctx);
LayerTime layer_time(const PlanContext& ctx, const LayerWork& w, const HostOps& h, const ParallelPlan& p);
// One forward GEMM of a layer (all `count` of them), as layer_time prices it.
double layer_gemm_s(const DeviceModel& d, const GemmShape& g, const ParallelPlan& p);

// The expert all-to-all overlapped with another micro-batch's compute
// (moe_a2a_overlap: Megatron-Core --overlap-moe-expert-parallel-comm, whose
// schedule_layer_1f1b runs one micro-batch's layer forward with another's
// backward, attention / MLP on the compute stream, dispatch / combine on the
// communication stream; the same pairing as DeepSeek-V3's DualPipe, report
// sec. 3.2.1 fig. 4). Each collective hides only under the compute it is
// paired with: dispatch(F) under MLP(B), combine(F) under attention(B),
// combine(B) under attention(F), dispatch(B) under MLP(F); what exceeds its
// partner stays exposed, and the hidden part slows the compute it overlaps by
// `slowdown` (PlanContext::moe_overlap_slowdown: the collective's SMs). The
// collectives given are their overlapped times (PlanContext::moe_overlap_comm).
// Sides: seconds of one layer's attention and MLP (router, experts, shared
// experts) in forward and backward, the pass's memory-bound kernels and
// launches spread over the two in proportion to their compute.
struct MoeOverlapSides {
    double attn_f = 0, mlp_f = 0, attn_b = 0, mlp_b = 0;
};
MoeOverlapSides moe_overlap_sides(const LayerTime& t, double attn_f, double mlp_f, double attn_b, double mlp_b);
// Exposed seconds of the forward (f) and backward (b) collectives, including
// the slowdown of the compute they hide under.
struct MoeOverlapExposed {
    double fwd_s = 0, bwd_s = 0;
};
MoeOverlapExposed moe_a2a_exposed(const ExpertDispatchTime& f, const ExpertDispatchTime& b, const MoeOverlapSides& s,
                                  double slowdown);
// Output layer + loss (last stage) and embedding (first stage).
LayerTime head_time(const PlanContext& ctx, const HeadWork& w, const HostOps& h, const ParallelPlan& p);
LayerTime embedding_time(const PlanContext& ctx, const HeadWork& w, const HostOps& h);
// The host's share of each (cpu_s), which the functions above set from `h`:
// set again for other host operator counts, the GPU times left as they are.
void set_layer_host_time(LayerTime& t, const PlanContext& ctx, const HostOps& h, const ParallelPlan& p);
void set_head_host_time(LayerTime& t, const PlanContext& ctx, const HostOps& h);
void set_embedding_host_time(LayerTime& t, const PlanContext& ctx, const HostOps& h);

}  // namespace lostflops
