// From parsed nccl-tests runs to the `nccl` curves of a calibration profile:
// one curve per (op, scope, ranks), points sorted by size; a size measured in
// two runs keeps the first run's point (reported as a warning).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lostflops/nccl_tests.h"

namespace lostflops {

namespace {
bool same_key(const BusBwCurve& a, Collective op, LinkScope scope, int ranks) {
    return a.op == op && a.scope == scope && a.ranks == ranks;
}
}  // namespace

std::vector<BusBwCurve> curves_from_runs(const std::vector<NcclTestsRun>& runs,
                                         std::vector<std::string>& warnings) {
    std::vector<BusBwCurve> out;
    for (const auto& run : runs) {
        auto it = std::find_if(out.begin(), out.end(), [&](const BusBwCurve& c) {
            return same_key(c, run.op, run.scope, run.ranks);
        });
        if (it == out.end()) {
            out.push_back(BusBwCurve{run.op, run.scope, run.ranks, {}});
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
                               [&](const BusBwCurve& o) { return same_key(o, c.op, c.scope, c.ranks); });
        if (it != cal.nccl.end()) *it = c;
        else cal.nccl.push_back(c);
    }
}

}  // namespace lostflops
