// Per-layer time on the device and the topology. Each GEMM costs its roofline
// time with tile/wave quantisation (cost/device_time.cpp); backward runs the
// data- and weight-gradient GEMMs (2x forward FLOPs, Narayanan et al. 2021);
// memory-bound kernels move twice their forward bytes in backward; every kernel
// pays the launch overhead. Tensor-parallel collectives are exposed unless
// tp_comm_overlap; full recompute repeats the forward (with its collectives)
// inside backward, selective recompute repeats the attention core and
// the modules of parallel.recompute_modules (workload/layer_work.cpp)
// (torchtitan's per-op policy under framework fsdp: the unsaved GEMMs and the
// forward's memory-bound kernels, workload/op_checkpoint.cpp)
// (Korthikanti et al. 2022). The weight-gradient share of backward (LayerTime
// wgrad_s, the W pass of zero-bubble schedules, Qi et al. 2024 sec. 2): the
// weight-gradient GEMMs, dW = X^T dY, as many FLOPs as the forward GEMM (so
// half the backward GEMM time); the attention core's backward has no weights
// and stays in B with the memory-bound kernels, recompute and communication.
// The output layer's W is its logits GEMM; the embedding's whole backward is
// its weight gradient (its input is token ids).
// Expert all-to-all overlap (moe_a2a_overlap): each collective pairs with
// one side of another micro-batch's pass, as stage_time.h states (Megatron-LM
// design doc MR3470 "EP A2A overlapping", fine_grained_callables.py /
// combined_1f1b.py; DeepSeek-V3 report fig. 4), in the steady state only:
// the warm-up forwards and cool-down backwards have no partner
// (PlanContext::moe_overlap_paired).
#include "estimate/stage_time.h"

#include "cost/grouped_gemm.h"
#include "estimate/inflight.h"
#include "lostflops/error.h"
#include "lostflops/fp8_recipe.h"
#include "lostflops/pipeline_schedules.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace lostflops {

namespace {

// The eager stack's slower elementwise paths (workload/layer_work.h
// EagerClassBytes) at their device rates, beyond memory_time_s of their bytes.
double eager_extra_s(const DeviceModel& d, const EagerClassBytes& b) {
    return eager_class_extra_s(d, b.upcast, b.broadcast, b.strided);
}

// The attention kernel's rate on each block context parallelism calls it on
// (cost/cp_attention.h CpAttentionRates).
void set_cp_context(PlanContext& ctx, const Job& job, const Calibration& cal) {
    ctx.cp_at = cp_placement(ctx.cp_group);
    ctx.cp_slowdown = cal.overlap_slowdown;
    const DeviceModel& d = ctx.dev;
    CpAttentionRates& r = ctx.cp_rates;
    r.whole_fwd = r.diag_fwd = d.attention_peak_flops * d.attention_fwd;
    r.whole_bwd = r.diag_bwd = d.attention_peak_flops * d.attention_bwd;
    if (job.plan.cp_comm_type != CpCommType::p2p) return;
    DeviceUse off = device_use(job);
    off.causal = false;
    off.seq = off.seq / std::sqrt(2.0);  // s/cp queries x s/(2cp) keys, or the reverse
    const auto eff = attention_efficiency_at(job.cluster.gpu, cal, d, off);
    r.off_fwd = d.attention_peak_flops * eff[0];
    r.off_bwd = d.attention_peak_flops * eff[1];
}

// An fp8 recipe whose GEMM format the device family has no measurement of
// is the job's error (training.fp8_recipe), not the profile's; the recipes
// the family can price are named.
void require_fp8_measured(const Job& job, const Calibration& cal, const DeviceUse& use) {
    if (job.training.precision != Precision::fp8) return;
    const DeviceFamily& fam = cal.device(job.cluster.gpu.arch);
    if (fam.gemm_max[static_cast<int>(use.fp8)] > 0) return;
    std::string others;
    for (const Fp8RecipeRow& r : kFp8Recipes)
        if (fam.gemm_max[static_cast<int>(r.gemm)] > 0) others += std::string(others.empty() ? "" : ", ") + r.name;
    const std::string profile = cal.source == "<builtin>" ? std::string("the default profile") : cal.source;
    if (others.empty())
        throw InputError(job.source, "training.precision",
                         "fp8: no measurement of fp8 GEMMs in any format on the " + fam.name + " family (" +
                             profile + "'s devices." + fam.name +
                             ".gemm_max, data/calibration/gemm.csv); choose another precision");
    throw InputError(job.source, "training.fp8_recipe",
                     std::string(to_string(job.training.fp8_recipe)) + ": no measurement of " +
                         to_string(use.fp8) + " GEMMs on the " + fam.name + " family (" + profile +
                         "'s devices." + fam.name + ".gemm_max." + to_string(use.fp8) +
                         ", data/calibration/gemm.csv); choose a recipe it prices (" + others + ")");
}

}  // namespace

PlanContext make_plan_context(const Job& job, const Calibration& cal) {
    PlanContext ctx;
    set_plan_context(job, cal, ctx);
    return ctx;
}

void set_plan_context(const Job& job, const Calibration& cal, PlanContext& ctx) {
    const ParallelPlan& p = job.plan;
    // A job on one node (or part of one) has every group on NVLink, whatever
    // its strides: nothing can straddle a node boundary that is not there.
    const Topology topo = topology_of(job.cluster);
    // The attention curves are read at the job's own shape: its sequence over
    // context parallelism, its head dimension, its framework's kernel.
    const DeviceUse use = device_use(job);
    require_fp8_measured(job, cal, use);
    ctx.dev = make_device_model(job.cluster.gpu, job.training.precision, cal, use);
    // fp8 training keeps the output layer in bf16: Megatron-Core builds it as
    // tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, so
    // fp8_autocast leaves it alone (NVIDIA/Megatron-LM
    // megatron/core/models/gpt/gpt_model.py); torchtitan converts every
    // nn.Linear to Float8Linear but the output, `module_filter_fn=lambda mod,
    // fqn: fqn != "output"` (pytorch/torchtitan torchtitan/float8.py, 2024).
    ctx.head_dev = job.training.precision == Precision::fp8 ? bf16_gemm_model(ctx.dev, job.cluster.gpu, cal) : ctx.dev;
    ctx.comm = make_comm_model(job.cluster, cal);
    ctx.tp_group = place_group(topo, p.tp, 1);
    ctx.cp_group = place_group(topo, p.cp, p.tp);
    if (p.cp > 1) set_cp_context(ctx, job, cal);
    // Dense gradients are reduced over data and context parallel ranks; the
    // experts' over their expert-data-parallel ranks (cost/expert_dispatch.h).
    ctx.dp_group = place_group(topo, p.dp * p.cp, p.tp);
    ctx.experts = place_expert_groups(p, topo);
    ctx.edp_group = ctx.experts.edp;
    // FP8 copies only where the framework quantizes before the dispatch (ParallelPlan::moe_fp8_dispatch).
    ctx.fp8 = job.training.precision == Precision::fp8 && p.moe_fp8_dispatch;
    // DualPipe and DualPipeV overlap the all-to-all by their F&B passes
    // (estimate/pipeline_phase.cpp): the layer-level overlap would count it twice.
    ctx.moe_layer_overlap = p.moe_a2a_overlap && standard_mapping(p);
    if (ctx.moe_layer_overlap) {
        // Megatron-Core's combined 1F1B (pipeline_parallel/schedules.py with
        // overlap_moe_expert_parallel_comm) merges a forward with a backward
        // in the steady state only; warm-up and cool-down passes run alone.
        // Rank 0 has the most (estimate/inflight.cpp) and sets the step.
        const double passes = static_cast<double>(p.micro_batches(job.training)) * p.vpp;
        const double alone = static_cast<double>(inflight_passes(job, 0).warmup);
        ctx.moe_overlap_paired = passes > 0 ? std::clamp((passes - alone) / passes, 0.0, 1.0) : 0.0;
    }
    // The hidden all-to-all slows the compute it overlaps, whether a layer
    // or the schedule overlaps it: DeepEP's kernels hold their SMs for as long
    // as they run, the compute beside them has the rest (DeepSeek-V3 sec.
    // 3.2.2: 20 of the H800's 132 SMs; cost/expert_dispatch.h
    // dispatcher_sms), a hidden second costs sms / SMs; NCCL's all-to-all
    // calibration overlap_slowdown. Overlapped, DeepEP runs slower than
    // alone (cost/expert_dispatch.h overlapped_dispatch_efficiency).
    const bool a2a_overlapped = ctx.moe_layer_overlap || !standard_mapping(p);
    const int a2a_sms = dispatcher_sms(p.moe_dispatcher);
    ctx.moe_overlap_slowdown = !a2a_overlapped ? 0.0
                               : a2a_sms > 0 && job.cluster.gpu.sm_count > a2a_sms
                                   ? static_cast<double>(a2a_sms) / job.cluster.gpu.sm_count
                                   : cal.overlap_slowdown;
    ctx.moe_overlap_comm = a2a_overlapped ? 1.0 / overlapped_dispatch_efficiency(p.moe_dispatcher) : 1.0;
    // Consecutive pipeline stages are tp*cp*dp ranks apart; the pipeline as a
    // whole decides whether some boundary crosses nodes.
    const int stage_stride = p.tp * p.cp * p.dp;
    ctx.pp_link = place_group(topo, p.pp, stage_stride);
    // Tied embeddings: the first and last stage all-reduce their copies.
    ctx.embedding_group = place_group(topo, 2, std::max(1, (p.pp - 1) * stage_stride));
    // Share of TP traffic on the critical path: what is not overlapped, plus
    // the compute the overlapped part slows (NCCL kernels take SMs and HBM
    // bandwidth from the GEMMs they overlap; calibration overlap_slowdown).
    const double hidden = p.tp_comm_overlap ? cal.tp_overlap : 0.0;
    ctx.tp_exposed = 1.0 - hidden + hidden * cal.overlap_slowdown;
    // XLA (TPU, systolic device model) runs the step as one compiled
    // program: the host issues no operator per layer.
    const bool compiled = ctx.dev.mxu_dim > 0;
    // A Hugging Face model: transformers' operators at their own costs, or
    // under torch.compile Inductor's launches (workload/host_ops_hf.cpp).
    const bool hf = job.training.framework == Framework::hf;
    double op_us = hf ? cal.hf_host_op_us : cal.host_op_us;
    double bwd_op_us = hf ? cal.hf_host_bwd_op_us : cal.host_bwd_op_us;
    if (hf && job.training.compile) op_us = bwd_op_us = cal.compiled_launch_us;
    // CUDA graphs: one graph launch where each kernel was launched, its cost
    // per kernel in the graph (calibration.h cuda_graph_node_us).
    if (hf && job.training.cuda_graphs) op_us = bwd_op_us = cal.cuda_graph_node_us;
    ctx.host_op_s = compiled ? 0.0 : op_us * 1e-6;
    ctx.host_bwd_op_s = compiled ? 0.0 : bwd_op_us * 1e-6;
    // torch.optim's Python over the parameter tensors, then zero_grad's.
    ctx.host_step_s = hf && !compiled ? hf_param_tensors(job.model) *
                                            (cal.hf_optimizer_tensor_us + cal.hf_zero_grad_tensor_us) * 1e-6
                                      : 0.0;
    // The autograd engine's start and finish around each backward call, and
    // the synchronisations of transformers' and PyTorch's eager code
    // (estimate/host_time.cpp).
    ctx.host_backward_call_s = hf && !compiled ? cal.hf_backward_call_us * 1e-6 : 0.0;
    ctx.sync_s = hf && !compiled ? cal.hf_sync_us * 1e-6 : 0.0;
    ctx.expert_loop_group_s = hf && !compiled ? cal.hf_expert_loop_us * 1e-6 : 0.0;
}

namespace {

double tp_comm_fwd_s(const PlanContext& ctx, const LayerWork& w) {
    if (w.tp_collectives_fwd == 0) return 0;
    if (w.tp_sequence_parallel) {
        const double ag = collective_time_s(ctx.comm, Collective::all_gather, ctx.tp_group, w.tp_bytes);
        const double rs = collective_time_s(ctx.comm, Collective::reduce_scatter, ctx.tp_group, w.tp_bytes);
        return (ag + rs) * w.tp_collectives_fwd / 2;
    }
    return w.tp_collectives_fwd * collective_time_s(ctx.comm, Collective::all_reduce, ctx.tp_group, w.tp_bytes);
}

}  // namespace

MoeOverlapSides moe_overlap_sides(const LayerTime& t, double attn_f, double mlp_f, double attn_b, double mlp_b) {
    // The memory-bound kernels and launches of a pass run on the compute
    // stream too: spread over the two sides in proportion to their compute.
    const double cf = attn_f + mlp_f, cb = attn_b + mlp_b;
    const double kf = cf > 0 ? (cf + t.fwd.memory_bound_s + t.fwd.overhead_s) / cf : 1.0;
    const double kb = cb > 0 ? (cb + t.bwd.memory_bound_s + t.bwd.overhead_s) / cb : 1.0;
    return {attn_f * kf, mlp_f * kf, attn_b * kb, mlp_b * kb};
}

MoeOverlapExposed moe_a2a_exposed(const ExpertDispatchTime& f, const ExpertDispatchTime& b, const MoeOverlapSides& s,
                                  double slowdown) {
    // Forward collectives of micro-batch i+1 under micro-batch i's backward
    // compute, and backward collectives under the forward's:
    //   dispatch(F) under MLP(B), combine(F) under attention(B),
    //   combine(B) (travels as a dispatch: b.dispatch_s) under attention(F),
    //   dispatch(B) (travels as a combine: b.combine_s) under MLP(F).
    const auto part = [slowdown](double comm, double compute) {
        const double hidden = std::min(comm, compute);
        return comm - hidden + slowdown * hidden;
    };
    MoeOverlapExposed e;
    e.fwd_s = part(f.dispatch_s, s.mlp_b) + part(f.combine_s, s.attn_b);
    e.bwd_s = part(b.dispatch_s, s.attn_f) + part(b.combine_s, s.mlp_f);
    return e;
}

double layer_gemm_s(const DeviceModel& d, const GemmShape& g, const ParallelPlan& p) {
    // Grouped expert GEMMs: the busiest expert rank (moe_load_factor: the
    // imbalance, capped or padded by an expert capacity) sets the pace.
    return g.fp32_loop && d.fp32_gemm_flops > 0
               ? moe_load_factor(p) * g.count * 2 * g.m * g.n * g.k / d.fp32_gemm_flops
           : g.grouped ? moe_load_factor(p) * grouped_gemm_time_s(d, g.m, g.n, g.k, g.count)
                       : g.count * gemm_time_s(d, g.m, g.n, g.k);
}

LayerTime layer_time(const PlanContext& ctx, const LayerWork& w, const HostOps& h, const ParallelPlan& p) {
    const DeviceModel& d = ctx.dev;
    double gemm_fwd = 0, moe_gemm_fwd = 0, redo_gemm_fwd = 0, lead_gemm = 0;
    std::array<double, 2> loop_s{};  // LayerTime::expert_loop_s: gate_up, then down
    size_t loops = 0;
    for (int i = 0; i < w.gemm_count; ++i) {
        const GemmShape& g = w.gemms[i];
        const double gemm_s = layer_gemm_s(d, g, p);
        gemm_fwd += gemm_s;
        if (g.fp32_loop) loop_s[std::min<size_t>(loops++, loop_s.size() - 1)] += gemm_s;
        if (w.moe_first_gemm >= 0 && i >= w.moe_first_gemm) moe_gemm_fwd += gemm_s;
        if ((w.recompute_gemms >> i) & 1u) redo_gemm_fwd += gemm_s;
        if (i < w.lead_gemms) lead_gemm += gemm_s;
    }
    double attn_fwd = 0, attn_bwd = 0;
    if (w.unfused) {
        attn_fwd = gemm_time_s(d, w.scores.m, w.scores.n, w.scores.k) +
                   gemm_time_s(d, w.values.m, w.values.n, w.values.k);
        attn_bwd = 2 * attn_fwd;
    } else {
        attn_fwd = flash_attention_fwd_s(d, w.attention_flops_fwd, w.attention_masked_flops_fwd);
        attn_bwd = flash_attention_bwd_s(d, w.attention_flops_fwd, w.attention_masked_flops_fwd);
    }
    const double exposed = ctx.tp_exposed;
    LayerTime t;
    t.fwd.compute_s = gemm_fwd + attn_fwd;
    t.fwd.memory_bound_s = memory_time_s(d, w.mem_bytes_fwd) + eager_extra_s(d, w.eager_fwd);
    t.fwd.overhead_s = w.kernels_fwd * d.kernel_overhead_s;
    t.fwd.tp_comm_s = tp_comm_fwd_s(ctx, w) * exposed;
    if (w.cp_bytes_fwd > 0) {
        // Context-parallel attention: its kernels on the split blocks and the
        // exchange of each variant (cost/cp_attention.h); unfused attention
        // keeps its GEMM times.
        const CpAttentionWork cw{p.cp_comm_type, p.cp, w.attention_flops_fwd, w.cp_bytes_fwd / (p.cp - 1),
                                 w.cp_qkv_bytes, w.cp_out_bytes};
        const CpAttentionTime ct = cp_attention_time(cw, ctx.cp_rates, ctx.comm, ctx.cp_at, ctx.cp_slowdown);
        if (!w.unfused) {
            t.fwd.compute_s += ct.fwd_s - attn_fwd;
            attn_fwd = ct.fwd_s;
            attn_bwd = ct.bwd_s;
        }
        t.fwd.cp_comm_s = ct.comm_fwd_s;
        t.bwd.cp_comm_s = ct.comm_bwd_s;
        t.fwd.overhead_s += ct.extra_kernels_fwd * d.kernel_overhead_s;
        t.bwd.overhead_s += ct.extra_kernels_bwd * d.kernel_overhead_s;
        t.fwd.memory_bound_s += memory_time_s(d, ct.extra_bytes_fwd);
        t.bwd.memory_bound_s += memory_time_s(d, ct.extra_bytes_bwd);
    }
    t.bwd.compute_s = 2 * gemm_fwd + attn_bwd;
    t.wgrad_s = gemm_fwd;
    t.bwd.memory_bound_s += memory_time_s(d, w.mem_bytes_bwd) + eager_extra_s(d, w.eager_bwd);
    t.bwd.overhead_s += w.kernels_bwd * d.kernel_overhead_s;
    t.bwd.tp_comm_s = t.fwd.tp_comm_s;
    if (w.moe_dispatches_fwd > 0) {
        const ExpertDispatchTime f = expert_dispatch_time(ctx.comm, ctx.experts, p, w.moe_tokens, w.moe_top_k,
                                                          w.moe_token_bytes, ctx.fp8, w.moe_etp_gather);
        // The backward's dispatch-direction collective in fp8 too (expert_dispatch.h).
        const ExpertDispatchTime b = expert_dispatch_time(ctx.comm, ctx.experts, p, w.moe_tokens, w.moe_top_k,
                                                          w.moe_token_bytes, ctx.fp8, w.moe_etp_gather);
        t.fwd.ep_comm_s = f.total_s();
        t.bwd.ep_comm_s = b.total_s();
        const double slow = ctx.moe_overlap_comm;
        if (!ctx.moe_layer_overlap && slow != 1.0) {
            // DualPipe's F&B passes overlap every pass's all-to-all
            // (estimate/pipeline_phase.cpp); their lone warm-up and cool-down
            // passes are counted at the overlapped time too.
            t.fwd.ep_comm_s *= slow;
            t.bwd.ep_comm_s *= slow;
        }
        if (ctx.moe_layer_overlap) {
            const MoeOverlapSides sides = moe_overlap_sides(t, gemm_fwd - moe_gemm_fwd + attn_fwd, moe_gemm_fwd,
                                                            2 * (gemm_fwd - moe_gemm_fwd) + attn_bwd,
                                                            2 * moe_gemm_fwd);
            const ExpertDispatchTime fo{f.dispatch_s * slow, f.combine_s * slow};
            const ExpertDispatchTime bo{b.dispatch_s * slow, b.combine_s * slow};
            const MoeOverlapExposed e = moe_a2a_exposed(fo, bo, sides, ctx.moe_overlap_slowdown);
            const double paired = ctx.moe_overlap_paired;
            t.fwd.ep_comm_s = paired * e.fwd_s + (1 - paired) * t.fwd.ep_comm_s;
            t.bwd.ep_comm_s = paired * e.bwd_s + (1 - paired) * t.bwd.ep_comm_s;
        }
    }
    switch (p.recompute) {
        case Recompute::none: break;
        case Recompute::selective:  // the attention core (a scan's state is kept: LayerWork::selective_core)
            if (w.op_checkpoint) {  // torchtitan's per-op policy (workload/op_checkpoint.cpp)
                t.bwd.recompute_s = w.op_recompute_gemm_share * gemm_fwd + t.fwd.memory_bound_s + t.fwd.overhead_s;
                t.bwd.recompute_memory_bound_s = t.fwd.memory_bound_s;
                t.bwd.recompute_overhead_s = t.fwd.overhead_s;
                break;
            }
            if (w.selective_core && p.recomputes(RecomputeModule::core_attn)) {
                t.bwd.recompute_memory_bound_s = memory_time_s(d, w.mem_bytes_attention_fwd);
                t.bwd.recompute_s = attn_fwd + t.bwd.recompute_memory_bound_s;
            }
            if (w.recompute_kernels > 0) {  // the other modules (LayerWork::recompute_gemms)
                const double mem_s = memory_time_s(d, w.recompute_mem_bytes);
                const double launch_s = w.recompute_kernels * d.kernel_overhead_s;
                t.bwd.recompute_s += redo_gemm_fwd + mem_s + launch_s;
                t.bwd.recompute_memory_bound_s += mem_s;
                t.bwd.recompute_overhead_s += launch_s;
                t.bwd.tp_comm_s += w.recompute_tp_share * t.fwd.tp_comm_s;
                if (w.recompute_dispatch) t.bwd.ep_comm_s += t.fwd.ep_comm_s;
            }
            break;
        case Recompute::full: {
            // The forward again, less FSDP2's unshard (LayerWork::fsdp_unshard_bytes_fwd).
            t.bwd.recompute_memory_bound_s = t.fwd.memory_bound_s - memory_time_s(d, w.fsdp_unshard_bytes_fwd);
            t.bwd.recompute_overhead_s = t.fwd.overhead_s - w.fsdp_unshard_kernels_fwd * d.kernel_overhead_s;
            t.bwd.recompute_s = t.fwd.compute_s + t.bwd.recompute_memory_bound_s + t.bwd.recompute_overhead_s;
            t.bwd.tp_comm_s += t.fwd.tp_comm_s;
            t.bwd.ep_comm_s += t.fwd.ep_comm_s;
            t.bwd.cp_comm_s += t.fwd.cp_comm_s;
            break;
        }
    }
    t.expert_loop_s = loop_s;
    t.lead_gemm_s = lead_gemm;
    t.unshard_s = memory_time_s(d, w.fsdp_unshard_bytes_fwd) + w.fsdp_unshard_kernels_fwd * d.kernel_overhead_s;
    set_layer_host_time(t, ctx, h, p);
    return t;
}

LayerTime head_time(const PlanContext& ctx, const HeadWork& w, const HostOps& h, const ParallelPlan& p) {
    const DeviceModel& d = ctx.dev;
    LayerTime t;
    set_head_host_time(t, ctx, h);
    double gemm = gemm_time_s(ctx.head_dev, w.logits.m, w.logits.n, w.logits.k);
    if (w.projection.m > 0) gemm += gemm_time_s(ctx.head_dev, w.projection.m, w.projection.n, w.projection.k);
    t.fwd.compute_s = gemm;
    t.fwd.memory_bound_s = memory_time_s(d, w.loss_bytes_fwd) + eager_extra_s(d, w.loss_eager_fwd);
    t.fwd.overhead_s = 6 * d.kernel_overhead_s;
    t.bwd.compute_s = 2 * gemm;
    t.wgrad_s = gemm;
    t.bwd.memory_bound_s = memory_time_s(d, w.loss_bytes_bwd) + eager_extra_s(d, w.loss_eager_bwd);
    t.bwd.overhead_s = 4 * d.kernel_overhead_s;
    if (p.tp > 1) {
        // Gather the sequence-parallel hidden state (or all-reduce the input
        // gradient without SP) plus three small all-reduces of the loss.
        const Collective op = p.sequence_parallel ? Collective::all_gather : Collective::all_reduce;
        t.fwd.tp_comm_s = (collective_time_s(ctx.comm, op, ctx.tp_group, p.sequence_parallel ? w.tp_bytes : 0) +
                           3 * collective_time_s(ctx.comm, Collective::all_reduce, ctx.tp_group, w.logits.m * 4)) *
                          ctx.tp_exposed;
        t.bwd.tp_comm_s = collective_time_s(ctx.comm, p.sequence_parallel ? Collective::reduce_scatter
                                                                           : Collective::all_reduce,
                                            ctx.tp_group, w.tp_bytes) * ctx.tp_exposed;
    }
    return t;
}

LayerTime embedding_time(const PlanContext& ctx, const HeadWork& w, const HostOps& h) {
    LayerTime t;
    set_embedding_host_time(t, ctx, h);
    t.fwd.memory_bound_s = memory_time_s(ctx.dev, w.embed_bytes_fwd);
    t.fwd.overhead_s = 2 * ctx.dev.kernel_overhead_s;
    // OPT's project_in (HeadWork::projection): forward, input and weight gradients.
    const double project_in = w.projection.m > 0
                                  ? gemm_time_s(ctx.head_dev, w.projection.m, w.projection.k, w.projection.n) : 0.0;
    t.fwd.compute_s = project_in;
    t.bwd.compute_s = 2 * project_in;
    t.bwd.memory_bound_s = memory_time_s(ctx.dev, w.embed_bytes_bwd);
    t.bwd.overhead_s = 2 * ctx.dev.kernel_overhead_s;
    t.wgrad_s = t.bwd.memory_bound_s + t.bwd.overhead_s + project_in;
    return t;
}

}  // namespace lostflops
