// From parsed nccl-tests runs to the `nccl` curves of a calibration profile:
// one curve per (op, scope, ranks, ranks per node), points sorted by size,
// with the layout (ranks per node, nodes: from the hosts of the rank lines)
// and the device name; a size measured in two runs keeps the first run's
// point (reported as a warning).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lostflops/nccl_curve.h"
#include "lostflops/nccl_tests.h"

namespace lostflops {

namespace {
// Same op, scope, ranks and placement (a curve without a recorded layout
// compares by what curve_layout makes of it).
bool same_key(const BusBwCurve& a, const BusBwCurve& b) {
    return a.op == b.op && a.scope == b.scope && a.ranks == b.ranks &&
           curve_layout(a).ranks_per_node == curve_layout(b).ranks_per_node;
}

// Ranks per node of a run: its rank lines name the hosts; a run without them
// (hosts 0) keeps the layout unrecorded, except on one node by scope.
std::pair<int, int> layout_of(const NcclTestsRun& run) {
    // An inter-node run whose hosts are not known (--scope inter_node on an
    // output without rank lines) has no layout.
    if (run.scope == LinkScope::inter_node && run.hosts <= 1) return {0, 0};
    // 8 ranks on one host and 4 on another are not 2 nodes of 6.
    if (run.uneven_hosts) return {0, 0};
    if (run.hosts > 0 && run.ranks % run.hosts == 0) return {run.ranks / run.hosts, run.hosts};
    if (run.scope == LinkScope::intra_node) return {run.ranks, 1};
    return {0, 0};
}
}  // namespace

std::vector<BusBwCurve> curves_from_runs(const std::vector<NcclTestsRun>& runs,
                                         std::vector<std::string>& warnings) {
    std::vector<BusBwCurve> out;
    for (const auto& run : runs) {
        const auto [per_node, nodes] = layout_of(run);
        const BusBwCurve key{run.op, run.scope, run.ranks, {}, per_node, nodes, run.device};
        auto it = std::find_if(out.begin(), out.end(), [&](const BusBwCurve& c) { return same_key(c, key); });
        if (it == out.end()) {
            out.push_back(key);
            it = out.end() - 1;
        }
        int repeated = 0;
        std::set<double> sizes;
        for (const auto& q : it->points) sizes.insert(q.bytes);
        for (const auto& p : run.points) {
            if (!sizes.insert(p.bytes).second) {
                ++repeated;
                continue;
            }
            it->points.push_back(p);
        }
        if (repeated)
            warnings.push_back(fmt::format("{} curve on {} ranks ({}): {} size(s) measured again by a "
                                           "later run; kept the earlier points",
                                           to_string(run.op), run.ranks, to_string(run.scope), repeated));
        std::sort(it->points.begin(), it->points.end(),
                  [](const BusBwPoint& a, const BusBwPoint& b) { return a.bytes < b.bytes; });
    }
    return out;
}

void merge_curves(Calibration& cal, const std::vector<BusBwCurve>& curves) {
    for (const auto& c : curves) {
        auto it = std::find_if(cal.nccl.begin(), cal.nccl.end(),
                               [&](const BusBwCurve& o) { return same_key(o, c); });
        if (it != cal.nccl.end()) *it = c;
        else cal.nccl.push_back(c);
    }
}

}  // namespace lostflops
