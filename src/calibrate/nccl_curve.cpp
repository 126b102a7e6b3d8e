// Collective time from a measured nccl-tests bus-bandwidth curve.
//
// Bus factor F(op, n) from NVIDIA/nccl-tests doc/PERFORMANCE.md ("Summary"):
// busbw = algbw * F, algbw = S / t with S the full buffer size, so
// t = S * F(op, n) / busbw. Between measured sizes busbw is interpolated
// linearly in ln(S) (nccl-tests steps sizes geometrically, by -f 2 usually);
// outside the range it is clamped (see nccl_curve.h). Hot path of an
// estimate: no allocation, a linear scan over the few curves and a binary
// search over the points.
#include "lostflops/nccl_curve.h"

#include <algorithm>
#include <cmath>

namespace lostflops {

double bus_factor(Collective op, int ranks) {
    if (ranks <= 1) return 0.0;
    const double n = ranks;
    switch (op) {
        case Collective::all_reduce: return 2.0 * (n - 1.0) / n;
        case Collective::all_gather:
        case Collective::reduce_scatter:
        case Collective::all_to_all: return (n - 1.0) / n;
        case Collective::send_recv: return 1.0;
    }
    return 1.0;
}

const BusBwCurve* find_curve(const Calibration& cal, Collective op, LinkScope scope, int ranks) {
    const BusBwCurve* best = nullptr;
    double best_distance = 0;
    for (const BusBwCurve& c : cal.nccl) {
        if (c.op != op || c.scope != scope || c.points.empty() || c.ranks < 1) continue;
        // Distance in log(ranks); a tie goes to the larger measured run.
        const double d = std::fabs(std::log(static_cast<double>(c.ranks) / std::max(ranks, 1)));
        if (!best || d < best_distance || (d == best_distance && c.ranks > best->ranks)) {
            best = &c;
            best_distance = d;
        }
    }
    return best;
}

double curve_busbw_GBps(const BusBwCurve& curve, double bytes) {
    const auto& p = curve.points;
    if (p.empty()) return 0.0;
    if (bytes <= p.front().bytes) return p.front().busbw_GBps;
    if (bytes >= p.back().bytes) return p.back().busbw_GBps;
    // First point with size > bytes; its predecessor has size <= bytes.
    auto hi = std::upper_bound(p.begin(), p.end(), bytes,
                               [](double b, const BusBwPoint& q) { return b < q.bytes; });
    auto lo = hi - 1;
    const double span = std::log(hi->bytes / lo->bytes);
    if (!(span > 0)) return lo->busbw_GBps;
    const double w = std::log(bytes / lo->bytes) / span;
    return lo->busbw_GBps + w * (hi->busbw_GBps - lo->busbw_GBps);
}

std::optional<double> curve_time_s(const Calibration& cal, Collective op, LinkScope scope,
                                   double bytes, int ranks) {
    const BusBwCurve* curve = find_curve(cal, op, scope, ranks);
    if (!curve) return std::nullopt;
    if (!(bytes > 0) || ranks <= 1) return 0.0;
    const double factor = bus_factor(op, ranks);
    // Latency-bound below the smallest measured size: its time, not less.
    const double size_bytes = std::max(bytes, curve->points.front().bytes);
    const double busbw_GBps = curve_busbw_GBps(*curve, size_bytes);
    if (!(busbw_GBps > 0)) return std::nullopt;
    return size_bytes * factor / (busbw_GBps * 1e9);
}

}  // namespace lostflops
