// Time of one collective from a measured nccl-tests bus-bandwidth curve.
//
// nccl-tests reports, per message size S (the full buffer, in bytes) and time t,
// algbw = S / t and busbw = algbw * F(op, n), with the bus factor F
// (NVIDIA/nccl-tests, doc/PERFORMANCE.md, "Summary"):
//   all_reduce                           F = 2(n-1)/n
//   all_gather, reduce_scatter, alltoall F = (n-1)/n
//   send_recv                            F = 1
// busbw is (nearly) independent of n, so a curve measured on m ranks predicts
// n ranks: t(S, n) = S / algbw = S * F(op, n) / busbw(S).
#pragma once

#include <optional>

#include "lostflops/calibration.h"

namespace lostflops {

// The nccl-tests bus factor F(op, n) above; 0 for n <= 1 (no traffic).
double bus_factor(Collective op, int ranks);

// Predicted time in seconds of one `op` of `bytes` (nccl-tests size: the full
// buffer) over `ranks` ranks, from the measured curve of that op and scope in
// `cal.nccl` (the one whose rank count is nearest `ranks` on a log scale,
// exact match first). busbw is interpolated linearly in log(bytes) between
// points; above the largest size the largest point's busbw holds; below the
// smallest size the collective is latency-bound and takes the smallest
// point's time (converted to `ranks` by F). nullopt if no curve matches.
// 0 for bytes <= 0 or ranks <= 1. Allocation-free; O(log points).
std::optional<double> curve_time_s(const Calibration& cal, Collective op, LinkScope scope,
                                   double bytes, int ranks);

// The curve that curve_time_s would use, or nullptr.
const BusBwCurve* find_curve(const Calibration& cal, Collective op, LinkScope scope, int ranks);

// Bus bandwidth of `curve` at `bytes` (GB/s, 1 GB = 1e9 bytes), interpolated
// and clamped as above (below the smallest size: the smallest point's busbw).
double curve_busbw_GBps(const BusBwCurve& curve, double bytes);

}  // namespace lostflops
