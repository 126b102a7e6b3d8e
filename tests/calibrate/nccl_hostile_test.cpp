// Issue 20 items 10 and 11 on the nccl-tests reader: rows whose data check
// failed (#wrong > 0) were taken as measurements, and output whose every row
// has a time <= 0 was reported as lacking a header.
#include <string>

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

}  // namespace
}  // namespace lostflops
