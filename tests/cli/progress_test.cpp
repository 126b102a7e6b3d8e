// The progress line's text (cli/progress.h), held to strings computed by
// hand: the time left is elapsed x (1 - share) / share.
#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "cli/progress.h"

namespace lostflops::cli {
namespace {

TEST(ProgressLine, ShareAndTimeLeft) {
    EXPECT_EQ(progress_line("search", 0.5, 10), "search: 50 %, about 10 s left");
    EXPECT_EQ(progress_line("x", 0.25, 30), "x: 25 %, about 90 s left");      // 30 x 0.75 / 0.25
    EXPECT_EQ(progress_line("x", 0.1, 60), "x: 10 %, about 9 min left");      // 540 s
    EXPECT_EQ(progress_line("x", 1.0, 7), "x: 100 %, about 0 s left");
}

TEST(ProgressLine, UnknownShareGivesTheTimeElapsed) {
    EXPECT_EQ(progress_line("estimate: searching", -1, 12.4), "estimate: searching: 12 s");
    EXPECT_EQ(progress_line("x", 0, 3), "x: 3 s");
    EXPECT_EQ(progress_line("x", -1, 170), "x: 3 min");  // 2.83 min, no decimals
}

// A progress reporter that ends before its first line prints nothing.
TEST(Progress, ShortWorkPrintsNothing) {
    testing::internal::CaptureStderr();
    { Progress p("quick"); p.set(0.5); }
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Progress, QuietIsAGlobalFlag) {
    const auto r = test::run_cli("--quiet list frameworks");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace lostflops::cli
