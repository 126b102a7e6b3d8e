// Expert dispatch traffic and time. Placement by MoE parallel folding (Liu et
// al. 2025, "MoE Parallel Folding"; Megatron-Core parallel_state.py builds the
// expert ranks with RankGenerator(tp=etp, ep=ep, dp=edp, pp, cp=1)). Bytes by
// dispatcher as stated in expert_dispatch.h (Megatron-Core
// token_dispatcher.py: MoEAlltoAllTokenDispatcher, MoEAllGatherTokenDispatcher;
// DeepEP, deepseek-ai/DeepEP README "Normal kernels with NVLink and RDMA
// forwarding": one RDMA copy per node, forwarded over NVLink, tokens limited
// to 4 nodes in DeepSeek-V3's setting, sec. 3.2.2 of its report). Time:
//   alltoall  the all-to-all of cost/collective_time.cpp (or its measured
//             curve): max(NVLink bytes / B_intra, network bytes / B_inter)
//   deepep    max(NVLink bytes / B_intra, network bytes / B_inter) with the
//             all-to-all latency: NVLink at the calibration's bus_eff_intra
//             (DeepEP intranode 153-158 GB/s of ~160 GB/s on H800); the
//             network at DeepEP's own measured RDMA efficiency
//             (kDeepEpRdmaEfficiency below), not NCCL's bus_eff_inter
//   allgather ring all-gather and reduce-scatter over the etp*ep group
// etp > 1 (alltoall, deepep): the EP all-to-all carries each rank's copies,
// then the etp ranks all-gather what they received (and reduce-scatter the
// expert outputs before the combine), Megatron-Core's
// MoEAlltoAllTokenDispatcher with tp_size > 1.
#include "cost/expert_dispatch.h"

#include <algorithm>

namespace lostflops {

ExpertGroups place_expert_groups(const ParallelPlan& p, const Topology& t) {
    ExpertGroups g;
    const int etp = p.expert_tp();
    g.etp = place_group(t, etp, 1);
    g.ep = place_group(t, p.ep, etp);
    g.fold = place_group(t, etp * p.ep, 1);
    g.edp = place_group(t, p.expert_dp(), etp * p.ep);
    return g;
}

ExpertGroups place_expert_groups(const ParallelPlan& p, int gpn) {
    Topology t;
    t.domain_gpus = gpn;
    return place_expert_groups(p, t);
}

DispatchBytes dispatch_bytes(MoeDispatcher d, double tokens, double top_k, double token_bytes,
                             const GroupPlacement& group, int max_nodes) {
    DispatchBytes b;
    const double n = group.size, g = group.per_node, nodes = group.nodes;
    if (group.size <= 1 || tokens <= 0) return b;
    switch (d) {
        case MoeDispatcher::alltoall: {
            const double copies = tokens * top_k * token_bytes;
            b.nvlink = copies * (g - 1) / n;
            b.network = copies * (n - g) / n;
            break;
        }
        case MoeDispatcher::deepep: {
            const double limit = max_nodes > 0 ? std::min<double>(max_nodes, nodes) : nodes;
            const double dest_nodes = std::min(limit, top_k);
            b.network = tokens * token_bytes * dest_nodes * (nodes - 1) / nodes;
            b.nvlink = tokens * top_k * token_bytes * (g - 1) / g;
            break;
        }
        case MoeDispatcher::allgather: {
            const double all = tokens * token_bytes * (n - 1);
            b.network = all * (nodes - 1) / nodes;
            b.nvlink = all - b.network;
            break;
        }
    }
    return b;
}

namespace {

// DeepEP's normal kernels on H800, one CX7 400 Gb/s NIC (~50 GB/s) per GPU,
// 4,096 tokens of hidden 7168, top-4 groups, top-8 experts
// (deepseek-ai/DeepEP docs/legacy.md, "Normal kernels with NVLink and RDMA
// forwarding"). Its bandwidths are logical: tokens x destination nodes
// including the sender's own (tests/test_internode.py num_rdma_token_sent), so
// the bytes on the wire are a share of them: EP32 (4 nodes, a token on all
// 4, 3 remote) dispatch 58, combine 57 GB/s -> 43.5, 42.75 GB/s; EP64 (8
// nodes, 4 destination nodes, the own among them with probability 1/2, 3.5
// remote) 51, 50 GB/s -> 44.6, 43.75 GB/s. Mean 43.65 GB/s of 50: 0.873.
// EP16 (2 nodes: 43 GB/s logical, 21.5 on the wire) is left out: half the
// link, bound by the NVLink forwarding inside the node, not the NIC.
constexpr double kDeepEpRdmaEfficiency =
    (58.0 * 3 / 4 + 57.0 * 3 / 4 + 51.0 * 3.5 / 4 + 50.0 * 3.5 / 4) / 4 / 50.0;

// DeepEP's collectives overlapped with compute in training, measured:
// DeepSeek's published profile of one DualPipe F&B chunk pair
// (deepseek-ai/profile-data train.json: H800, EP64 over 8 nodes, TP1, 4,096
// tokens a micro-batch, 4 MoE layers, balanced routing, FP8 dispatch and
// BF16 combine; every DeepEP kernel ran beside compute kernels). Its
// communication stream spent 113.4 ms in DeepEP's kernels (dispatch and
// combine, their notify / barrier kernels, the dispatch layout; the FP8 casts
// left out) for 4 layers x 4 collectives: 2 FP8 dispatches (4,096 tokens x 4
// nodes x 7,168 x 1.03 bytes = 121.1 MB logical at the README's 51 GB/s:
// 2.375 ms each) and 2 BF16 combines (234.9 MB at 50 GB/s: 4.698 ms each)
// a layer, 56.58 ms isolated (docs/legacy.md, EP64 normal kernels):
// 56.58 / 113.44 = 0.499. The kernels alone took 80.5 ms (1.42x isolated);
// the rest is their notify kernels waiting for the other ranks.
constexpr double kDeepEpOverlappedEfficiency = 0.499;

// DeepEP's normal kernels run on 20 SMs: Buffer's num_sms default
// (deepseek-ai/DeepEP deep_ep/buffer.py at 92fe2de, V1: "num_sms: int = 20"), Megatron-Core's
// moe_deepep_num_sms "historical default 20" (transformer_config.py),
// DeepSeek-V3 report sec. 3.2.2 ("only 20 SMs"); the profile above launches
// every dispatch and combine kernel with a grid of 20 blocks.
constexpr int kDeepEpSms = 20;

// One direction: the dispatch, or the combine (the all-gather dispatcher's
// combine is a reduce-scatter).
double one_way_s(const CommModel& cm, const ExpertGroups& g, const ParallelPlan& p, double tokens, double top_k,
                 double token_bytes, bool combine) {
    const Calibration& cal = *cm.cal;
    switch (p.moe_dispatcher) {
        case MoeDispatcher::allgather:
            return collective_time_s(cm, combine ? Collective::reduce_scatter : Collective::all_gather, g.fold,
                                     tokens * token_bytes * g.fold.size);
        case MoeDispatcher::alltoall:
            return moe_load_factor(p) * collective_time_s(cm, Collective::all_to_all, g.ep, tokens * top_k * token_bytes);
        case MoeDispatcher::deepep: {
            if (g.ep.size <= 1) return 0;
            const DispatchBytes b = dispatch_bytes(p.moe_dispatcher, tokens, top_k, token_bytes, g.ep, p.moe_max_nodes);
            const double intra = b.nvlink / (cm.intra.bandwidth_GBps * 1e9 * cal.bus_eff_intra);
            const double inter = b.network / (cm.inter.bandwidth_GBps * 1e9 * kDeepEpRdmaEfficiency);
            return moe_load_factor(p) * std::max(intra, inter) + collective_latency_s(cm, Collective::all_to_all, g.ep);
        }
    }
    return 0;
}

}  // namespace

double overlapped_dispatch_efficiency(MoeDispatcher d) {
    return d == MoeDispatcher::deepep ? kDeepEpOverlappedEfficiency : 1.0;
}

int dispatcher_sms(MoeDispatcher d) { return d == MoeDispatcher::deepep ? kDeepEpSms : 0; }

ExpertDispatchTime expert_dispatch_time(const CommModel& cm, const ExpertGroups& g, const ParallelPlan& p,
                                        double tokens, double top_k, double token_bytes, bool fp8_dispatch,
                                        bool etp_gather) {
    ExpertDispatchTime t;
    if (tokens <= 0) return t;
    const double dispatch_bytes_per_copy =
        fp8_dispatch && p.moe_dispatcher == MoeDispatcher::deepep ? token_bytes / 2 : token_bytes;
    t.dispatch_s = one_way_s(cm, g, p, tokens, top_k, dispatch_bytes_per_copy, false);
    t.combine_s = one_way_s(cm, g, p, tokens, top_k, token_bytes, true);
    if (p.moe_dispatcher != MoeDispatcher::allgather && g.etp.size > 1 && etp_gather) {
        // The copies this rank received (balanced: as many as it sent), gathered over etp.
        const double received = tokens * top_k * token_bytes * g.etp.size * moe_load_factor(p);
        t.dispatch_s += collective_time_s(cm, Collective::all_gather, g.etp, received);
        t.combine_s += collective_time_s(cm, Collective::reduce_scatter, g.etp, received);
    }
    return t;
}

double expert_dispatch_s(const CommModel& cm, const ExpertGroups& g, const ParallelPlan& p, double tokens,
                         double top_k, double token_bytes, bool fp8_dispatch, bool etp_gather) {
    return expert_dispatch_time(cm, g, p, tokens, top_k, token_bytes, fp8_dispatch, etp_gather).total_s();
}

}  // namespace lostflops
