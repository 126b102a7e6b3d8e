// Per-step skew of collective start times across ranks (definitions in
// include/lostflops/trace.h, StepSkew): for each ProfilerStep number found on
// two or more ranks, the ranks' first communication kernel starts of that
// step; the spread between the latest and the earliest is the time the early
// ranks' collective waits for the late one (a collective completes only when
// every rank has joined; HTA's straggler analysis reads late collective
// starts the same way, hta/analyzers/straggler.py).
#include <map>

#include "lostflops/trace.h"

namespace lostflops::trace {

std::vector<StepSkew> collective_skew(const std::vector<RankReport>& ranks) {
    struct Acc {
        StepSkew s;
        double earliest = 0, latest = 0;
    };
    std::map<int64_t, Acc> by_step;
    for (const auto& r : ranks) {
        for (const auto& it : r.iterations) {
            if (!it.first_comm_start_us) continue;
            const double t = *it.first_comm_start_us;
            Acc& a = by_step[it.number];
            if (a.s.ranks == 0 || t < a.earliest) {
                a.earliest = t;
                a.s.earliest_rank = r.rank;
            }
            if (a.s.ranks == 0 || t > a.latest) {
                a.latest = t;
                a.s.latest_rank = r.rank;
            }
            a.s.step = it.number;
            ++a.s.ranks;
        }
    }
    std::vector<StepSkew> out;
    for (auto& [_, a] : by_step) {
        if (a.s.ranks < 2) continue;
        a.s.skew_us = a.latest - a.earliest;
        out.push_back(a.s);
    }
    return out;
}

}  // namespace lostflops::trace
