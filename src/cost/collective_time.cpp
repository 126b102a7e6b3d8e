// Collective time, alpha-beta model (Thakur, Rabenseifner & Gropp 2005) on a
// two-level topology: g members per node on NVLink, N nodes on the network.
//   all-reduce      2(g-1)/g * M/B_intra + 2(N-1)/N * (M/g)/B_inter
//   all-gather, reduce-scatter: half of that
//   all-to-all      max((g-1)/n * M/B_intra, (n-g)/n * M/B_inter)
// Bandwidths are link bandwidth x bus efficiency (nccl-tests' busbw compares
// with link bandwidth directly, doc/PERFORMANCE.md).
// Latency follows NCCL's own model (NVIDIA/nccl src/graph/tuning.cc,
// ncclTopoTuneModel: base latency + per-hop latency x step count), with the
// calibrated launch cost as base and the job's link latency_us as the hop:
//   ring all-gather / reduce-scatter (NCCL has no tree for them):
//     n-1 steps, N-1 of them across nodes:  (n-N) a_intra + (N-1) a_inter
//   ring all-reduce: twice the steps:       2(n-N) a_intra + 2(N-1) a_inter
//   tree all-reduce (up and down):          2((g-1) a_intra + floor(log2 N) a_inter)
// NCCL picks the faster algorithm for all-reduce; ring and tree have about the
// same bus bandwidth at scale (same file), so the lower latency decides.
// All-to-all and send/recv: launch + (g-1) a_intra + ceil(log2 N) a_inter.
// A measured nccl-tests curve of the op and placement (same ranks per node,
// lostflops/nccl_curve.h) replaces the formula.
#include "cost/collective_time.h"

#include <algorithm>
#include <cmath>

#include "lostflops/nccl_curve.h"

namespace lostflops {

GroupPlacement place_group(int size, int stride, int gpus_per_node) {
    GroupPlacement g;
    g.size = std::max(1, size);
    if (g.size == 1) return g;
    if (stride >= gpus_per_node) {
        g.per_node = 1;
        g.nodes = g.size;
    } else {
        // Members 0, stride, 2*stride... from a node boundary: the last one
        // sits (size-1)*stride ranks on, so the group spans that many nodes
        // (a stride that does not divide the node, like the first/last
        // pipeline stage pair 6 ranks apart on 8 GPUs, still puts several
        // members on one node; 4 members 6 apart sit on nodes 0, 0, 1, 2).
        // Groups starting elsewhere than a node boundary may span one node
        // more; the first group is taken as representative.
        const int64_t last = static_cast<int64_t>(g.size - 1) * stride;
        g.nodes = static_cast<int>(last / gpus_per_node) + 1;
        g.per_node = (g.size + g.nodes - 1) / g.nodes;
    }
    // A group that fits in a node's size but not in its alignment (tp = 3 or
    // 6 on 8-GPU nodes) straddles two nodes for some ranks; the slowest
    // group sets the pace.
    const int64_t span = static_cast<int64_t>(g.size) * stride;
    if (g.nodes == 1 && span < gpus_per_node && gpus_per_node % span != 0) {
        g.nodes = 2;
        g.per_node = (g.size + 1) / 2;
    }
    return g;
}

CurveKey curve_key(const GroupPlacement& g) { return {g.size, g.per_node, g.nodes}; }

CommModel make_comm_model(const Cluster& c, const Calibration& cal) {
    CommModel m;
    m.intra = c.intra_node;
    m.inter = c.inter_node;
    m.cal = &cal;
    return m;
}

namespace {

double ring_factor(Collective op) {
    return op == Collective::all_reduce ? 2.0 : 1.0;
}

double formula_time_s(const CommModel& cm, Collective op, const GroupPlacement& g, double bytes) {
    const Calibration& cal = *cm.cal;
    const double b_intra = cm.intra.bandwidth_GBps * 1e9 * cal.bus_eff_intra;
    const double b_inter = cm.inter.bandwidth_GBps * 1e9 * cal.bus_eff_inter;
    const double gl = g.per_node, n_nodes = g.nodes, n = g.size;
    double bw_s = 0;
    switch (op) {
        case Collective::all_reduce:
        case Collective::all_gather:
        case Collective::reduce_scatter: {
            const double f = ring_factor(op);
            bw_s = f * (gl - 1) / gl * bytes / b_intra;
            if (n_nodes > 1) bw_s += f * (n_nodes - 1) / n_nodes * (bytes / gl) / b_inter;
            break;
        }
        case Collective::all_to_all:
            bw_s = std::max((gl - 1) / n * bytes / b_intra, (n - gl) / n * bytes / b_inter);
            break;
        case Collective::send_recv:
            bw_s = bytes / (n_nodes > 1 ? b_inter : b_intra);
            break;
    }
    return bw_s + collective_latency_s(cm, op, g);
}

}  // namespace

double collective_latency_s(const CommModel& cm, Collective op, const GroupPlacement& g) {
    if (g.size <= 1) return 0;
    const double a_intra = cm.intra.latency_us * 1e-6, a_inter = cm.inter.latency_us * 1e-6;
    const double n = g.size, nodes = g.nodes, gl = g.per_node;
    const double launch = cm.cal->collective_launch_us * 1e-6;
    switch (op) {
        case Collective::all_gather:
        case Collective::reduce_scatter:
            return launch + (n - nodes) * a_intra + (nodes - 1) * a_inter;
        case Collective::all_reduce: {
            const double ring = 2 * ((n - nodes) * a_intra + (nodes - 1) * a_inter);
            const double tree = 2 * ((gl - 1) * a_intra + std::floor(std::log2(nodes)) * a_inter);
            return launch + std::min(ring, tree);
        }
        case Collective::all_to_all:
        case Collective::send_recv:
            break;
    }
    const double levels = nodes > 1 ? std::ceil(std::log2(nodes)) : 0.0;
    return launch + (gl - 1) * a_intra + levels * a_inter;
}

double collective_time_s(const CommModel& cm, Collective op, const GroupPlacement& g, double bytes) {
    if (g.size <= 1 || bytes <= 0) return 0;
    if (!cm.cal->nccl.empty())
        if (auto t = curve_time_s(*cm.cal, op, curve_key(g), bytes)) return *t;
    return formula_time_s(cm, op, g, bytes);
}

}  // namespace lostflops
