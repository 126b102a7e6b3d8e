// The merge of per-rank reports (one rank, one file), ranks for files without
// one, and stragglers: ranks whose compute time or waiting time (idle +
// exposed communication) deviate most from the median over all ranks (the
// median, not the mean, so that one slow rank does not move the reference).
// Summaries are written and read in trace_summary_write.cpp and
// trace_summary_read.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "lostflops/error.h"
#include "lostflops/trace.h"

namespace lostflops::trace {
namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<Straggler> find_stragglers(const std::vector<RankReport>& ranks, std::size_t max_per_metric) {
    std::vector<Straggler> out;
    if (ranks.size() < 2) return out;
    const auto pick = [&](const char* metric, auto value_of) {
        std::vector<double> v;
        for (const auto& r : ranks) v.push_back(value_of(r));
        const double med = median(v);
        std::vector<Straggler> s;
        for (const auto& r : ranks) {
            const double x = value_of(r);
            if (x == med) continue;
            const double dev = med != 0 ? (x - med) / med * 100.0 : (x > med ? 100.0 : -100.0);
            s.push_back({r.rank, metric, x, med, dev});
        }
        std::stable_sort(s.begin(), s.end(), [](const Straggler& a, const Straggler& b) {
            return std::fabs(a.deviation_pct) > std::fabs(b.deviation_pct);
        });
        if (s.size() > max_per_metric) s.resize(max_per_metric);
        out.insert(out.end(), s.begin(), s.end());
    };
    pick("compute", [](const RankReport& r) { return r.compute_us; });
    pick("waiting", [](const RankReport& r) { return r.idle_us + r.exposed_comm_us; });
    return out;
}

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
