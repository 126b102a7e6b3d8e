// nccl-tests output reader: old and new layouts, ranks and scope from the
// rank lines, the collective from name/shape/--op, truncation and bad rows.
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/nccl_tests.h"

namespace lostflops {
namespace {

using test::calibrate_data;
using test::read_text;

// Printed out-of-place busbw of the row of `size` (column `col`), read here
// independently of the parser.
double printed_busbw(const std::string& text, double size, int col) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::vector<std::string> t;
        for (std::string w; ls >> w;) t.push_back(w);
        if (t.size() > static_cast<std::size_t>(col) && t[0] == std::to_string(static_cast<long long>(size)))
            return std::stod(t[col]);
    }
    ADD_FAILURE() << "no row of size " << size;
    return 0;
}

void expect_sorted_positive(const NcclTestsRun& run) {
    ASSERT_FALSE(run.points.empty());
    for (std::size_t i = 0; i < run.points.size(); ++i) {
        EXPECT_GT(run.points[i].busbw_GBps, 0);
        EXPECT_GT(run.points[i].time_us, 0);
        if (i) { EXPECT_GT(run.points[i].bytes, run.points[i - 1].bytes); }
    }
}

TEST(NcclTests, NewLayoutSingleNodeAllReduce) {
    const std::string path = calibrate_data("all_reduce_h100_8gpu_new.txt");
    NcclTestsResult r = read_nccl_tests(path);
    ASSERT_EQ(r.runs.size(), 1u);
    const NcclTestsRun& run = r.runs[0];
    EXPECT_EQ(run.test, "all_reduce_perf");
    EXPECT_EQ(run.op, Collective::all_reduce);
    EXPECT_EQ(run.ranks, 8);
    EXPECT_EQ(run.hosts, 1);
    EXPECT_EQ(run.scope, LinkScope::intra_node);
    EXPECT_EQ(run.device, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(run.points.size(), 28u);  // 8 B .. 1 GiB by factor 2
    EXPECT_EQ(run.points.front().bytes, 8);
    EXPECT_EQ(run.points.back().bytes, 1073741824);
    ASSERT_TRUE(run.avg_busbw_GBps);
    expect_sorted_positive(run);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
    // Recomputed busbw agrees with the printed column (tokens: size count
    // type redop root time algbw busbw -> index 7).
    const std::string text = read_text(path);
    for (double size : {1048576.0, 67108864.0, 1073741824.0}) {
        const BusBwCurve curve{run.op, run.scope, run.ranks, run.points};
        EXPECT_NEAR(curve_busbw_GBps(curve, size), printed_busbw(text, size, 7),
                    0.01 * printed_busbw(text, size, 7));
    }
}

TEST(NcclTests, NewLayoutTwoNodesAllGatherWithNoise) {
    NcclTestsResult r = read_nccl_tests(calibrate_data("all_gather_h100_2node_new.txt"));
    ASSERT_EQ(r.runs.size(), 1u);
    const NcclTestsRun& run = r.runs[0];
    EXPECT_EQ(run.op, Collective::all_gather);
    EXPECT_EQ(run.ranks, 16);
    EXPECT_EQ(run.hosts, 2);
    EXPECT_EQ(run.scope, LinkScope::inter_node);
    EXPECT_EQ(run.points.front().bytes, 1024);
    expect_sorted_positive(run);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(NcclTests, OldLayoutOpFromColumnShape) {
    const std::string path = calibrate_data("reduce_scatter_a100_8gpu_old.txt");
    NcclTestsResult r = read_nccl_tests(path);
    ASSERT_EQ(r.runs.size(), 1u);
    const NcclTestsRun& run = r.runs[0];
    EXPECT_EQ(run.test, "");
    EXPECT_EQ(run.op, Collective::reduce_scatter);  // redop sum + size = count*4*8
    EXPECT_EQ(run.ranks, 8);
    EXPECT_EQ(run.scope, LinkScope::intra_node);
    EXPECT_EQ(run.device, "A100-SXM4-40GB");
    expect_sorted_positive(run);
    // Old layout: size count type redop time algbw busbw -> index 6.
    const BusBwCurve curve{run.op, run.scope, run.ranks, run.points};
    const double printed = printed_busbw(read_text(path), 268435456, 6);
    EXPECT_NEAR(curve_busbw_GBps(curve, 268435456), printed, 0.01 * printed);
}

TEST(NcclTests, OldLayoutWithoutRedopNamedByEchoedCommand) {
    NcclTestsResult r = read_nccl_tests(calibrate_data("all_gather_a100_2node_old.txt"));
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].test, "all_gather_perf");
    EXPECT_EQ(r.runs[0].op, Collective::all_gather);
    EXPECT_EQ(r.runs[0].ranks, 16);
    EXPECT_EQ(r.runs[0].scope, LinkScope::inter_node);
    EXPECT_EQ(r.runs[0].points.size(), 17u);  // 4 KiB .. 256 MiB
}

std::string strip_lines_with(const std::string& text, const std::string& needle) {
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line))
        if (line.find(needle) == std::string::npos) out += line + "\n";
    return out;
}

TEST(NcclTests, AmbiguousRunNeedsOp) {
    // Without the echoed command, an old all-gather (no redop, per-rank count)
    // could also be an alltoall.
    const std::string text =
        strip_lines_with(read_text(calibrate_data("all_gather_a100_2node_old.txt")), "mpirun");
    try {
        parse_nccl_tests_text(text, "ag.txt");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("--op"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("all_to_all"), std::string::npos) << e.what();
    }
    NcclTestsOptions opt;
    opt.op = Collective::all_to_all;
    NcclTestsResult r = parse_nccl_tests_text(text, "ag.txt", opt);
    EXPECT_EQ(r.runs[0].op, Collective::all_to_all);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(NcclTests, OpContradictingTheShapeWarns) {
    NcclTestsOptions opt;
    opt.op = Collective::all_reduce;
    NcclTestsResult r = read_nccl_tests(calibrate_data("reduce_scatter_a100_8gpu_old.txt"), opt);
    EXPECT_EQ(r.runs[0].op, Collective::reduce_scatter);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("--op all_reduce ignored"), std::string::npos);
}

TEST(NcclTests, ScopeOptionOverridesHosts) {
    NcclTestsOptions opt;
    opt.scope = LinkScope::inter_node;
    NcclTestsResult r = read_nccl_tests(calibrate_data("all_reduce_h100_8gpu_new.txt"), opt);
    EXPECT_EQ(r.runs[0].scope, LinkScope::inter_node);
    EXPECT_FALSE(r.warnings.empty());
}

TEST(NcclTests, TruncatedOutputKeepsRowsAndWarns) {
    NcclTestsResult r = read_nccl_tests(calibrate_data("all_reduce_truncated.txt"));
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].points.back().bytes, 2097152);  // the 4 MiB row is cut short
    EXPECT_FALSE(r.runs[0].avg_busbw_GBps);
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_NE(r.warnings[0].find("incomplete"), std::string::npos);
    EXPECT_NE(r.warnings[1].find("trailer"), std::string::npos);
}

TEST(NcclTests, MalformedRowInTheMiddleIsAnErrorNamingTheLine) {
    std::string text = read_text(calibrate_data("all_reduce_h100_8gpu_new.txt"));
    const auto at = text.find("\n     1048576 ") + 1;
    ASSERT_GT(at, 0u);
    const auto line = 1 + std::count(text.begin(), text.begin() + at, '\n');
    const auto end = text.find('\n', at);
    text.replace(at, end - at, "     1048576       524288  bfloat16     sum      -1    24.30   oops");
    try {
        parse_nccl_tests_text(text, "bad.txt");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "bad.txt");
        EXPECT_EQ(e.key(), "line " + std::to_string(line));
    }
    text.replace(at, text.find('\n', at) - at,
                 "     1048576       524288  bfloat16     sum      -1    fast   1  2  0  1  1  1  0");
    EXPECT_THROW(parse_nccl_tests_text(text, "bad.txt"), InputError);
}

TEST(NcclTests, InputsWithoutResultsAreErrors) {
    EXPECT_THROW(parse_nccl_tests_text("", "e.txt"), InputError);
    EXPECT_THROW(parse_nccl_tests_text("hello\nworld\n", "e.txt"), InputError);
    EXPECT_THROW(parse_nccl_tests_text(std::string("\0\x01\x02\x03", 4), "b.bin"), InputError);
    // Rows but no rank lines and no nThread header: ranks unknown.
    const std::string no_ranks =
        "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
        "1024 256 float sum -1 10.0 0.10 0.18 0 10.0 0.10 0.18 0\n";
    EXPECT_THROW(parse_nccl_tests_text(no_ranks, "n.txt"), InputError);
    // With "# nThread 1 nGpus 4" one process drives 4 GPUs.
    NcclTestsResult r = parse_nccl_tests_text("# nThread 1 nGpus 4 minBytes 1024\n" + no_ranks, "n.txt");
    EXPECT_EQ(r.runs[0].ranks, 4);
    EXPECT_EQ(r.runs[0].op, Collective::all_reduce);  // redop sum, count*4 = size, ratio 1.8
    EXPECT_FALSE(r.warnings.empty());
    // Absurd thread/GPU counts are not taken as a rank count.
    EXPECT_THROW(parse_nccl_tests_text("# nThread 99999 nGpus 99999\n" + no_ranks, "n.txt"), InputError);
}

TEST(NcclTests, ARunOfMoreRowsThanAnySweepIsAnErrorNamingTheLine) {
    // 10,000 rows pass (and keep every distinct size); row 10,001 is refused.
    std::string text =
        "# nThread 1 nGpus 4\n"
        "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
    for (int i = 1; i <= 10'000; ++i)
        text += fmt::format("{} {} float sum -1 10.0 0.10 0.18 0 10.0 0.10 0.18 0\n", 16 * i, 4 * i);
    NcclTestsOptions op;
    op.op = Collective::all_reduce;
    const NcclTestsResult ok = parse_nccl_tests_text(text, "many.txt", op);
    ASSERT_EQ(ok.runs.size(), 1u);
    EXPECT_EQ(ok.runs[0].points.size(), 10'000u);
    std::vector<std::string> warnings;
    EXPECT_EQ(curves_from_runs(ok.runs, warnings).at(0).points.size(), 10'000u);
    text += "160016 40004 float sum -1 10.0 0.10 0.18 0 10.0 0.10 0.18 0\n";
    try {
        parse_nccl_tests_text(text, "many.txt", op);
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "line 10003");
        EXPECT_NE(e.message().find("10000 data rows"), std::string::npos) << e.what();
    }
}

TEST(NcclTests, ImplausibleRowsAreSkippedSoTheProfileReadsBack) {
    // A 1e-6 us time makes 1e9 GB/s: skipped with a warning, and the curves
    // written from the rest are a profile that `--calibration` accepts.
    const std::string text =
        "# nThread 1 nGpus 4\n"
        "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
        "1024 256 float sum -1 10.0 0.10 0.18 0 10.0 0.10 0.18 0\n"
        "2048 512 float sum -1 0.000001 1 1 0 0.000001 1 1 0\n"
        "4096 1024 float sum -1 12.0 0.34 0.51 0 12.0 0.34 0.51 0\n";
    NcclTestsOptions op;
    op.op = Collective::all_reduce;
    const NcclTestsResult r = parse_nccl_tests_text(text, "fast.txt", op);
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].points.size(), 2u);
    bool warned = false;
    for (const auto& w : r.warnings) warned |= w.find("skipped 1 row(s) beyond a plausible") != std::string::npos;
    EXPECT_TRUE(warned);
    std::vector<std::string> warnings;
    Calibration c;
    merge_curves(c, curves_from_runs(r.runs, warnings));
    EXPECT_NO_THROW(parse_calibration_text(calibration_to_yaml(c), "written.yaml"));
}

TEST(NcclTests, RootedTestsAreSkipped) {
    const std::string text =
        "# Collective test starting: broadcast_perf\n# nThread 1 nGpus 2\n"
        "#  Rank  0 Group  0 Pid 1 on h device  0 [0x07] GPU\n"
        "#  Rank  1 Group  0 Pid 2 on h device  1 [0x08] GPU\n"
        "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
        "1024 256 float none 0 10.0 0.10 0.10 0 10.0 0.10 0.10 0\n"
        "# Avg bus bandwidth : 0.1\n";
    EXPECT_THROW(parse_nccl_tests_text(text, "b.txt"), InputError);  // nothing usable left
    const std::string both = text + read_text(calibrate_data("all_reduce_h100_8gpu_new.txt"));
    NcclTestsResult r = parse_nccl_tests_text(both, "both.txt");
    ASSERT_EQ(r.runs.size(), 1u);
    EXPECT_EQ(r.runs[0].op, Collective::all_reduce);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("broadcast_perf"), std::string::npos);
}

TEST(NcclTests, RepeatedHeaderKeepsRanksAndName) {
    const std::string header =
        "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
    const std::string text =
        "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1\n"
        "#  Rank  0 Group  0 Pid 1 on h device  0 [0x07] GPU\n"
        "#  Rank  1 Group  0 Pid 2 on h device  1 [0x08] GPU\n" +
        header + "1024 256 float sum -1 10.0 0.10 0.10 0 10.0 0.10 0.10 0\n" + header +
        "2048 512 float sum -1 11.0 0.19 0.19 0 11.0 0.19 0.19 0\n# Avg bus bandwidth : 0.1\n";
    NcclTestsResult r = parse_nccl_tests_text(text, "rep.txt");
    ASSERT_EQ(r.runs.size(), 2u);
    EXPECT_EQ(r.runs[1].ranks, 2);
    EXPECT_EQ(r.runs[1].test, "all_reduce_perf");
    std::vector<std::string> warnings;
    auto curves = curves_from_runs(r.runs, warnings);
    ASSERT_EQ(curves.size(), 1u);
    EXPECT_EQ(curves[0].points.size(), 2u);
    // busbw = size / time * 2(n-1)/n = 2048 B / 11 us * 1 = 0.186182 GB/s.
    EXPECT_NEAR(curves[0].points[1].busbw_GBps, 2048.0 / 11e3, 1e-6);
}

TEST(NcclTests, ConcatenatedRunsBecomeCurves) {
    const std::string text = read_text(calibrate_data("all_reduce_h100_8gpu_new.txt")) +
                             read_text(calibrate_data("all_gather_h100_2node_new.txt")) +
                             read_text(calibrate_data("all_reduce_h100_8gpu_new.txt"));
    NcclTestsResult r = parse_nccl_tests_text(text, "cat.txt");
    ASSERT_EQ(r.runs.size(), 3u);
    std::vector<std::string> warnings;
    auto curves = curves_from_runs(r.runs, warnings);
    ASSERT_EQ(curves.size(), 2u);
    EXPECT_EQ(curves[0].op, Collective::all_reduce);
    EXPECT_EQ(curves[0].points.size(), 28u);
    EXPECT_EQ(curves[1].op, Collective::all_gather);
    EXPECT_EQ(curves[1].scope, LinkScope::inter_node);
    ASSERT_EQ(warnings.size(), 1u);  // the repeated all-reduce run

    Calibration cal;
    cal.nccl.push_back({Collective::all_reduce, LinkScope::intra_node, 8, {{1, 1, 1}}});
    cal.nccl.push_back({Collective::send_recv, LinkScope::inter_node, 2, {{1, 1, 1}}});
    merge_curves(cal, curves);
    ASSERT_EQ(cal.nccl.size(), 3u);
    EXPECT_EQ(cal.nccl[0].points.size(), 28u);  // replaced
    EXPECT_EQ(cal.nccl[1].op, Collective::send_recv);  // kept
}

}  // namespace
}  // namespace lostflops
