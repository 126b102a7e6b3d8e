// nccl-tests outputs as people posted them (../shared/realworld/nccl/,
// skipped, saying so, when the folder is absent): each file parses to the
// curve its text shows (collective, ranks from the rank lines or nGpus,
// scope from the host count, sizes), or is refused with a message that says
// what is missing (--ranks for excerpts without rank lines, with the count
// the bandwidths imply; bandwidth for a run cut after latency-only rows) and,
// given that, parses. Then snippets of our own for the two refusals and
// notes added for these files: a run whose busbw prints 0.00 at every size,
// and the rows of two processes' sweeps interleaved.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/nccl_tests.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

struct Expected {
    const char* file;
    std::optional<int> needs_ranks;  // refused without --ranks; the value the message suggests (0: none)
    const char* refusal;             // or refused outright, with this in the message
    int runs, ranks, points;         // what it parses to (with needs_ranks given)
    LinkScope scope;
};

// What each file shows (read by hand; docs/published-ranks.md lists the same).
const Expected kFiles[] = {
    {"aws_efa_t4_2node_tagged.txt", std::nullopt, nullptr, 1, 2, 29, LinkScope::inter_node},
    {"aws_efa_t4_2node_tagged_stripped.txt", std::nullopt, nullptr, 1, 2, 29, LinkScope::inter_node},
    {"dgxspark103_gb10_2node.txt", std::nullopt, nullptr, 1, 2, 4, LinkScope::inter_node},
    {"h100_8gpu_dedented.txt", std::nullopt, nullptr, 1, 8, 4, LinkScope::intra_node},
    {"h100_8gpu_indented.txt", std::nullopt, nullptr, 1, 8, 4, LinkScope::intra_node},
    {"hpcai21_allreduce.txt", 16, nullptr, 1, 16, 9, LinkScope::intra_node},
    {"k8s_h100_2node.txt", std::nullopt, nullptr, 1, 16, 5, LinkScope::inter_node},
    {"mooncake3484_rows.txt", 8, nullptr, 1, 8, 11, LinkScope::intra_node},
    {"nccl1453_tagged.txt", 24, nullptr, 1, 24, 10, LinkScope::intra_node},
    // busbw 0.00-0.02 GB/s: too few digits to imply a count; read with 2,
    // the interleaved sweeps give 8 sizes.
    {"nccltests182_interleaved.txt", 0, nullptr, 1, 2, 8, LinkScope::intra_node},
    {"rccl1352_sidebyside.txt", 8, nullptr, 2, 8, 2, LinkScope::intra_node},
    {"rccl2078_tail.txt", 16, nullptr, 1, 16, 4, LinkScope::intra_node},
    {"rtx4090_nccl1530_tree.txt", std::nullopt, "busbw prints 0.00 GB/s at every size", 0, 0, 0, LinkScope::intra_node},
    {"rtx5090_tagoutput.txt", std::nullopt, nullptr, 1, 2, 8, LinkScope::intra_node},
    {"rtx5090_tagoutput_stripped.txt", std::nullopt, nullptr, 1, 2, 8, LinkScope::intra_node},
};

std::string refusal(const std::string& path, const NcclTestsOptions& o = {}) {
    try {
        read_nccl_tests(path, o);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(NcclRealWorld, EachFileParsesToWhatItShowsOrSaysWhatIsMissing) {
    const std::filesystem::path dir = source_path("../shared/realworld/nccl");
    if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " is absent: the real nccl-tests outputs are not tested";
    int listed = 0;
    for (const Expected& x : kFiles) {
        const std::string path = (dir / x.file).string();
        if (!std::filesystem::exists(path)) continue;  // a folder of another date
        ++listed;
        SCOPED_TRACE(x.file);
        NcclTestsOptions o;
        if (x.refusal) {
            const std::string what = refusal(path);
            EXPECT_NE(what.find(x.refusal), std::string::npos) << what;
            EXPECT_NE(what.find(x.file), std::string::npos) << what;
            continue;
        }
        if (x.needs_ranks) {
            const std::string what = refusal(path);
            EXPECT_NE(what.find(std::string(x.file) + ": line "), std::string::npos) << what;
            EXPECT_NE(what.find("give --ranks N"), std::string::npos) << what;
            if (*x.needs_ranks > 0) {
                EXPECT_NE(what.find("the bandwidths say " + std::to_string(*x.needs_ranks) + " "), std::string::npos)
                    << what;
            } else {
                EXPECT_EQ(what.find("the bandwidths say"), std::string::npos) << what;
            }
            o.ranks = x.ranks;
        }
        const NcclTestsResult r = read_nccl_tests(path, o);
        ASSERT_EQ(static_cast<int>(r.runs.size()), x.runs);
        for (const NcclTestsRun& run : r.runs) {
            EXPECT_EQ(run.op, Collective::all_reduce);  // every file here is all_reduce_perf
            EXPECT_EQ(run.ranks, x.ranks);
            EXPECT_EQ(run.scope, x.scope);
            EXPECT_EQ(static_cast<int>(run.points.size()), x.points);
            for (const BusBwPoint& p : run.points) EXPECT_GT(p.busbw_GBps, 0);
        }
    }
    EXPECT_GE(listed, 10);
    // A file added later: it parses, or says what is missing.
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        const std::string name = e.path().filename().string();
        if (std::any_of(std::begin(kFiles), std::end(kFiles), [&](const Expected& x) { return name == x.file; }))
            continue;
        SCOPED_TRACE(name);
        const std::string what = refusal(e.path().string());
        if (what.empty()) continue;
        EXPECT_NE(what.find(name), std::string::npos) << what;
        EXPECT_TRUE(what.find("give --ranks N") != std::string::npos || what.find("no usable") != std::string::npos)
            << what;
    }
}

const std::string kHeader =
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";

TEST(NcclRealWorld, LatencyOnlyRowsAreRefusedSayingSo) {
    // The first rows of a sweep, cut there: 8 and 16 bytes, busbw 0.00.
    const std::string cut = kHeader +
                            "           8             2     float     sum      -1    42.56    0.00    0.00      0\n"
                            "          16             4     float     sum      -1    42.80    0.00    0.00      0\n";
    try {
        parse_nccl_tests_text(cut, "cut.txt");
        FAIL() << "a latency-only run parsed";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("cut.txt"), std::string::npos) << what;
        EXPECT_NE(what.find("busbw prints 0.00 GB/s at every size (up to 16 B)"), std::string::npos) << what;
    }
    // One row that shows a bandwidth is a run (nccl-tests -b 8G -e 8G).
    const std::string one = kHeader +
                            "  8589934592    2147483648     float     sum      -1    44734  192.02  336.04      0\n";
    const auto r = parse_nccl_tests_text(one, "one.txt");
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].points.size(), 1u);
}

TEST(NcclRealWorld, InterleavedSweepsAreOneRunAndSaidSo) {
    // Two processes' sweeps, their lines mixed: the sizes start over twice.
    const std::string mixed = kHeader +
                              "     1048576        262144     float     sum      -1    100.0   10.49   18.35      0\n"
                              "     2097152        524288     float     sum      -1    150.0   13.98   24.47      0\n"
                              "     1048576        262144     float     sum      -1    101.0   10.38   18.17      0\n"
                              "     4194304       1048576     float     sum      -1    250.0   16.78   29.36      0\n"
                              "     2097152        524288     float     sum      -1    151.0   13.89   24.31      0\n";
    const auto r = parse_nccl_tests_text(mixed, "mixed.txt");
    ASSERT_EQ(r.runs.size(), 1u);
    ASSERT_EQ(r.runs[0].points.size(), 3u);
    EXPECT_DOUBLE_EQ(r.runs[0].points[0].time_us, 100.0);  // the first row of each size
    EXPECT_DOUBLE_EQ(r.runs[0].points[1].time_us, 150.0);
    bool said = false;
    for (const auto& w : r.warnings) {
        if (w.find("mixed.txt: line 6: the sizes start over 2 time(s)") != std::string::npos) said = true;
        EXPECT_EQ(w.find("several types, reduction ops or cycles"), std::string::npos) << w;
    }
    EXPECT_TRUE(said);
}

}  // namespace
}  // namespace lostflops::test
