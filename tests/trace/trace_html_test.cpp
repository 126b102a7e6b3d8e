// The traces' HTML page (`trace --report`): self-contained, each chart an
// accessible SVG with a shape per rank, the walls chart only with --job.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "test_util.h"
#include "lostflops/explain.h"
#include "lostflops/trace.h"
#include "lostflops/trace_cluster.h"
#include "lostflops/trace_compare.h"
#include "trace/trace_test_util.h"

namespace lostflops {
namespace {

using test::svg_element;
size_t count(const std::string& s, const std::string& what) { return test::count_of(s, what); }

TEST(TraceHtmlReport, ChartsOfRanksStragglersAndWalls) {
    trace::SynthSpec spec;
    spec.ranks = 3;
    spec.slow_rank = 2;
    const trace::SynthJob job(spec);
    std::vector<trace::RankReport> ranks;
    for (int r = 0; r < 3; ++r) ranks.push_back(trace::analyze(trace::read_trace_bytes(job.trace(r), "r")));
    const auto cluster = trace::cluster_report(ranks);
    const std::string html = trace_html_report(trace::TraceReport{&ranks, &cluster, nullptr, nullptr});
    for (const char* id : {"chart-trace-ranks", "chart-trace-stragglers"}) {
        const std::string svg = svg_element(html, id);
        ASSERT_FALSE(svg.empty()) << id;
        EXPECT_GE(count(svg, "<rect"), ranks.size()) << id;
        EXPECT_NE(svg.find("role=\"img\""), std::string::npos);
    }
    EXPECT_EQ(svg_element(html, "chart-trace-walls"), "");  // only with a job
    EXPECT_EQ(html.find("<script"), std::string::npos);
    // With --job: the walls chart, one measured and one predicted bar per wall.
    const std::string dir = trace::test::temp_dir("trace_html");
    const auto files = trace::test::write_synth(spec, {0, 1}, dir);
    const std::string page_path = dir + "/report.html";
    const auto r = test::run_cli("trace " + files[0] + " --job " + trace::test::data_path("job-gpt3-125m-16xa100.yaml") +
                                 " --report " + page_path);
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream in(page_path);
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string walls = svg_element(page, "chart-trace-walls");
    ASSERT_FALSE(walls.empty());
    EXPECT_EQ(count(walls, "measured:"), 4u);
    EXPECT_EQ(count(walls, "predicted:"), 4u);
    EXPECT_EQ(test::run_cli("trace " + files[1] + " --report /nonexistent-dir/r.html").code, 2);
    std::filesystem::remove_all(dir);
}

// The page's "Measured against predicted" holds what the text's table does:
// the as-profiled column (it had only measured and predicted), the memory
// rows (absent), no measured MFU past the peak (printed as 250 %).
TEST(TraceHtmlReport, JobSectionHasTheTextsColumnsAndRows) {
    trace::SynthSpec spec;
    spec.ranks = 1;
    const trace::SynthJob synth(spec);
    const std::vector<trace::RankReport> ranks = {trace::analyze(trace::read_trace_bytes(synth.trace(0), "r"))};
    const auto cluster = trace::cluster_report(ranks);
    trace::JobComparison cmp;
    cmp.measured_step_s = 0.135;
    cmp.predicted_step_s = 0.099;
    cmp.measured_mfu = 2.5;
    cmp.predicted_mfu = 0.073;
    cmp.step_source = "ProfilerStep";
    cmp.walls = {{"compute (GEMM, attention)", 0.013, 0.0126, 0.0127}};
    cmp.memory = {{"peak reserved", 3 * 1073741824.0, 0, 2 * 1073741824.0, 2.5 * 1073741824.0}};
    cmp.profiler_host_s = 0.033;
    cmp.predicted_profiled_step_s = 0.132;
    cmp.predicted_profiled_mfu = 0.055;
    const std::string html = trace_html_report(trace::TraceReport{&ranks, &cluster, nullptr, &cmp});
    EXPECT_NE(html.find("<th scope=\"col\">as profiled s</th>"), std::string::npos);
    EXPECT_NE(html.find("<td>0.0126</td><td>0.0127</td>"), std::string::npos) << "the profiled wall";
    EXPECT_NE(html.find("predicted 0.132 s, MFU 5.5 %"), std::string::npos);
    EXPECT_NE(html.find("<td>peak reserved</td><td>0</td><td>3.00</td><td>2.00</td><td>2.50</td>"), std::string::npos)
        << "the memory row's as-profiled bytes";
    EXPECT_NE(html.find("<th scope=\"col\">as profiled GiB</th>"), std::string::npos);
    EXPECT_NE(html.find("MFU measured n/a"), std::string::npos);
    // Without the profiler's host events: no such column.
    cmp.profiler_host_s = 0;
    const std::string plain = trace_html_report(trace::TraceReport{&ranks, &cluster, nullptr, &cmp});
    EXPECT_EQ(plain.find("as profiled"), std::string::npos);
}

}  // namespace
}  // namespace lostflops
