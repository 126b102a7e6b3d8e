// Traffic and time of an MoE layer's token dispatch and combine on the
// topology (docs/job-file-parallel.md "Expert parallelism"). Per rank, per micro-batch.
//
// Placement (MoE parallel folding, Liu et al. 2025; Megatron-Core
// parallel_state.py, expert RankGenerator tp=etp, ep, dp=edp, order
// tp-ep-dp-pp): the expert layers lay a pipeline stage's tp*cp*dp ranks out
// as etp x ep x edp, etp fastest. The EP group is ep ranks etp apart: inside
// one NVLink domain when etp*ep <= GPUs per node, across nodes otherwise.
#pragma once

#include "cost/collective_time.h"
#include "lostflops/spec.h"

namespace lostflops {

struct ExpertGroups {
    GroupPlacement etp;   // etp consecutive ranks
    GroupPlacement ep;    // ep ranks, etp apart
    GroupPlacement fold;  // etp*ep consecutive ranks (the all-gather dispatcher's group)
    GroupPlacement edp;   // expert data parallel: edp ranks etp*ep apart (expert gradients)
};
ExpertGroups place_expert_groups(const ParallelPlan& p, const Topology& t);
// On a switched cluster of gpus_per_node GPUs per node.
ExpertGroups place_expert_groups(const ParallelPlan& p, int gpus_per_node);

// Bytes one rank sends for one dispatch (or one combine) of `tokens` tokens,
// each to `top_k` experts, `token_bytes` per copy, spread evenly over the
// EP group `ep`, split by fabric:
//   alltoall  every copy for another rank is sent: tokens*k*B*(ep-1)/ep, of
//             which (g-1)/ep to the g-1 other members on its node (NVLink)
//             and (ep-g)/ep to other nodes (g members per node)
//   deepep    one copy per destination node over the network (DeepEP's
//             normal kernels, README): a token's experts lie on
//             min(N, M, k) of the group's N nodes (M = max_nodes, 0: N), its
//             own among them with probability 1/N:
//             network tokens*B*min(N,M,k)*(N-1)/N; inside each node the
//             copies reach their experts' GPUs over NVLink: tokens*k*B*(g-1)/g
//   allgather the tokens themselves (not k copies) to every other member of
//             the etp*ep group, ring all-gather: tokens*B*(n-1), the
//             network share (N-1)/N of it; use the group `fold`
struct DispatchBytes {
    double nvlink = 0;
    double network = 0;
    double sent() const { return nvlink + network; }
};
DispatchBytes dispatch_bytes(MoeDispatcher d, double tokens, double top_k, double token_bytes,
                             const GroupPlacement& group, int max_nodes);

// Forward time of one MoE layer's dispatch and combine (both directions of
// both, plus the expert-tensor-parallel all-gather of the received copies and
// its reduce-scatter when etp > 1; the all-gather dispatcher's all-gather
// and reduce-scatter), times `imbalance` for the copies the busiest rank
// receives. With moe_fp8_dispatch deepep dispatches in fp8 (1 byte per element,
// DeepEP README: "FP8 dispatching and BF16 combining"); `fp8_dispatch` says so.
// The backward moves the same bytes; its dispatch-direction collective (the
// combine's gradient, travelling to the experts' down-projection) is fp8 too
// under moe_fp8_dispatch (DeepSeek-V3 report sec. 3.3.2: "Similar strategies
// are applied to the activation gradient before MoE down-projections"), its
// combine-direction BF16: the same call with the same `fp8_dispatch`.
// `etp_gather`: LayerWork::moe_etp_gather.
double expert_dispatch_s(const CommModel& cm, const ExpertGroups& g, const ParallelPlan& p, double tokens,
                         double top_k, double token_bytes, bool fp8_dispatch, bool etp_gather = true);

// The same time split into its two collectives: the dispatch (with the etp
// all-gather of the received copies) and the combine (with the etp
// reduce-scatter). dispatch_s + combine_s == expert_dispatch_s(...). In
// backward the roles swap: the combine's gradient travels as a dispatch does,
// the dispatch's as a combine does (DeepEP: FusedCombine.backward calls
// dispatch; Megatron-Core fused_a2a.py).
struct ExpertDispatchTime {
    double dispatch_s = 0;
    double combine_s = 0;
    double total_s() const { return dispatch_s + combine_s; }
};
// DeepEP's dispatch and combine while a micro-batch's compute runs beside
// them (moe_a2a_overlap, DualPipe's F&B passes) take longer than DeepEP's
// isolated benchmark: the time of a collective overlapped is its isolated
// time (expert_dispatch_time) over this efficiency; other dispatchers: 1 (no
// measurement of NCCL's all-to-all under overlap). Value and source in
// expert_dispatch.cpp (kDeepEpOverlappedEfficiency).
double overlapped_dispatch_efficiency(MoeDispatcher d);

// Streaming multiprocessors DeepEP's normal kernels occupy while they run
// (expert_dispatch.cpp kDeepEpSms); 0 for the NCCL dispatchers.
int dispatcher_sms(MoeDispatcher d);

ExpertDispatchTime expert_dispatch_time(const CommModel& cm, const ExpertGroups& g, const ParallelPlan& p,
                                        double tokens, double top_k, double token_bytes, bool fp8_dispatch,
                                        bool etp_gather = true);

}  // namespace lostflops
