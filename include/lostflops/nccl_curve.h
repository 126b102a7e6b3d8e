// Time of one collective from a measured nccl-tests bus-bandwidth curve.
//
// nccl-tests reports, per message size S (the full buffer, in bytes) and time t,
// algbw = S / t and busbw = algbw * F(op, n), with the bus factor F
// (NVIDIA/nccl-tests, doc/PERFORMANCE.md, "Summary"):
//   all_reduce                           F = 2(n-1)/n
//   all_gather, reduce_scatter, alltoall F = (n-1)/n
//   send_recv                            F = 1
// busbw is (nearly) independent of n for a fixed placement, so a curve
// measured on m ranks predicts n ranks laid out the same way:
// t(S, n) = S * F(op, n) / busbw(S). The placement is not interchangeable: a
// curve prices only groups with the same ranks per node (which NVLink and NIC
// share decide), and one-node curves only one-node groups.
#pragma once

#include <optional>
#include <string>

#include "lostflops/calibration.h"
#include "lostflops/spec.h"

namespace lostflops {

// The nccl-tests bus factor F(op, n) above; 0 for n <= 1 (no traffic).
double bus_factor(Collective op, int ranks);

// Where the members of a collective sit.
struct CurveKey {
    int ranks = 0;
    int ranks_per_node = 0;
    int nodes = 0;
};

// A curve's ranks per node and nodes: as recorded, or for a curve written
// before they were, `ranks` on one node when intra-node; {0, 0} (unknown)
// for such an inter-node curve, which is never used.
CurveKey curve_layout(const BusBwCurve& c);

// The curve that prices `op` over a group at `key`: same op, same ranks per
// node, same scope (one node, or several); the nearest node count on a log
// scale, an exact one first, a tie to the larger measured run. nullptr if none.
const BusBwCurve* find_curve(const Calibration& cal, Collective op, const CurveKey& key);

// Predicted time in seconds of one `op` of `bytes` (nccl-tests size: the full
// buffer) over the group at `key`, from find_curve's curve; nullopt if none.
// Within the measured sizes busbw is interpolated linearly in log(bytes);
// outside them the time follows the alpha-beta line t = a + b*S through the
// two nearest measured points (converted to the group's ranks by F): a small
// message pays the latency a, not the smallest size's whole time; a large one
// the last measured slope (a = 0, b from the point, with one point only).
// 0 for ranks <= 1 (even without a curve) and for bytes <= 0 with one.
// Allocation-free; O(curves + log points).
std::optional<double> curve_time_s(const Calibration& cal, Collective op, const CurveKey& key, double bytes);

// Bus bandwidth of `curve` at `bytes` within its measured sizes (GB/s,
// 1 GB = 1e9 bytes), interpolated as above and clamped at the ends.
double curve_busbw_GBps(const BusBwCurve& curve, double bytes);

// Why a curve should not price a job on `gpu`, or nullopt: the device name
// nccl-tests printed names another GPU model or architecture, or none.
std::optional<std::string> curve_gpu_mismatch(const BusBwCurve& curve, const Gpu& gpu);

}  // namespace lostflops
