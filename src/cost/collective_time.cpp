// Collective time, alpha-beta model (Thakur, Rabenseifner & Gropp 2005) on a
// two-level topology: g members per node (or NVLink domain) on NVLink, N
// nodes (domains) on the network. Group placement: by the first group on a
// switched cluster, by the slowest group of the job on NVLink domains of N
// (place_in_domains: every distinct start offset modulo the domain); on a
// TPU torus the slice is the domain and a group's scale-up bandwidth is the
// links of the bidirectional rings it runs per axis (torus_links, the
// scaling book's part 3).
//   all-reduce      2(g-1)/g * M/B_intra + 2(N-1)/N * (M/g)/B_inter
//   all-gather, reduce-scatter: half of that
//   all-to-all      max((g-1)/n * M/B_intra, (n-g)/n * M/B_inter)
//   send/recv       M / (link x p2p_eff), the link of the hop (one link)
// Bandwidths are link bandwidth x bus efficiency (nccl-tests' busbw compares
// with link bandwidth directly, doc/PERFORMANCE.md); a point-to-point
// transfer has no bus: the profile's p2p_eff, as the pipeline's sends.
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
#include <cstdint>
#include <vector>

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

Topology topology_of(const Cluster& c) {
    Topology t;
    t.num_gpus = std::max(1, c.num_gpus);
    if (c.torus[0] > 0) {
        t.kind = Topology::Kind::torus;
        t.torus = c.torus;
        t.domain_gpus = c.torus[0] * c.torus[1] * c.torus[2];
    } else if (c.nvlink_domain > 0) {
        t.kind = Topology::Kind::domains;
        t.domain_gpus = c.nvlink_domain;
    } else {
        t.domain_gpus = std::max(1, std::min(c.gpus_per_node, c.num_gpus));
    }
    return t;
}

GroupPlacement place_group(const Topology& t, int size, int stride) {
    if (t.kind == Topology::Kind::switched) return place_group(size, stride, t.domain_gpus);
    GroupPlacement g = place_in_domains(size, stride, t.domain_gpus, t.num_gpus);
    if (t.kind == Topology::Kind::torus && g.per_node > 1) g.links = torus_links(t.torus, g.per_node, stride);
    return g;
}

double torus_links(const std::array<int, 3>& torus, int members, int stride) {
    double links = 0;
    int64_t below = 1;  // chips of the axes before this one
    for (const int dim : torus) {
        if (dim <= 1) continue;
        // Members' coordinates on this axis: rank k*stride -> (k*stride / below) % dim.
        std::vector<char> seen(static_cast<size_t>(dim), 0);
        int distinct = 0;
        for (int64_t k = 0; k < members; ++k) {
            const auto x = static_cast<size_t>((k * stride / below) % dim);
            if (!seen[x]) ++distinct;
            seen[x] = 1;
        }
        below *= dim;
        if (distinct <= 1) continue;
        // The step between neighbouring coordinates the group holds.
        int first = 0;
        while (!seen[static_cast<size_t>(first)]) ++first;
        int spacing = dim;
        for (int x = first + 1; x < dim; ++x)
            if (seen[static_cast<size_t>(x)]) {
                spacing = x - first;
                break;
            }
        const bool whole = static_cast<int64_t>(distinct) * spacing == dim;  // a ring closes round the axis
        links += (whole ? 2.0 : 1.0) / spacing;
    }
    return links > 0 ? links : 1;
}

namespace {

// Members of the group starting at rank `first` (size members stride apart)
// in each domain it touches: how many domains, and the fewest in one.
struct Spread {
    int64_t domains = 0;
    int64_t fewest = 0;
};
Spread spread_of(int64_t first, int64_t size, int64_t stride, int64_t domain) {
    const int64_t last = first + (size - 1) * stride;
    Spread sp;
    sp.fewest = size;
    for (int64_t d = first / domain; d <= last / domain; ++d) {
        // members k with first + k*stride in [d*domain, (d+1)*domain)
        const int64_t lo = std::max<int64_t>(0, (d * domain - first + stride - 1) / stride);
        const int64_t hi = std::min<int64_t>(size - 1, ((d + 1) * domain - 1 - first) / stride);
        if (hi < lo) continue;  // a domain the group steps over (stride > domain)
        ++sp.domains;
        sp.fewest = std::min(sp.fewest, hi - lo + 1);
    }
    return sp;
}

}  // namespace

GroupPlacement place_in_domains(int size, int stride, int domain_gpus, int num_gpus) {
    GroupPlacement g;
    g.size = std::max(1, size);
    if (g.size == 1) return g;
    const int64_t n = g.size, s = std::max(1, stride), dom = std::max(1, domain_gpus);
    const int64_t block = n * s;  // ranks a set of `s` interleaved groups tiles
    const int64_t blocks = std::max<int64_t>(1, num_gpus / block);
    // A group's spread depends only on its first rank modulo the domain: the
    // blocks' offsets repeat after dom / gcd(block, dom) blocks, and the
    // interleaved groups of a block after dom of them.
    std::vector<char> seen(static_cast<size_t>(dom), 0);
    Spread worst{0, 0};
    const int64_t block_period = std::min(blocks, dom);
    // First ranks of the interleaved groups: 0 .. s-1, and no group runs past
    // the last rank (the tied-embedding pair: first and last stage).
    const int64_t starts = std::max<int64_t>(1, std::min({s, dom, num_gpus - (n - 1) * s}));
    for (int64_t b = 0; b < block_period; ++b)
        for (int64_t j = 0; j < starts; ++j) {
            const int64_t first = b * block + j;
            const int64_t offset = first % dom;
            if (seen[static_cast<size_t>(offset)]) continue;
            seen[static_cast<size_t>(offset)] = 1;
            const Spread sp = spread_of(offset, n, s, dom);
            if (sp.domains > worst.domains || (sp.domains == worst.domains && sp.fewest < worst.fewest)) worst = sp;
        }
    g.nodes = static_cast<int>(worst.domains);
    g.per_node = static_cast<int>(worst.fewest);
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
    const double link_intra = cm.intra.bandwidth_GBps * 1e9 * cal.bus_eff_intra;
    const double b_intra = link_intra * g.links;
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
        case Collective::send_recv: {
            // One rule for a point-to-point transfer, the pipeline's
            // (estimate/stage_pass.cpp p2p_time_s): the link at p2p_eff, not
            // a collective's bus efficiency (a ring hop is an NCCL send/recv).
            const Link& link = n_nodes > 1 ? cm.inter : cm.intra;
            bw_s = bytes / (link.bandwidth_GBps * 1e9 * cal.p2p_eff);
            break;
        }
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
