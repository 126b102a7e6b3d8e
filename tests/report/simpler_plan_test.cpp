// search's "simpler, within 1 % of the best" line (report/runner_up.h): of the
// plans within kSimplerWithin of the best's step time, the one with the
// fewest pipeline chunks, then the smallest cp, tp, ep; none when no plan
// within reach is simpler.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/search.h"
#include "report/runner_up.h"

namespace lostflops {
namespace {

PlanScore score(int tp, int cp, int pp, int vpp, double step_s) {
    PlanScore s;
    s.plan.tp = tp;
    s.plan.cp = cp;
    s.plan.pp = pp;
    s.plan.vpp = vpp;
    s.plan.ep = 1;
    s.step_time_s = step_s;
    s.tokens_per_s_per_gpu = 1000.0 / step_s;
    s.peak_bytes = 10.0 * 1024 * 1024 * 1024 * pp;
    return s;
}

TEST(SimplerPlan, TheSimplestWithinReachIsNamed) {
    const PlanScore best = score(8, 1, 4, 2, 10.0);
    const std::vector<RankedScore> candidates = {
        {2, score(8, 1, 2, 1, 10.01)},   // simpler, within 1 %
        {3, score(4, 1, 1, 1, 10.2)},    // simplest, 2 % slower: out of reach
        {5, score(8, 2, 1, 1, 10.08)},   // pp 1, within reach, but cp 2
        {6, score(8, 1, 1, 1, 10.09)}};  // pp 1 cp 1: the simplest within reach
    const std::string line = simpler_line(best, candidates);
    EXPECT_NE(line.find("#6 tp 8 cp 1 pp 1 ep 1 vpp 1"), std::string::npos) << line;
    EXPECT_NE(line.find("-0.9 % tokens/s"), std::string::npos) << line;
    EXPECT_NE(line.find("peak 10.0 vs 40.0 GiB"), std::string::npos) << line;
}

TEST(SimplerPlan, NoneWhenNothingWithinReachIsSimpler) {
    const PlanScore best = score(2, 1, 1, 1, 10.0);
    EXPECT_EQ(simpler_line(best, {{2, score(4, 1, 1, 1, 10.0)}, {3, score(1, 1, 1, 1, 10.5)}}), "");
    EXPECT_EQ(simpler_line(best, {}), "");
}

// Ranked by memory the reach is the best's peak: a faster plan holding far
// more is no near alternative (it read "within 1 % of the best: ..., +35.5 %
// tokens/s per GPU; peak 57.7 vs 41.5 GiB" in search --by memory).
TEST(SimplerPlan, RankedByMemoryTheReachIsThePeak) {
    PlanScore best = score(8, 1, 4, 2, 10.0);  // 40 GiB
    PlanScore faster = score(8, 1, 1, 1, 5.0);  // twice as fast; its peak set below
    faster.peak_bytes = 1.4 * best.peak_bytes;
    PlanScore near = score(8, 2, 1, 1, 12.0);
    near.peak_bytes = 1.005 * best.peak_bytes;
    EXPECT_EQ(simpler_line(best, {{2, faster}}, RankBy::memory), "");
    const std::string line = simpler_line(best, {{2, faster}, {3, near}}, RankBy::memory);
    EXPECT_NE(line.find("simpler, within 1 % of the best's peak: #3 tp 8 cp 2 pp 1"), std::string::npos) << line;
    // By throughput the faster one is the line, as before.
    EXPECT_NE(simpler_line(best, {{2, faster}}).find("#2 tp 8 cp 1 pp 1"), std::string::npos);
}

}  // namespace
}  // namespace lostflops
