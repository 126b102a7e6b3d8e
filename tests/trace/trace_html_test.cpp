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

}  // namespace
}  // namespace lostflops
