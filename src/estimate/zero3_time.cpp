// ZeRO-3 / FSDP traffic per layer and bucket (Rajbhandari et al. 2020, ZeRO
// sec. 7.2.2: each micro-batch gathers every parameter for forward and again
// for backward and reduce-scatters every gradient).
//
// Collectives per layer and micro-batch, each paying its latency at group size
// dp*cp (cost/collective_time.cpp, NCCL's ring latency (n-1) steps):
//   gathers per pass   = 1 per unit, or P/B per bucket of B elements, at most
//                        one per weight matrix (a bucket holds whole tensors)
//   forward:  gathers; backward: gathers (again after reshard) [+ gathers
//   once more with zero_regather_recompute and full recompute];
//   reduce-scatters = 1 per unit, or P/B_reduce.
// A group of c collectives moving M bytes costs c * time(M / c) = bandwidth
// term of M + c latencies.
//
// Exposure of one pass over L layers (per chunk, per micro-batch):
//   prefetch >= 1: the gather of layer i+1 runs during layer i's compute:
//     exposed = first gather + (L-1) max(0, comm - w c)
//   prefetch 0: every gather exposed: L g.
// In backward the reduce-scatter of a layer runs during the next layer's
// backward (overlap_grad_reduce); the last one is exposed. w = calibration
// dp_overlap, c = one layer's compute; hidden traffic costs overlap_slowdown.
// The rest of the stage (embedding, output layer: FSDP's root unit, kept
// gathered from forward to backward) is gathered at the start of forward and
// reduced at the end of backward, exposed.
//
// Engine defaults (parallel.zero_*, docs/job-file-parallel.md "ZeRO-3 engine"):
//   fsdp, megatron_lm, megatron_core (Megatron-Core custom FSDP / torch FSDP2):
//     one unit per transformer block (torchtitan parallelize_llama.py
//     apply_fsdp: fully_shard per block, then the root); reshard_after_forward
//     True, so backward gathers again (FSDP2 fully_shard default; FSDP1
//     FULL_SHARD); prefetch 1 (FSDP1 backward_prefetch=BACKWARD_PRE and
//     limit_all_gathers: at most two gathers in flight; FSDP2 implicit
//     prefetch); activation checkpointing wrapped inside the unit (torchtitan
//     applies it before fully_shard), so recompute runs after the unit's
//     gather: no extra gather. Checkpointing around an FSDP unit (Hugging Face
//     Trainer gradient_checkpointing on FSDP-wrapped decoder layers) re-enters
//     the unit's pre-forward unshard: set zero_regather_recompute: true.
//   deepspeed: deepspeed/runtime/zero/config.py (DeepSpeedZeroConfig)
//     stage3_prefetch_bucket_size 5e7 elements, reduce_bucket_size 5e8,
//     stage3_max_live_parameters 1e9; partitioned_param_coordinator.py
//     prefetches along the recorded trace, one coalesced all-gather per call,
//     until the live cap. The recompute's forward re-triggers the fetch hooks,
//     and the parameters it gathers stay for the backward (reused within
//     stage3_max_reuse_distance 1e9), so no extra gather by default.
#include "estimate/zero3_time.h"

#include <algorithm>

namespace lostflops {

namespace {

// DeepSpeed defaults, deepspeed/runtime/zero/config.py (DeepSpeedZeroConfig).
constexpr double kDsPrefetchBucket = 5e7;  // stage3_prefetch_bucket_size
constexpr double kDsReduceBucket = 5e8;    // reduce_bucket_size
constexpr double kDsMaxLive = 1e9;         // stage3_max_live_parameters

// Collectives for `params` elements in buckets of `bucket` (0: one), at most
// one per tensor.
double collectives(double params, double bucket, double tensors) {
    if (params <= 0) return 0;
    return bucket > 0 ? std::min(params / bucket, tensors) : 1.0;
}

// Time of `count` collectives moving `bytes` in all.
double bucketed_s(const PlanContext& ctx, Collective op, const GroupPlacement& g, double count, double bytes) {
    if (count <= 0 || g.size <= 1) return 0;
    return count * collective_time_s(ctx.comm, op, g, bytes / count);
}

double layer_total(const LayerWork& lw) { return lw.params + lw.expert_params; }

// Gather unit: a layer, or a bucket of at most a layer.
double gather_unit(const Zero3Engine& e, const LayerWork& lw) {
    return e.bucket_params > 0 ? std::min(e.bucket_params, layer_total(lw)) : layer_total(lw);
}

}  // namespace

Zero3Engine zero3_engine(const Job& job) {
    const ParallelPlan& p = job.plan;
    const bool ds = job.training.framework == Framework::deepspeed;
    Zero3Engine e;
    e.bucket_params = p.zero_bucket_params >= 0 ? static_cast<double>(p.zero_bucket_params) : ds ? kDsPrefetchBucket : 0;
    e.reduce_bucket_params = p.zero_reduce_bucket_params >= 0 ? static_cast<double>(p.zero_reduce_bucket_params)
                                                              : ds ? kDsReduceBucket : 0;
    e.prefetch = p.zero_prefetch >= 0 ? p.zero_prefetch : 1;
    e.regather_recompute = p.zero_regather_recompute >= 0 && p.zero_regather_recompute != 0;
    e.max_live_params = p.zero_max_live_params >= 0 ? static_cast<double>(p.zero_max_live_params) : ds ? kDsMaxLive : 0;
    return e;
}

Zero3Collectives zero3_layer_collectives(const Job& job, const PlanContext& ctx, const Zero3Engine& e,
                                         const LayerWork& lw) {
    // Weight matrices as workload/layer_work.cpp lays them out (QKV and output
    // projection, then fc1 (gate+up fused) and fc2, or the router and two per
    // local expert).
    const double dense_tensors = lw.dense_tensors;
    const double expert_tensors = lw.expert_tensors;
    const double gb = grad_bytes_per_param(job.plan, job.training.precision);
    const double wb = tensor_bytes(job.training.precision);  // a gathered weight
    Zero3Collectives c;
    const double ag_d = collectives(lw.params, e.bucket_params, dense_tensors);
    const double ag_e = collectives(lw.expert_params, e.bucket_params, expert_tensors);
    const double rs_d = collectives(lw.params, e.reduce_bucket_params, dense_tensors);
    const double rs_e = collectives(lw.expert_params, e.reduce_bucket_params, expert_tensors);
    if (ctx.dp_group.size > 1) {
        c.gathers += ag_d;
        c.reduce_scatters += rs_d;
    }
    if (ctx.edp_group.size > 1) {
        c.gathers += ag_e;
        c.reduce_scatters += rs_e;
    }
    c.gather_s = bucketed_s(ctx, Collective::all_gather, ctx.dp_group, ag_d, lw.params * wb) +
                 bucketed_s(ctx, Collective::all_gather, ctx.edp_group, ag_e, lw.expert_params * wb);
    c.reduce_scatter_s = bucketed_s(ctx, Collective::reduce_scatter, ctx.dp_group, rs_d, lw.params * gb) +
                         bucketed_s(ctx, Collective::reduce_scatter, ctx.edp_group, rs_e, lw.expert_params * gb);
    return c;
}

PassExposure zero3_pass_exposure(double layers, double hideable_s, double edge_s, double serial_s,
                                 double window_s) {
    PassExposure x;
    if (layers <= 0) return x;
    const double hidden_per_layer = std::min(hideable_s, std::max(0.0, window_s));
    x.hidden_s = (layers - 1) * hidden_per_layer;
    x.exposed_s = edge_s + layers * serial_s + (layers - 1) * (hideable_s - hidden_per_layer);
    return x;
}

Zero3Comm zero3_comm(const Job& job, const PlanContext& ctx, const LayerWork& lw, const StageParams& sp) {
    const ParallelPlan& p = job.plan;
    Zero3Comm z;
    z.engine = zero3_engine(job);
    const Zero3Engine& e = z.engine;
    z.layer = zero3_layer_collectives(job, ctx, e, lw);
    // Prefetch needs room for a second unit under the live cap.
    z.prefetch = e.prefetch >= 1 && (e.max_live_params <= 0 || e.max_live_params >= 2 * gather_unit(e, lw));
    // The rest of the stage (embedding, output layer): one unit, exposed.
    const double root = std::max(0.0, sp.params - sp.layers * lw.params);
    const double root_n = collectives(root, e.bucket_params, 2);
    const double root_rs_n = collectives(root, e.reduce_bucket_params, 2);
    z.root_s = bucketed_s(ctx, Collective::all_gather, ctx.dp_group, root_n, root * tensor_bytes(job.training.precision)) +
               bucketed_s(ctx, Collective::reduce_scatter, ctx.dp_group, root_rs_n,
                          root * grad_bytes_per_param(p, job.training.precision));
    return z;
}

double zero3_exposed_s(const Job& job, const Calibration& cal, const Zero3Comm& comm, const StageParams& sp,
                       double layer_fwd_s, double layer_bwd_s, double m) {
    const ParallelPlan& p = job.plan;
    const Zero3Engine& e = comm.engine;
    const Zero3Collectives& c = comm.layer;
    const bool prefetch = comm.prefetch;
    const bool overlap_rs = p.overlap_grad_reduce;
    // Share of this rank's layers that full recompute redoes (parallel.recompute_layers).
    double redone = 0;
    if (e.regather_recompute && p.recompute == Recompute::full && sp.layers > 0)
        redone = p.recompute_layers < 0 ? 1.0 : std::min(1.0, p.recompute_layers * p.vpp / sp.layers);
    const double layers = sp.layers / p.vpp;  // per chunk pass
    const double g_f = c.gather_s, g_b = c.gather_s * (1 + redone), r = c.reduce_scatter_s;
    const double w = cal.dp_overlap;
    const PassExposure fwd = prefetch ? zero3_pass_exposure(layers, g_f, g_f, 0, w * layer_fwd_s)
                                      : zero3_pass_exposure(layers, 0, 0, g_f, w * layer_fwd_s);
    const double hide_b = (prefetch ? g_b : 0) + (overlap_rs ? r : 0);
    const double serial_b = (prefetch ? 0 : g_b) + (overlap_rs ? 0 : r);
    const PassExposure bwd = zero3_pass_exposure(layers, hide_b, hide_b, serial_b, w * layer_bwd_s);
    const double per_mb = p.vpp * (fwd.exposed_s + bwd.exposed_s) + comm.root_s;
    const double hidden = p.vpp * (fwd.hidden_s + bwd.hidden_s);
    return m * (per_mb + hidden * cal.overlap_slowdown);
}

double zero3_exposed_s(const Job& job, const Calibration& cal, const PlanContext& ctx, const LayerWork& lw,
                       const StageParams& sp, double layer_fwd_s, double layer_bwd_s, double m) {
    return zero3_exposed_s(job, cal, zero3_comm(job, ctx, lw, sp), sp, layer_fwd_s, layer_bwd_s, m);
}

Zero3Live zero3_live(const Job& job, const LayerWork& lw, const StageParams& sp) {
    const Zero3Engine e = zero3_engine(job);
    const double stage = sp.params + sp.expert_params;
    const double unit = gather_unit(e, lw);
    Zero3Live z;
    if (job.training.framework == Framework::fsdp && job.plan.pp > 1) {
        // FSDP2 under pipeline parallelism: torchtitan shards the stage with
        // reshard_after_forward=False ("to avoid per-microbatch all-gathers",
        // parallelize_llama.py apply_fsdp), and torch.distributed.pipelining's
        // stage runs every backward but the last with
        // set_requires_gradient_sync(False) and set_reshard_after_backward(False)
        // (stage.py backward_maybe_with_nosync): the whole stage stays gathered
        // (16-bit) and its unsharded gradients accumulate across micro-batches,
        // upcast to the reduce dtype (FSDPParam.to_accumulated_grad_if_needed).
        z.params = stage;
        z.grad_params = stage;
        z.bytes = tensor_bytes(job.training.precision) * z.params +
                  grad_bytes_per_param(job.plan, job.training.precision) * z.grad_params;
        return z;
    }
    if (e.max_live_params > 0) {
        // DeepSpeed prefetches along the trace until the live cap.
        z.params = std::max(unit, std::min(e.max_live_params, stage));
        z.capped = e.max_live_params < stage;
    } else {
        z.params = std::min(stage, (1.0 + e.prefetch) * unit);
        // FSDP's root unit (embedding, output layer) is not resharded after
        // forward ("for the root, do not reshard after forward": FSDP2,
        // torch/distributed/_composable/fsdp/_fsdp_state.py _lazy_init), so
        // it stays gathered through the micro-batch.
        if (e.bucket_params <= 0) z.params = std::min(stage, z.params + std::max(0.0, sp.params - sp.layers * lw.params));
    }
    z.grad_params = e.reduce_bucket_params > 0 ? std::min(e.reduce_bucket_params, stage) : std::min(stage, layer_total(lw));
    z.bytes = tensor_bytes(job.training.precision) * z.params +
                  grad_bytes_per_param(job.plan, job.training.precision) * z.grad_params;
    return z;
}

}  // namespace lostflops
