// Collective time, alpha-beta model (Thakur, Rabenseifner & Gropp 2005) on a
// two-level topology: g members per node on NVLink, N nodes on the network.
//   all-reduce      2(g-1)/g * M/B_intra + 2(N-1)/N * (M/g)/B_inter
//   all-gather, reduce-scatter: half of that
//   all-to-all      max((g-1)/n * M/B_intra, (n-g)/n * M/B_inter)
// Bandwidths are link bandwidth x bus efficiency (nccl-tests' busbw compares
// with link bandwidth directly, doc/PERFORMANCE.md). The latency term is the
// collective's launch plus one link latency per ring step inside the node and
// per tree level across nodes (NCCL picks trees for latency at scale).
// A measured nccl-tests curve for the op and scope replaces the formula.
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
    } else {
        g.per_node = std::min(g.size, std::max(1, gpus_per_node / std::max(1, stride)));
    }
    g.nodes = (g.size + g.per_node - 1) / g.per_node;
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
    const double levels = n_nodes > 1 ? std::ceil(std::log2(n_nodes)) : 0.0;
    const double latency_s = cal.collective_launch_us * 1e-6 +
                             ring_factor(op) * ((gl - 1) * cm.intra.latency_us + levels * cm.inter.latency_us) * 1e-6;
    return bw_s + latency_s;
}

}  // namespace

double collective_time_s(const CommModel& cm, Collective op, const GroupPlacement& g, double bytes) {
    if (g.size <= 1 || bytes <= 0) return 0;
    if (!cm.cal->nccl.empty()) {
        const LinkScope scope = g.nodes > 1 ? LinkScope::inter_node : LinkScope::intra_node;
        if (auto t = curve_time_s(*cm.cal, op, scope, bytes, g.size)) return *t;
    }
    return formula_time_s(cm, op, g, bytes);
}

}  // namespace lostflops
