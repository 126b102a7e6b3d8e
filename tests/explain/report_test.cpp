// The HTML report: self-contained (no script, no external resource), each
// chart an accessible SVG with non-empty shapes, and the CLI's explain and
// report commands against estimate.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "explain/report_data.h"
#include "explain/svg.h"
#include "lostflops/explain.h"
#include "lostflops/job.h"
#include "lostflops/search.h"
#include "test_util.h"

namespace lostflops {
namespace {

const char* kCharts[] = {"chart-waterfall", "chart-roofline", "chart-timeline", "chart-memory"};

using test::svg_element;
size_t count(const std::string& s, const std::string& what) { return test::count_of(s, what); }

TEST(HtmlReport, EveryChartIsAnAccessibleNonEmptySvg) {
    for (const auto& src : {JobSource{}, JobSource{test::source_path("data/published/runs/megatron24-h100-gpt-70b.json"), {}},
                            JobSource{"", {"parallel.pp=1", "parallel.vpp=1", "parallel.dp=128"}}}) {
        const std::string html = html_report(src, default_calibration());
        for (const char* id : kCharts) {
            SCOPED_TRACE(id);
            const std::string svg = svg_element(html, id);
            ASSERT_FALSE(svg.empty());
            EXPECT_NE(svg.find("role=\"img\""), std::string::npos);
            EXPECT_NE(svg.find(std::string("aria-labelledby=\"") + id + "-title " + id + "-desc\""), std::string::npos);
            EXPECT_NE(svg.find(std::string("<title id=\"") + id + "-title\">"), std::string::npos);
            EXPECT_NE(svg.find(std::string("<desc id=\"") + id + "-desc\">"), std::string::npos);
            EXPECT_GE(count(svg, "<rect") + count(svg, "<circle"), 3u);
            EXPECT_EQ(svg.find("nan"), std::string::npos);
            EXPECT_EQ(svg.find("inf\""), std::string::npos);
            // No shape of negative size.
            EXPECT_EQ(svg.find("width=\"-"), std::string::npos);
            EXPECT_EQ(svg.find("height=\"-"), std::string::npos);
        }
        // Self-contained: no script, no fetched resource (the SVG namespace is a name, not a fetch).
        EXPECT_EQ(html.find("<script"), std::string::npos);
        EXPECT_EQ(html.find("<link"), std::string::npos);
        EXPECT_EQ(html.find("@import"), std::string::npos);
        EXPECT_EQ(html.find("url("), std::string::npos);
        EXPECT_EQ(count(html, "http://") + count(html, "https://"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
        EXPECT_NE(html.find("prefers-color-scheme: dark"), std::string::npos);
        EXPECT_NE(html.find("@media print"), std::string::npos);
        EXPECT_GE(count(html, "<table>"), 4u);  // a text alternative per chart
    }
}

// A plan that does not fit gets a red banner (and report exits 1, as
// estimate); the job's warnings get a section; a pp 1 step is not described
// as a pipeline that fills.
TEST(HtmlReport, BannerWarningsAndNoPipeline) {
    const std::string fits = html_report(JobSource{}, default_calibration());
    EXPECT_EQ(fits.find("class=\"banner bad\""), std::string::npos);
    const std::string oom = html_report(JobSource{"", {"parallel.tp=1", "parallel.pp=1", "parallel.vpp=1",
                                                       "parallel.dp=1024", "parallel.recompute=none"}},
                                        default_calibration());
    EXPECT_NE(oom.find("<div class=\"banner bad\" role=\"alert\">The plan does NOT fit"), std::string::npos);
    EXPECT_NE(oom.find("One pipeline stage (pp 1)"), std::string::npos);
    EXPECT_EQ(oom.find("the pipeline fills"), std::string::npos);
    // 81 layers over pp 4 x vpp 5: the ranks hold 20 and 21 layers (job_warnings).
    const std::string warned =
        html_report(JobSource{"", {"model.num_hidden_layers=81"}}, default_calibration());
    EXPECT_NE(warned.find("<h2 id=\"h-warnings\">Warnings</h2>"), std::string::npos);
    EXPECT_NE(warned.find("<code>parallel.vpp</code>"), std::string::npos);
    const std::string out = ::testing::TempDir() + "lostflops-oom-report.html";
    const auto r = test::run_cli("report --set parallel.tp=1 --set parallel.pp=1 --set parallel.vpp=1 --set parallel.dp=1024 "
                                 "--set parallel.recompute=none -o " + out);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("does not fit"), std::string::npos) << r.err;
    std::remove(out.c_str());
}

// The timeline's text names the schedule the plan runs and sets the busiest
// rank's idle time beside the estimate's two pipeline walls, so that the
// report gives one bubble (issue 37 item 8); the uniform-stage formula only
// for the 1F1B family.
TEST(HtmlReport, TimelineNamesItsScheduleAndTheEstimatesPipelineWalls) {
    const Job job = default_job();
    const Estimate e = estimate(job, default_calibration());
    const std::string html = html_report(JobSource{}, default_calibration());
    EXPECT_NE(html.find("simulation of the interleaved 1F1B schedule"), std::string::npos);
    EXPECT_NE(html.find(fmt::format("the estimate's pipeline bubble {:.3f} s and pipeline transfers {:.3f} s",
                                    e.breakdown.pp_bubble_s, e.breakdown.pp_p2p_s)),
              std::string::npos);
    EXPECT_NE(html.find("Narayanan et al."), std::string::npos);
    const std::string v = html_report(
        JobSource{"", {"training.framework=fsdp", "parallel.zero=3", "parallel.pipeline_schedule=dualpipev",
                       "parallel.vpp=2", "parallel.tp=8", "parallel.pp=4", "parallel.dp=32"}},
        default_calibration());
    EXPECT_NE(v.find("simulation of the DualPipeV schedule"), std::string::npos);
    EXPECT_EQ(v.find("Narayanan et al."), std::string::npos);
}

// The report's step timeline ends with the data loader's wait, drawn as
// host wait on every rank, so that its step is the estimate's.
TEST(HtmlReport, TimelineStepHoldsTheDataLoadersWait) {
    const Job job = default_job({"training.data_loader_s_per_sequence=1"});
    const Estimate e = estimate(job, default_calibration());
    ASSERT_GT(e.breakdown.data_loader_s, 0);
    const StepTimeline tl = step_timeline(job, default_calibration(), e);
    EXPECT_NEAR(tl.step_s, e.step_time_s, 1e-3 * e.step_time_s);
    int waits = 0;
    for (const Segment& s : tl.segments)
        if (s.kind == SegmentKind::host_wait && s.end_s == tl.step_s &&
            std::abs(s.end_s - s.start_s - e.breakdown.data_loader_s) < 1e-9)
            ++waits;
    EXPECT_EQ(waits, tl.stages);
}

TEST(HtmlReport, ScalingCurveIsTheSearchsBestPlan) {
    const Calibration cal = default_calibration();
    const auto pts = scaling_curve(JobSource{}, cal, {512, 1024});
    ASSERT_EQ(pts.size(), 2u);
    const Estimate own = estimate(default_job(), cal);
    ASSERT_TRUE(pts[1].fits);
    EXPECT_EQ(pts[1].num_gpus, 1024);
    // The job's own plan is one of the plans searched: the best is at least as fast.
    EXPECT_GE(pts[1].best.tokens_per_s_per_gpu, own.tokens_per_s_per_gpu);
    // And its figures are estimate's for that plan.
    const Job best = job_with_plan(default_job({"cluster.num_gpus=1024"}), pts[1].best);
    EXPECT_NEAR(estimate(best, cal).step_time_s, pts[1].best.step_time_s, 1e-12 * pts[1].best.step_time_s);
    const std::string html = html_report(JobSource{}, cal, {512, 1024});
    const std::string svg = svg_element(html, "chart-scaling");
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(count(svg, "<circle"), 3u);  // two counts and the job's own plan
    EXPECT_EQ(svg_element(html_report(JobSource{}, cal), "chart-scaling"), "");  // only when asked
}

TEST(HtmlReport, SameInputSameBytes) {
    EXPECT_EQ(html_report(JobSource{}, default_calibration()), html_report(JobSource{}, default_calibration()));
}

TEST(Svg, EscapesText) {
    EXPECT_EQ(xml_escape("a<b & \"c\" > 'd'"), "a&lt;b &amp; &quot;c&quot; &gt; &#39;d&#39;");
    Svg s("x", 10, 10, "t<", "d&");
    s.text(1, 2, "<script>", "c");
    EXPECT_EQ(s.str().find("<script>"), std::string::npos);
    EXPECT_NE(s.str().find("t&lt;"), std::string::npos);
}

TEST(ExplainCli, JsonMfuEqualsEstimateAndLeversReproduce) {
    const auto x = test::run_cli("explain --set parallel.vpp=1 --format json");
    ASSERT_EQ(x.code, 0) << x.err;
    const auto est = test::run_cli("estimate --set parallel.vpp=1 --format json");
    ASSERT_EQ(est.code, 0) << est.err;
    const auto j = nlohmann::json::parse(x.out);
    EXPECT_DOUBLE_EQ(j.at("mfu").get<double>(), nlohmann::json::parse(est.out).at("mfu").get<double>());
    double pp = 0;
    for (const auto& s : j.at("waterfall")) pp += s.at("pp").get<double>();
    EXPECT_NEAR(100 - pp, 100 * j.at("mfu").get<double>(), 1e-6);
    ASSERT_FALSE(j.at("levers").empty());
    const auto& l = j.at("levers").at(0);
    std::string args = "estimate --set parallel.vpp=1 --format json";
    for (const auto& s : l.at("set")) args += " --set '" + s.get<std::string>() + "'";
    const auto after = test::run_cli(args);
    ASSERT_EQ(after.code, 0) << after.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(after.out).at("mfu").get<double>(), l.at("mfu_after").get<double>());
}

TEST(ExplainCli, MarkdownReportAndErrors) {
    const auto md = test::run_cli("explain --format markdown");
    EXPECT_EQ(md.code, 0);
    EXPECT_NE(md.out.find("| step | points of peak |"), std::string::npos);
    EXPECT_EQ(test::run_cli("explain --set parallel.tp=3").code, 2);
    EXPECT_EQ(test::run_cli("explain --format yaml").code, 2);
    EXPECT_EQ(test::run_cli("explain - < /dev/null").code, 2);
    const std::string out = ::testing::TempDir() + "lostflops-report-test.html";
    const auto r = test::run_cli("report -o " + out);
    EXPECT_EQ(r.code, 0) << r.err;
    std::ifstream in(out);
    const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(html.find("chart-timeline"), std::string::npos);
    std::remove(out.c_str());
    EXPECT_EQ(test::run_cli("report -o /nonexistent-dir/x.html").code, 2);
    EXPECT_NE(test::run_cli("report").code, 0);  // -o is required
    EXPECT_EQ(test::run_cli("report --gpus 0 -o " + out).code, 2);
}

}  // namespace
}  // namespace lostflops
