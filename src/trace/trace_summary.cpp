// The merge of per-rank reports (one rank, one file) and ranks for files
// without one. Summaries are written and read in trace_summary_write.cpp and
// trace_summary_read.cpp; the cross-rank answers are trace_cluster.cpp's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "lostflops/error.h"
#include "lostflops/trace.h"

namespace lostflops::trace {

void assign_missing_ranks(std::vector<RankReport>& ranks) {
    std::set<int> taken;
    for (const auto& r : ranks)
        if (r.rank >= 0) taken.insert(r.rank);
    int free_rank = 0;
    for (auto& r : ranks) {
        if (r.rank >= 0) continue;
        while (taken.count(free_rank) > 0) ++free_rank;
        r.rank = free_rank;
        taken.insert(free_rank);
        r.warnings.push_back("rank " + std::to_string(free_rank) + " assigned by file order");
    }
}

std::vector<RankReport> merge_summaries(const std::vector<std::vector<RankReport>>& parts) {
    std::vector<RankReport> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
    for (std::size_t i = 1; i < out.size(); ++i) {
        if (out[i].rank == out[i - 1].rank) {
            throw InputError(out[i].source, "rank",
                             "rank " + std::to_string(out[i].rank) + " appears twice: in " + out[i - 1].source +
                                 " and in " + out[i].source + " (each rank must come from one file)");
        }
    }
    return out;
}

}  // namespace lostflops::trace
