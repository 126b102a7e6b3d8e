// Collective start skew per process group and step (trace_cluster_skew.h;
// definitions in include/lostflops/trace_cluster.h). A collective completes
// only when its last member has joined, so its latest start holds every
// member back by (latest - next latest) and the group's skew is (latest -
// earliest) (HTA reads late collective starts the same way,
// hta/analyzers/straggler.py).
#include "trace/trace_cluster_skew.h"

#include <algorithm>
#include <map>

namespace lostflops::trace::detail {

void SkewAccumulator::add(const std::string& group, int64_t step, int rank, double start_us, bool first) {
    const auto [it, inserted] = group_ids_.try_emplace(group, static_cast<uint32_t>(group_names_.size()));
    if (inserted) group_names_.push_back(group);
    Acc& a = acc_[Key{it->second, step}];
    if (a.count == 0 || start_us < a.earliest) {
        a.earliest = start_us;
        a.earliest_rank = rank;
    }
    if (a.count == 0) {
        a.latest = a.second = start_us;
        a.latest_rank = rank;
        a.latest_first = first;
    } else if (start_us > a.latest) {
        a.second = a.latest;
        a.latest = start_us;
        a.latest_rank = rank;
        a.latest_first = first;
    } else if (a.count == 1 || start_us > a.second) {
        a.second = start_us;
    }
    ++a.count;
}

SkewAccumulator::Result SkewAccumulator::finish() const {
    Result out;
    const bool groups = any_process_group();
    struct PerGroup {
        std::vector<double> skews;
        std::map<int, int64_t> latest;  // rank -> steps it was last
        int64_t ranks = 0;
    };
    std::map<uint32_t, PerGroup> per;
    std::vector<std::pair<int64_t, StepSkew>> all;
    for (const auto& [k, a] : acc_) {
        if (a.count < 2) continue;
        if (k.group == 0) {
            StepSkew s;
            s.step = k.step;
            s.ranks = a.count;
            s.skew_us = a.latest - a.earliest;
            s.latest_rank = a.latest_rank;
            s.earliest_rank = a.earliest_rank;
            all.emplace_back(k.step, s);
        }
        if (groups != (k.group != 0)) continue;  // process groups when there are any, else all ranks
        PerGroup& g = per[k.group];
        g.skews.push_back(a.latest - a.earliest);
        ++g.latest[a.latest_rank];
        g.ranks = std::max(g.ranks, a.count);
        if (a.latest_first) out.late_us[a.latest_rank] += a.latest - a.second;
    }
    std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& [_, s] : all) out.steps.push_back(s);
    for (auto& [id, g] : per) {
        GroupSkew s;
        s.group = id == 0 ? "all ranks" : group_names_[id];
        s.ranks = g.ranks;
        s.steps = static_cast<int64_t>(g.skews.size());
        s.median_skew_us = median_of(g.skews);
        s.max_skew_us = *std::max_element(g.skews.begin(), g.skews.end());
        for (const auto& [rank, n] : g.latest) {
            if (n > s.latest_count) {
                s.latest_count = n;
                s.latest_rank = rank;
            }
        }
        out.groups.push_back(std::move(s));
    }
    std::stable_sort(out.groups.begin(), out.groups.end(), [](const GroupSkew& a, const GroupSkew& b) {
        return a.median_skew_us != b.median_skew_us ? a.median_skew_us > b.median_skew_us : a.group < b.group;
    });
    return out;
}

}  // namespace lostflops::trace::detail
