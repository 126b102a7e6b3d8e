// Issue 20 items 10 and 11 on the nccl-tests reader: rows whose data check
// failed (#wrong > 0) were taken as measurements, and output whose every row
// has a time <= 0 was reported as lacking a header; and (2026-12-06) ranks
// spread unevenly over hosts recorded as an even layout.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/nccl_tests.h"

namespace lostflops {
namespace {

std::string output(const std::string& wrong_a, const std::string& time_b) {
    return "# Collective test starting: all_reduce_perf\n"
           "# nThread 1 nGpus 8 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20\n"
           "#  Rank  0 Group  0 Pid 1 on host1 device  0 [0x07] NVIDIA H100\n"
           "#  Rank  1 Group  0 Pid 1 on host1 device  1 [0x08] NVIDIA H100\n"
           "#       size   count   type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong\n"
           "#        (B) (elements)                    (us)  (GB/s) (GB/s)         (us) (GB/s) (GB/s)\n"
           "         512     128  float    sum    -1  20.00   0.03   0.04  " + wrong_a + "  20.00   0.03   0.04  0\n"
           "        1024     256  float    sum    -1  " + time_b + "   0.05   0.07  0  21.00   0.05   0.07  N/A\n"
           "# Avg bus bandwidth    : 0.05\n";
}

std::string error_of(const std::string& text) {
    try {
        parse_nccl_tests_text(text, "nccl.txt", {});
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(NcclHostile, WrongResultsAreAnError) {
    EXPECT_EQ(error_of(output("0", "21.00")), "");
    const std::string e = error_of(output("5", "21.00"));
    EXPECT_NE(e.find("nccl.txt: line 7: #wrong is 5"), std::string::npos) << e;
}

TEST(NcclHostile, NoTimeAboveZeroSaysSo) {
    std::string text = output("0", "0.00");
    text.replace(text.find("20.00   0.03"), 5, "-1.00");
    const std::string e = error_of(text);
    EXPECT_NE(e.find("time <= 0"), std::string::npos) << e;
    EXPECT_EQ(e.find("expected a '#  size"), std::string::npos) << e;
}

// Twelve ranks, eight on one host and four on another, were recorded as 2
// nodes of 6 ranks; a rank line given twice counted once without a word.
TEST(NcclHostile, RanksSpreadUnevenlyOverHostsRecordNoLayout) {
    const auto text = [](const std::string& ranks) {
        return "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1 minBytes 8 maxBytes 1024\n" + ranks +
               "#       size   count   type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong\n"
               "#        (B) (elements)                    (us)  (GB/s) (GB/s)         (us) (GB/s) (GB/s)\n"
               "        1024     256  float    sum    -1  20.00   0.05   0.07  0  21.00   0.05   0.07  0\n"
               "# Avg bus bandwidth    : 0.07\n";
    };
    const auto lines = [](int from, int to, const std::string& host) {
        std::string s;
        for (int r = from; r < to; ++r)
            s += "#  Rank " + std::to_string(r) + " Group  0 Pid 1 on " + host + " device  0 [0x07] NVIDIA H100\n";
        return s;
    };
    const auto uneven = parse_nccl_tests_text(text(lines(0, 8, "a") + lines(8, 12, "b")), "nccl.txt", {});
    ASSERT_EQ(uneven.runs.size(), 1u);
    EXPECT_EQ(uneven.runs[0].ranks, 12);
    EXPECT_TRUE(uneven.runs[0].uneven_hosts);
    ASSERT_FALSE(uneven.warnings.empty());
    EXPECT_NE(uneven.warnings[0].find("ranks spread unevenly over the hosts (8 on a, 4 on b)"), std::string::npos)
        << uneven.warnings[0];
    std::vector<std::string> warnings;
    const auto curves = curves_from_runs(uneven.runs, warnings);
    ASSERT_EQ(curves.size(), 1u);
    EXPECT_EQ(curves[0].ranks_per_node, 0);
    EXPECT_EQ(curves[0].nodes, 0);
    // Even: 2 nodes of 6.
    const auto even = parse_nccl_tests_text(text(lines(0, 6, "a") + lines(6, 12, "b")), "nccl.txt", {});
    EXPECT_TRUE(even.warnings.empty()) << even.warnings[0];
    const auto even_curves = curves_from_runs(even.runs, warnings);
    ASSERT_EQ(even_curves.size(), 1u);
    EXPECT_EQ(even_curves[0].ranks_per_node, 6);
    EXPECT_EQ(even_curves[0].nodes, 2);
    // Rank 1 twice: counted once, said.
    const auto twice = parse_nccl_tests_text(text(lines(0, 2, "a") + lines(1, 2, "a")), "nccl.txt", {});
    EXPECT_EQ(twice.runs[0].ranks, 2);
    ASSERT_FALSE(twice.warnings.empty());
    EXPECT_NE(twice.warnings[0].find("rank 1 has two rank lines"), std::string::npos) << twice.warnings[0];
}

}  // namespace
}  // namespace lostflops
