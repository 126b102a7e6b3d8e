// Cross-rank skew of collective starts per step (trace.h StepSkew): the rule
// on hand-made ranks, and on the two real ranks of the sampled 128-rank job
// against the first communication kernel of each step found directly in
// their events; the starts survive the summary round trip.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>

#include "lostflops/trace.h"
#include "lostflops/trace_cluster.h"
#include "lostflops/trace_summary.h"
#include "lostflops/trace_report.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

RankReport rank_with(int rank, std::vector<std::pair<int64_t, std::optional<double>>> steps) {
    RankReport r;
    r.rank = rank;
    for (const auto& [n, t] : steps) {
        Iteration it;
        it.number = n;
        it.first_comm_start_us = t;
        r.iterations.push_back(it);
    }
    return r;
}

TEST(TraceSkew, LatestRankMakesTheOthersWait) {
    const auto c = cluster_report({rank_with(0, {{1, 100.0}, {2, 500.0}, {3, 900.0}}),
                                   rank_with(1, {{1, 130.0}, {2, 450.0}, {3, std::nullopt}}),
                                   rank_with(2, {{1, 110.0}, {2, 470.0}})});
    const auto& skew = c.step_skew;
    ASSERT_EQ(skew.size(), 2u);  // step 3 has one rank with communication
    EXPECT_EQ(skew[0].step, 1);
    EXPECT_EQ(skew[0].ranks, 3);
    EXPECT_DOUBLE_EQ(skew[0].skew_us, 30);
    EXPECT_EQ(skew[0].latest_rank, 1);
    EXPECT_EQ(skew[0].earliest_rank, 0);
    EXPECT_EQ(skew[1].latest_rank, 0);
    EXPECT_EQ(skew[1].earliest_rank, 1);
    EXPECT_DOUBLE_EQ(skew[1].skew_us, 50);
    // Without process groups the group is "all ranks"; each step's latest
    // holds the others back by its lead over the next latest: rank 1 by 20 us
    // in step 1 (130 - 110), rank 0 by 30 us in step 2 (500 - 470).
    ASSERT_EQ(c.groups.size(), 1u);
    EXPECT_EQ(c.groups[0].group, "all ranks");
    EXPECT_DOUBLE_EQ(c.groups[0].median_skew_us, 40);
    EXPECT_DOUBLE_EQ(c.rows[1].late_us, 20.0 / 3);  // over its 3 steps
    EXPECT_DOUBLE_EQ(c.rows[0].late_us, 30.0 / 3);
}

// The first communication kernel launched inside ProfilerStep#N, from the events.
double first_comm_start(const TraceData& d, int64_t step) {
    double from = 0, to = 0;
    for (const auto& s : d.steps) {
        if (s.on_cpu && s.number == step) { from = s.ts_us; to = s.ts_us + s.dur_us; }
    }
    double first = std::numeric_limits<double>::infinity();
    for (const auto& g : d.gpu) {
        const GpuLabel& l = d.label(g);
        if (l.kind != EventKind::kernel) continue;
        if (classify_kernel(d.names[l.name_id], l.kind, d.names[l.collective_id], false) != KernelCategory::communication) continue;
        double at = g.ts_us;
        for (const auto& c : d.cpu_launches) if (c.correlation == g.correlation) at = c.ts_us;
        if (at >= from && at < to) first = std::min(first, g.ts_us);
    }
    return first;
}

TEST(TraceSkew, RealRanksOfOneJob) {
    LOSTFLOPS_SHARED_TRACE(p0, "sampled-128rank.rank0.json.gz");
    LOSTFLOPS_SHARED_TRACE(p1, "sampled-128rank.rank1.json.gz");
    const auto d0 = read_trace(p0);
    const auto d1 = read_trace(p1);
    const std::vector<RankReport> ranks{analyze(d0), analyze(d1)};
    const auto skew = cluster_report(ranks).step_skew;
    ASSERT_EQ(skew.size(), 2u);
    for (const auto& x : skew) {
        SCOPED_TRACE(x.step);
        const double t0 = first_comm_start(d0, x.step), t1 = first_comm_start(d1, x.step);
        EXPECT_DOUBLE_EQ(x.skew_us, std::fabs(t1 - t0));
        EXPECT_EQ(x.latest_rank, t1 > t0 ? 1 : 0);
    }
    const auto j = nlohmann::json::parse(report_json(ranks));
    EXPECT_EQ(j["collective_skew"].size(), 2u);
    // Through summaries (trace merge) the same skew.
    const auto back = summary_from_json(summary_to_json(ranks), "s.json");
    const auto again = cluster_report(back).step_skew;
    ASSERT_EQ(again.size(), skew.size());
    EXPECT_DOUBLE_EQ(again[0].skew_us, skew[0].skew_us);
}

}  // namespace
}  // namespace lostflops::trace
