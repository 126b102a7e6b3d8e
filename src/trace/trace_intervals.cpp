// Interval arithmetic of HTA (hta/utils/utils.py merge_kernel_intervals;
// hta/analyzers/communication_analysis.py get_comm_comp_overlap), reproduced
// exactly, degenerate intervals included: after HTA's rounding a kernel
// shorter than a microsecond can end before it starts, and HTA's group sums
// then count it negative; matching HTA means doing the same. The overlap
// sweep runs as a two-way merge of the two edge lists when no group is
// degenerate (same order as the stable sort, no edge array).
#include <algorithm>

#include "trace/trace_internal.h"

namespace lostflops::trace::detail {

std::vector<Interval> merge_intervals(std::vector<Interval> v) {
    std::stable_sort(v.begin(), v.end(),
                     [](const Interval& a, const Interval& b) { return a.start < b.start; });
    std::vector<Interval> out;
    if (v.empty()) return out;
    out.push_back(v.front());
    double max_end = v.front().end;  // cummax of the ends seen so far
    for (std::size_t i = 1; i < v.size(); ++i) {
        const Interval& k = v[i];
        if (k.start > max_end) {
            out.push_back(k);
        } else {
            out.back().start = std::min(out.back().start, k.start);
            out.back().end = std::max(out.back().end, k.end);
        }
        max_end = std::max(max_end, k.end);
    }
    return out;
}

double total_length(const std::vector<Interval>& merged) {
    double sum = 0;
    for (const auto& g : merged) sum += g.end - g.start;
    return sum;
}

namespace {

// Merged groups that are all well formed (end >= start) have their edges in
// time order already (a group starts after the previous one ends).
bool ordered_edges(const std::vector<Interval>& v) {
    for (const auto& g : v) if (g.end < g.start) return false;
    return true;
}

}  // namespace

double overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
    struct Edge {
        double time;
        int delta;
    };
    if (ordered_edges(a) && ordered_edges(b)) {
        // The stable sort below, as a two-way merge (ties: a's edges first),
        // without materialising the edges.
        std::size_t ia = 0, ib = 0;  // edge indices: group i/2, start when even
        const auto edge_of = [](const std::vector<Interval>& v, std::size_t i, int unit) {
            const Interval& g = v[i / 2];
            return i % 2 == 0 ? Edge{g.start, unit} : Edge{g.end, -unit};
        };
        const std::size_t na = 2 * a.size(), nb = 2 * b.size();
        const auto next = [&]() {
            if (ib >= nb || (ia < na && edge_of(a, ia, 1).time <= edge_of(b, ib, 2).time)) return edge_of(a, ia++, 1);
            return edge_of(b, ib++, 2);
        };
        int running = 0;
        double sum = 0;
        if (na + nb == 0) return 0;
        Edge cur = next();
        for (std::size_t left = na + nb - 1;; --left) {
            running += cur.delta;
            if (left == 0) break;
            const Edge nxt = next();
            if (running == 3) sum += nxt.time - cur.time;
            cur = nxt;
        }
        return sum;
    }
    std::vector<Edge> edges;
    edges.reserve(2 * (a.size() + b.size()));
    for (const auto& g : a) {
        edges.push_back({g.start, 1});
        edges.push_back({g.end, -1});
    }
    for (const auto& g : b) {
        edges.push_back({g.start, 2});
        edges.push_back({g.end, -2});
    }
    std::stable_sort(edges.begin(), edges.end(),
                     [](const Edge& x, const Edge& y) { return x.time < y.time; });
    int running = 0;
    double sum = 0;
    for (std::size_t i = 0; i < edges.size(); ++i) {
        running += edges[i].delta;
        if (running == 3 && i + 1 < edges.size()) sum += edges[i + 1].time - edges[i].time;
    }
    return sum;
}

}  // namespace lostflops::trace::detail
