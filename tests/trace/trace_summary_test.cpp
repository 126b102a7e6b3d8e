// Per-rank summaries, their merge, and stragglers.
#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_cluster.h"
#include "lostflops/trace_summary.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

RankReport rank_of(int rank, double compute_us, double idle_us) {
    const std::vector<test::Ev> ev = {{"sgemm", "kernel", 0, compute_us, 7, 1},
                                      {"ncclKernel_AllReduce", "kernel", compute_us + idle_us, 50, 20, 2}};
    return analyze(read_trace_bytes(test::make_trace(ev, rank), "rank" + std::to_string(rank)));
}

TEST(TraceSummary, RoundTripsAndMerges) {
    const std::vector<RankReport> a = {rank_of(0, 100, 10), rank_of(2, 110, 10)};
    const std::vector<RankReport> b = {rank_of(1, 300, 30)};
    const auto back_a = summary_from_json(summary_to_json(a), "a.json");
    const auto back_b = summary_from_json(summary_to_json(b), "b.json");
    ASSERT_EQ(back_a.size(), 2u);
    EXPECT_DOUBLE_EQ(back_a[1].compute_us, a[1].compute_us);
    EXPECT_DOUBLE_EQ(back_a[0].kernel_span_us, a[0].kernel_span_us);
    EXPECT_EQ(back_a[0].categories.size(), a[0].categories.size());
    const auto merged = merge_summaries({back_a, back_b});
    ASSERT_EQ(merged.size(), 3u);
    EXPECT_EQ(merged[0].rank, 0);
    EXPECT_EQ(merged[1].rank, 1);
    EXPECT_EQ(merged[2].rank, 2);
    // Rank 1 computes three times as long as the others: the one that holds them back, in gemm.
    const auto c = cluster_report(merged);
    ASSERT_FALSE(c.slow_ranks.empty());
    EXPECT_EQ(c.slow_ranks.front().rank, 1);
    EXPECT_EQ(c.slow_ranks.front().phase, "gemm");
    // The same rank twice is an error.
    EXPECT_THROW(merge_summaries({back_a, back_a}), InputError);
}

TEST(TraceSummary, BadSummariesAreInputErrors) {
    EXPECT_THROW(summary_from_json("not json", "x"), InputError);
    EXPECT_THROW(summary_from_json("{\"format\": \"other\"}", "x"), InputError);
    EXPECT_THROW(summary_from_json(
                     "{\"format\": \"lostflops-trace-summary\", \"version\": 1, \"ranks\": [{\"rank\": 0}]}", "x"),
                 InputError);
}

// A category's, top kernel's or collective's time is the sum of its kernels
// or calls, each at most an hour (trace_read.h kMaxEventDurUs): a summary
// edited to 1e308 us was merged, and `trace merge`'s table printed a 300-digit
// time and "inf%". Found by mutating --summary-out files.
TEST(TraceSummary, ASummedTimePastAnHourPerKernelIsRefused) {
    const std::string good = summary_to_json({rank_of(0, 100, 10)});
    EXPECT_EQ(summary_from_json(good, "good.json").size(), 1u);
    const std::string key = "\"time_us\": ";
    const size_t at = good.find(key, good.find("\"categories\"")) + key.size();
    for (const char* bad : {"1e308", "-1e308"}) {
        const std::string s = good.substr(0, at) + bad + good.substr(good.find_first_of(",}", at));
        try {
            (void)summary_from_json(s, "edited.json");
            ADD_FAILURE() << "accepted " << bad;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("categories[0].time_us"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("more than an hour each"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace lostflops::trace
