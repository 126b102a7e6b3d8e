// Time of collectives on the cluster topology (alpha-beta, two-level; latency
// by algorithm and group size as NCCL models it).
#pragma once

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
};
GroupPlacement place_group(int size, int stride, int gpus_per_node);
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
