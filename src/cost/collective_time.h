// Time of collectives on the cluster topology (alpha-beta, two-level; latency
// by algorithm and group size as NCCL models it).
#pragma once

#include <array>

#include "lostflops/calibration.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/spec.h"

namespace lostflops {

// Where the members of one parallel group sit. Ranks are laid out
// Megatron-style (TP fastest, then CP, EP, DP, PP): a group of `size` members
// `stride` ranks apart.
struct GroupPlacement {
    int size = 1;      // members
    int per_node = 1;  // members sharing a node
    int nodes = 1;     // nodes the group spans
    // Scale-up bandwidth of the group's collectives in links of
    // CommModel::intra: 1 on switches; on a torus the rings the group's
    // members run at once (place_on_torus). Point-to-point uses one link.
    double links = 1;
};
GroupPlacement place_group(int size, int stride, int gpus_per_node);

// The topology that places groups (ARCHITECTURE.md "cost"):
//   switched  two levels, the node is the scale-up domain: place_group()
//             above, the first group taken as representative
//   domains   scale-up domains of `domain_gpus` ranks (an NVLink domain of
//             N spanning several nodes, cluster.nvlink_domain) filled in rank
//             order, the last one possibly partial: every group of the job
//             is placed and the slowest one is returned (place_in_domains)
//   torus     TPU slices: an ICI torus of torus[0] x torus[1] x torus[2]
//             chips (ranks fill axis 0 fastest), wrap-around on every axis,
//             slices joined by the data-centre network: placed in domains of
//             one slice, and inside a slice on the torus axes
//             (place_on_torus)
struct Topology {
    enum class Kind { switched, domains, torus };
    Kind kind = Kind::switched;
    int domain_gpus = 1;  // ranks per scale-up domain (min(gpus_per_node, num_gpus) when switched)
    int num_gpus = 1;
    std::array<int, 3> torus{1, 1, 1};
};
Topology topology_of(const Cluster& c);
// A group of `size` members `stride` ranks apart on `t`.
GroupPlacement place_group(const Topology& t, int size, int stride);
// Of every group of the job (size members stride ranks apart, groups tiling
// num_gpus ranks Megatron-style), the one spanning the most domains, ties to
// the one whose emptiest domain holds fewest members: that domain's members
// carry the group's scale-out bytes. per_node = that fewest count.
// Precondition: size * stride divides num_gpus.
GroupPlacement place_in_domains(int size, int stride, int domain_gpus, int num_gpus);
// The links a group's collective uses at once on one slice of a torus
// (Austin et al. 2025, "How to Scale Your Model", part 3: an all-gather
// along an axis with wrap-around runs a bidirectional ring, V / (2 W); one
// without (a segment of the axis) V / W; over several axes at once the
// bandwidths add). The group's first members inside a slice (`members` of
// them, `stride` ranks apart) are mapped to coordinates, axis 0 fastest; an
// axis they span whole adds 2 / spacing links, a segment 1 / spacing (members
// `spacing` apart share their links with the groups between them).
double torus_links(const std::array<int, 3>& torus, int members, int stride);
// The placement as a measured curve is matched (lostflops/nccl_curve.h).
CurveKey curve_key(const GroupPlacement& g);

struct CommModel {
    Link intra;
    Link inter;
    const Calibration* cal = nullptr;
};
CommModel make_comm_model(const Cluster& c, const Calibration& cal);

// One collective over `g` of `bytes` (nccl-tests convention: the full buffer;
// for all_to_all the bytes each rank sends; for send_recv the message).
double collective_time_s(const CommModel& m, Collective op, const GroupPlacement& g, double bytes);

// The latency part of the formula above (launch + hops; NCCL's model of
// src/graph/tuning.cc): what each extra collective of a bucketed transfer costs.
double collective_latency_s(const CommModel& m, Collective op, const GroupPlacement& g);

}  // namespace lostflops
