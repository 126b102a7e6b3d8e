// The report in a real browser: Debian's headless Chromium loads the file,
// takes a screenshot and dumps the DOM it built; no console errors, and every
// chart's SVG is in the DOM with shapes. Skipped (GTEST_SKIP) only when no
// `chromium` is installed (scripts/install-deps.sh installs it).
#include <filesystem>
#include <unistd.h>  // getpid: a directory of its own per test process
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops {
namespace {

std::string find_chromium() {
    for (const char* name : {"chromium", "chromium-browser"}) {
        int code = -1;
        const std::string path = test::shell_output(std::string("command -v ") + name + " 2>/dev/null", &code);
        if (code == 0 && !path.empty()) return path.substr(0, path.find('\n'));
    }
    return "";
}

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A directory of this test process's own under the test's temporary directory.
std::filesystem::path own_dir(const std::string& name) {
    const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                      ("lostflops-chromium-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

TEST(ReportChromium, RendersWithoutConsoleErrorsAndEveryChartHasShapes) {
    const std::string chromium = find_chromium();
    if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
    const std::filesystem::path dir = own_dir("test");
    const std::string html = (dir / "report.html").string(), png = (dir / "report.png").string();
    std::filesystem::remove(png);
    ASSERT_EQ(test::run_cli("report --gpus 512,1024 -o " + html).code, 0);
    // A private profile directory: nothing shared with another run.
    const std::string common = chromium + " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                               (dir / "profile").string() + " --enable-logging=stderr --v=0 ";
    int code = -1;
    const std::string shot_log = test::shell_output(
        common + "--screenshot=" + png + " --window-size=1100,2600 file://" + html + " 2>&1", &code);
    EXPECT_EQ(code, 0) << shot_log;
    ASSERT_TRUE(std::filesystem::exists(png)) << shot_log;
    EXPECT_GT(std::filesystem::file_size(png), 20000u);  // a blank page compresses to a few kB
    const std::string dom = test::shell_output(common + "--dump-dom file://" + html + " 2>" + (dir / "dom.log").string(),
                                               &code);
    EXPECT_EQ(code, 0);
    const std::string log = shot_log + read((dir / "dom.log").string());
    // Console messages are logged as "CONSOLE(line)" or ":CONSOLE:"; none may be an error.
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("CONSOLE") != std::string::npos) ADD_FAILURE() << "console message: " << line;
        if (line.find("Uncaught") != std::string::npos) ADD_FAILURE() << line;
    }
    for (const char* id : {"chart-waterfall", "chart-roofline", "chart-timeline", "chart-timeline-start",
                           "chart-memory", "chart-scaling"}) {
        const auto start = dom.find(std::string("id=\"") + id + "\"");
        ASSERT_NE(start, std::string::npos) << id << " missing from the rendered DOM";
        const auto end = dom.find("</svg>", start);
        ASSERT_NE(end, std::string::npos);
        const std::string svg = dom.substr(start, end - start);
        EXPECT_TRUE(svg.find("<rect") != std::string::npos || svg.find("<circle") != std::string::npos) << id;
        EXPECT_NE(svg.find("<title"), std::string::npos) << id;
        EXPECT_NE(svg.find("<text"), std::string::npos) << id;
    }
    EXPECT_EQ(dom.find("<script"), std::string::npos);
    // The traces' report too.
    const std::string trace_html = (dir / "trace.html").string();
    const std::string traces = (dir / "traces").string();
    ASSERT_EQ(test::run_cli("trace synth " + traces + " --ranks 16 --tp 8 --slow-rank 3").code, 0);
    ASSERT_EQ(test::run_cli("trace " + traces + " --job " +
                            test::source_path("tests/data/trace/job-gpt3-125m-16xa100.yaml") + " --report " + trace_html)
                  .code,
              0);
    const std::string trace_log = test::shell_output(common + "--dump-dom file://" + trace_html + " 2>&1 >/dev/null");
    EXPECT_EQ(trace_log.find("CONSOLE"), std::string::npos) << trace_log;
    const std::string trace_dom = test::shell_output(common + "--dump-dom file://" + trace_html + " 2>/dev/null");
    for (const char* id : {"chart-trace-ranks", "chart-trace-stragglers", "chart-trace-walls"}) {
        const auto start = trace_dom.find(std::string("id=\"") + id + "\"");
        ASSERT_NE(start, std::string::npos) << id;
        EXPECT_NE(trace_dom.substr(start, trace_dom.find("</svg>", start) - start).find("<rect"), std::string::npos) << id;
    }
    // The report with a trace's measured memory (report --trace): both
    // measured lines in the rendered memory-over-the-step chart.
    const std::string mem_html = (dir / "memory.html").string();
    ASSERT_EQ(test::run_cli("report --trace " + test::source_path("tests/data/trace/memory-small.json") + " -o " +
                            mem_html)
                  .code,
              0);
    const std::string mem_dom = test::shell_output(common + "--dump-dom file://" + mem_html + " 2>/dev/null");
    const auto mem_start = mem_dom.find("id=\"chart-memory-time\"");
    ASSERT_NE(mem_start, std::string::npos);
    const std::string mem_svg = mem_dom.substr(mem_start, mem_dom.find("</svg>", mem_start) - mem_start);
    EXPECT_NE(mem_svg.find("class=\"memmeasured\""), std::string::npos);
    EXPECT_NE(mem_svg.find("class=\"memmeasuredresv\""), std::string::npos);
    // The detector itself: a page that logs an error is caught by the same flags.
    const std::string bad = (dir / "bad.html").string();
    std::ofstream(bad) << "<!DOCTYPE html><html><body><script>console.error('boom');</script></body></html>";
    const std::string bad_log = test::shell_output(common + "--dump-dom file://" + bad + " 2>&1 >/dev/null");
    EXPECT_NE(bad_log.find("CONSOLE"), std::string::npos) << "chromium no longer logs console messages: " << bad_log;
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);  // kept to look at when it failed
}

// What a script added to a copy of a report measures in Chromium's layout,
// written into the DOM that --dump-dom prints: the page's scroll width
// against its client width, and the roofline's labels that overlap a dot or
// another label (bounding boxes as drawn).
constexpr const char* kMeasure = R"js(<script>
const root = document.documentElement, out = ['width ' + root.scrollWidth + ' ' + root.clientWidth];
const els = [...document.getElementById('chart-roofline').querySelectorAll('text.label, circle')];
const bb = els.map(e => e.getBoundingClientRect());
let overlaps = 0, labels = 0;
for (let i = 0; i < els.length; ++i) {
  if (els[i].tagName == 'text') ++labels;
  for (let j = i + 1; j < els.length; ++j) {
    if (els[i].tagName == 'circle' && els[j].tagName == 'circle') continue;
    const a = bb[i], b = bb[j];
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) ++overlaps;
  }
}
out.push('labels ' + labels, 'overlaps ' + overlaps, 'banner ' + document.querySelectorAll('.banner.bad').length);
const pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = out.join(' '); document.body.appendChild(pre);
</script>)js";

// At a 700 px window the page does not scroll sideways (a wide table
// scrolls in its own container) and no roofline label covers a dot or
// another label: the dense default job, a MoE job, and a plan that does
// not fit (its red banner still shown).
TEST(ReportChromium, HoldsAt700PxWithoutOverlappingLabels) {
    const std::string chromium = find_chromium();
    if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
    const std::filesystem::path dir = own_dir("700");
    const std::string html = (dir / "report.html").string();
    const std::string common = chromium + " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                               (dir / "profile").string() + " --window-size=700,2000 --dump-dom file://" + html;
    const struct {
        const char* sets;
        int code, banner;
    } jobs[] = {{"", 0, 0},
                {"--set model.preset=qwen3-30b-a3b --set cluster.num_gpus=64 --set training.seq_length=4096 "
                 "--set training.global_batch_size=512 --set parallel.tp=1 --set parallel.pp=1 --set parallel.vpp=1 "
                 "--set parallel.ep=8 --set parallel.recompute=full --set parallel.sequence_parallel=false",
                 0, 0},
                {"--set training.micro_batch_size=8", 1, 1}};
    for (const auto& j : jobs) {
        SCOPED_TRACE(j.sets);
        ASSERT_EQ(test::run_cli(std::string("report ") + j.sets + " -o " + html).code, j.code);
        std::ofstream(html, std::ios::app) << kMeasure;
        const std::string dom = test::shell_output(common + " 2>/dev/null");
        const auto at = dom.find("<pre id=\"measured\">");
        ASSERT_NE(at, std::string::npos) << dom.substr(0, 400);
        std::istringstream in(dom.substr(at + 19));
        std::string w, lab, ov, ban;
        int scroll = 0, client = 0, labels = 0, overlaps = -1, banners = -1;
        in >> w >> scroll >> client >> lab >> labels >> ov >> overlaps >> ban >> banners;
        EXPECT_GT(client, 600);  // px: the window less a scroll bar
        EXPECT_LE(scroll, client);
        EXPECT_EQ(labels, 3);
        EXPECT_EQ(overlaps, 0);
        EXPECT_EQ(banners, j.banner);
    }
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lostflops
