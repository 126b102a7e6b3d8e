// The report's memory over the step with a trace's measured memory over it
// (`report --trace`, explain/measured_memory.cpp): the measured allocated and
// reserved series in the SVG with their legend, cut to the ProfilerStep of
// the allocated peak; the measured-against-predicted table; exit 2 on a trace
// without [memory] events; and the two shared H200 memory traces with their
// job files (skipped when ../shared is absent).
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "explain/charts.h"
#include "explain/report_data.h"
#include "lostflops/error.h"
#include "lostflops/explain.h"
#include "lostflops/trace.h"
#include "test_util.h"

namespace lostflops {
namespace {

using test::svg_element;

std::vector<trace::RankReport> ranks_of(const std::string& path) {
    std::vector<trace::RankReport> out;
    for (const auto& d : trace::split_ranks(trace::read_trace(path))) out.push_back(trace::analyze(d));
    return out;
}

std::string small_trace() { return test::source_path("tests/data/trace/memory-small.json"); }

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// tests/data/trace/memory-small.json: ProfilerStep#5 from 1000 to 2000 us;
// the CUDA totals (allocated, reserved) 1000/2048 at 1050, 5000/8192 at 1130,
// 9000/16384 at 1550, 3000/20480 at 1700, 100/20480 at 1900.
TEST(ReportMeasuredMemory, TimelineOfThePeaksStepFromItsStart) {
    const MeasuredMemory m = measured_memory(ranks_of(small_trace()));
    ASSERT_FALSE(m.empty());
    EXPECT_EQ(m.step, 5);
    EXPECT_DOUBLE_EQ(m.step_s, 1000e-6);
    EXPECT_EQ(m.peak_allocated_bytes, 9000);
    EXPECT_EQ(m.peak_reserved_bytes, 20480);
    ASSERT_EQ(m.allocated.size(), m.reserved.size());
    ASSERT_FALSE(m.allocated.empty());
    EXPECT_NEAR(m.allocated.front().first, 50e-6, 1e-12);  // 1050 us, 50 us into the step
    EXPECT_EQ(m.allocated.front().second, 1000);
    double alloc = 0, resv = 0;
    for (std::size_t i = 0; i < m.allocated.size(); ++i) {
        alloc = std::max(alloc, m.allocated[i].second);
        resv = std::max(resv, m.reserved[i].second);
        EXPECT_GE(m.allocated[i].first, 0);
        EXPECT_LE(m.allocated[i].first, m.step_s);
    }
    EXPECT_EQ(alloc, 9000);
    EXPECT_EQ(resv, 20480);
    EXPECT_TRUE(measured_memory({}).empty());
}

TEST(ReportMeasuredMemory, SvgDrawsBothMeasuredSeriesWithALegend) {
    MeasuredMemory m;
    m.allocated = {{0.0, 1e9}, {0.5, 3e9}, {1.0, 2e9}};
    m.reserved = {{0.0, 2e9}, {0.5, 4e9}, {1.0, 4e9}};
    m.peak_allocated_bytes = 3e9;
    m.peak_reserved_bytes = 4e9;
    m.source = "t.json";
    m.step = 3;
    const std::vector<MemoryCurve> curves = {{0, {{0.0, 1e9}, {1.0, 2.5e9}}, 2.5e9}};
    const std::string svg = memory_time_svg(curves, 10e9, 1.0, m);
    EXPECT_EQ(test::count_of(svg, "<polyline"), 3u);
    EXPECT_EQ(test::count_of(svg, "class=\"memmeasured\""), 1u);
    EXPECT_EQ(test::count_of(svg, "class=\"memmeasuredresv\""), 1u);
    EXPECT_NE(svg.find("measured alloc."), std::string::npos);
    EXPECT_NE(svg.find("measured reserved"), std::string::npos);
    EXPECT_NE(svg.find("peak 2.79 GiB"), std::string::npos);  // 3e9 B, the allocated key's tip
    EXPECT_NE(svg.find("ProfilerStep#3"), std::string::npos);
    // Without a measurement: the predicted line alone.
    const std::string plain = memory_time_svg(curves, 10e9, 1.0);
    EXPECT_EQ(test::count_of(plain, "<polyline"), 1u);
    EXPECT_EQ(plain.find("measured"), std::string::npos);
}

TEST(ReportMeasuredMemory, HtmlReportDrawsTheTraceAndRefusesOneWithoutMemory) {
    const Calibration cal = default_calibration();
    const JobSource job{test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-autocast.yaml"), {}};
    const std::string html = html_report(job, cal, {}, {}, ranks_of(small_trace()));
    const std::string svg = svg_element(html, "chart-memory-time");
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(test::count_of(svg, "class=\"memmeasured\""), 1u);
    EXPECT_EQ(test::count_of(svg, "class=\"memmeasuredresv\""), 1u);
    EXPECT_NE(html.find("Measured (rank 0 of "), std::string::npos);  // the table beside it
    EXPECT_EQ(svg_element(html_report(job, cal), "chart-memory-time").find("measured"), std::string::npos);
    // A trace without [memory] events: an InputError naming it.
    const std::string plain = ::testing::TempDir() + "lostflops-report-memory-plain.json";
    std::ofstream(plain) << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0,
        "tid": 7, "ts": 1, "dur": 2, "args": {"device": 0, "stream": 7}}]})";
    EXPECT_THROW(html_report(job, cal, {}, {}, ranks_of(plain)), InputError);
    std::filesystem::remove(plain);
}

TEST(ReportMeasuredMemory, CliTraceOptionAndExitCodes) {
    const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "lostflops-report-memory-test";
    std::filesystem::create_directories(dir);
    const std::string out = (dir / "r.html").string();
    const std::string job = test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-autocast.yaml");
    const auto r = test::run_cli("report " + job + " --trace " + small_trace() + " -o " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(svg_element(read(out), "chart-memory-time").find("class=\"memmeasured\""), std::string::npos);
    const std::string empty = (dir / "no-memory.json").string();  // a kernel, no [memory] event
    std::ofstream(empty) << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0,
        "tid": 7, "ts": 1, "dur": 2, "args": {"device": 0, "stream": 7}}]})";
    const auto bad = test::run_cli("report " + job + " --trace " + empty + " -o " + out);
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("profile_memory=True"), std::string::npos) << bad.err;
    EXPECT_EQ(test::run_cli("report " + job + " --trace /nonexistent/t.json -o " + out).code, 2);
    EXPECT_EQ(test::run_cli("report " + job + " --trace " + out + " -o " + out).code, 2);  // output = input
    std::filesystem::remove_all(dir);
}

// The shared H200 memory traces with their runs' job files: both series drawn,
// the table's measured peaks the trace's.
TEST(ReportMeasuredMemory, SharedH200TracesOverTheirJobs) {
    const struct {
        const char *trace, *job;
    } runs[] = {{"h200-llama3.2-1b-s4096-b2-autocast-memory.json.gz", "job-h200-llama3.2-1b-s4096-b2-autocast.yaml"},
                {"h200-llama3.2-3b-s8192-b2-fsdp2-memory.json.gz", "job-h200-llama3.2-3b-s8192-b2-fsdp2.yaml"}};
    for (const auto& run : runs) {
        const std::string path = test::source_path(std::string("../shared/traces/h200/") + run.trace);
        if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent (kept outside the project)";
        SCOPED_TRACE(run.trace);
        const auto ranks = ranks_of(path);
        const MeasuredMemory m = measured_memory(ranks);
        ASSERT_FALSE(m.empty());
        EXPECT_EQ(m.peak_allocated_bytes, ranks.front().memory->peak_allocated_bytes);
        EXPECT_EQ(m.peak_reserved_bytes, ranks.front().memory->peak_reserved_bytes);
        EXPECT_EQ(m.step, 1);
        const JobSource job{test::source_path(std::string("tests/data/trace/") + run.job), {}};
        const std::string svg = svg_element(html_report(job, default_calibration(), {}, {}, ranks), "chart-memory-time");
        EXPECT_EQ(test::count_of(svg, "class=\"memmeasured\""), 1u);
        EXPECT_EQ(test::count_of(svg, "class=\"memmeasuredresv\""), 1u);
    }
}

}  // namespace
}  // namespace lostflops
