// nccl-tests output as people paste it (src/calibrate/nccl_tests_format.h
// clean_nccl_text, columns_from_row, ranks_hint): mpirun --tag-output and
// srun --label prefixes, "[N]" rank tags, Markdown quoting, two outputs side
// by side, rows without a header, --ranks for excerpts. Snippets written for
// these tests in nccl-tests 2.x's layout (the real outputs of
// ../shared/realworld/nccl/: nccl_realworld_test.cpp).
#include <sstream>

#include <gtest/gtest.h>

#include "calibrate/nccl_tests_format.h"
#include "lostflops/error.h"
#include "lostflops/nccl_tests.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

const std::string kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
// 4 ranks: busbw / algbw = 2 x 3 / 4 = 1.5 for all-reduce.
const std::string kRows =
    "     1048576        262144     float     sum      -1    100.0   10.49   15.73      0    100.0   10.49   15.73      0\n"
    "     2097152        524288     float     sum      -1    150.0   13.98   20.97      0    150.0   13.98   20.97      0\n";

TEST(NcclFormats, LauncherPrefixesAndTagsAreUndone) {
    const std::string tagged = "[1,0]<stdout>:# nThread 1 nGpus 1\n[1,1]<stderr>:some warning\n"
                               "[1,0]<stdout>:#  Rank  0 Group  0 Pid 1 on a device  0 [0x35] GPU\n"
                               "[1,0]<stdout>:     4      1     float     sum      -1[0]    6.3    0.00    0.00      0\n";
    const auto c = nccl_format::clean_nccl_text(tagged);
    EXPECT_EQ(c.text.find("<stdout>"), std::string::npos);
    EXPECT_EQ(c.text.find("some warning"), std::string::npos);
    EXPECT_NE(c.text.find("[0x35]"), std::string::npos);  // a bus id, not a rank tag
    EXPECT_NE(c.text.find("-1     6.3"), std::string::npos);
    EXPECT_EQ(c.lines, (std::vector<int>{1, 3, 4}));
    EXPECT_EQ(c.notes.size(), 3u);
    const auto labelled = nccl_format::clean_nccl_text("0: # nThread 1\n  > 12: " + kRows.substr(0, 20) + "\n");
    EXPECT_EQ(labelled.text.rfind("# nThread 1\n", 0), 0u);
}

TEST(NcclFormats, SideBySidePanesAndRowShapes) {
    std::string pasted;
    std::istringstream rows(kHeader + kRows);
    for (std::string l; std::getline(rows, l);) pasted += l + "  |  " + l + "\n";
    const auto c = nccl_format::clean_nccl_text(pasted);
    EXPECT_EQ(c.lines, (std::vector<int>{1, 2, 3, 4, 1, 1, 2, 3, 4}));
    const std::string first = kRows.substr(0, kRows.find('\n'));
    const auto t = nccl_format::split_ws(first);
    const auto cols = nccl_format::columns_from_row(t);
    ASSERT_TRUE(cols);
    EXPECT_EQ(cols->root, 4);
    EXPECT_EQ(cols->busbw, 7);
    const std::string old_row = "  1048576  262144  float  sum  100.0  10.49  15.73  0  100.0  10.49  15.73  0";
    const auto old = nccl_format::split_ws(old_row);
    EXPECT_EQ(nccl_format::columns_from_row(old)->busbw, 6);  // before the root column
    EXPECT_FALSE(nccl_format::columns_from_row(nccl_format::split_ws("1 2 3 4")));
}

TEST(NcclFormats, ExcerptsNeedRanksAndSayHowMany) {
    try {
        parse_nccl_tests_text(kRows, "excerpt");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("give --ranks N (the bandwidths say 4 for all_reduce"), std::string::npos)
            << e.what();
    }
    NcclTestsOptions o;
    o.ranks = 4;
    const auto r = parse_nccl_tests_text(kRows, "excerpt", o);
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].ranks, 4);
    EXPECT_EQ(r.runs[0].op, Collective::all_reduce);
    EXPECT_EQ(r.runs[0].points.size(), 2u);
    // Only the units line of the header kept, pasted indented in Markdown.
    const auto units = parse_nccl_tests_text("    ```\n    " + kHeader.substr(kHeader.find('\n') + 1) + "    " + kRows + "    ```\n",
                                             "md", o);
    EXPECT_EQ(units.runs.at(0).points.size(), 2u);
}

}  // namespace
}  // namespace lostflops::test
