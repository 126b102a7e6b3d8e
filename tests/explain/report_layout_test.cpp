// The report's layout: the roofline's labels cover no dot, no note and no
// other label, whatever the points (close, on top of each other, at the
// chart's edge), and every table sits in a container that scrolls sideways,
// so the page holds at 700 px (chromium_test.cpp measures it rendered).
#include <cctype>
#include <limits>
#include <regex>

#include <gtest/gtest.h>

#include "explain/charts.h"
#include "explain/report_data.h"
#include "lostflops/calibration.h"
#include "lostflops/explain.h"
#include "test_util.h"

namespace lostflops {
namespace {

// A box in px of the viewBox, y down.
struct Rect {
    double x0, y0, x1, y1;
    std::string what;
};
bool overlap(const Rect& a, const Rect& b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }

// The test's own glyph model, close to DejaVu Sans (what Chromium draws
// system-ui with on Debian: "GEMMs" at 12 px is 44.0 px wide, this gives
// 44.6): advance in em by character class, ascent 0.93 em, descent 0.24 em.
Rect text_rect(double x, double y, const std::string& anchor, const std::string& s, double px) {
    double em = 0;
    for (const char c : s) {
        if (std::string("ijltfr.,:;'|!()[]- ").find(c) != std::string::npos) em += 0.33;
        else if (std::string("mwMW%").find(c) != std::string::npos) em += 0.86;
        else if (std::isupper(static_cast<unsigned char>(c)) != 0) em += 0.7;
        else em += 0.6;
    }
    const double w = em * px;
    const double left = anchor == "start" ? x : anchor == "middle" ? x - w / 2 : x - w;
    return {left, y - 0.93 * px, left + w, y + 0.24 * px, s};
}

// Every label of the roofline against every other label, every dot and
// every note, and inside the viewBox; the number of labels.
size_t check_roofline(const std::string& svg) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(svg, m, std::regex("viewBox=\"0 0 ([0-9.]+) ([0-9.]+)\"")));
    const double vw = std::stod(m[1]), vh = std::stod(m[2]);
    std::vector<Rect> dots, labels, notes;
    const std::regex circle("<circle class=\"pt pt[0-9]+\" cx=\"(-?[0-9.]+)\" cy=\"(-?[0-9.]+)\" r=\"([0-9.]+)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it) {
        const double cx = std::stod((*it)[1]), cy = std::stod((*it)[2]), r = std::stod((*it)[3]);
        dots.push_back({cx - r, cy - r, cx + r, cy + r, "dot " + std::to_string(dots.size())});
    }
    const std::regex text("<text class=\"(label|note)\" x=\"(-?[0-9.]+)\" y=\"(-?[0-9.]+)\" "
                          "text-anchor=\"(start|middle|end)\">([^<]*)</text>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
        const bool label = (*it)[1] == "label";
        const Rect r = text_rect(std::stod((*it)[2]), std::stod((*it)[3]), (*it)[4], (*it)[5], label ? 12 : 11);
        (label ? labels : notes).push_back(r);
    }
    EXPECT_EQ(labels.size(), dots.size());
    EXPECT_EQ(notes.size(), 2u);  // the ridge and the dense peak
    for (size_t i = 0; i < labels.size(); ++i) {
        const Rect& a = labels[i];
        SCOPED_TRACE(a.what);
        EXPECT_TRUE(a.x0 >= 0 && a.y0 >= 0 && a.x1 <= vw && a.y1 <= vh) << a.x0 << " " << a.y0 << " " << a.x1 << " " << a.y1;
        for (size_t j = i + 1; j < labels.size(); ++j) EXPECT_FALSE(overlap(a, labels[j])) << labels[j].what;
        for (const Rect& d : dots) EXPECT_FALSE(overlap(a, d)) << d.what;
        for (const Rect& n : notes) EXPECT_FALSE(overlap(a, n)) << n.what;
    }
    return labels.size();
}

Roofline h100(std::vector<RooflinePoint> points) {
    Roofline r;
    r.peak_flops = 989e12;  // FLOP/s, H100 SXM dense bf16
    r.hbm_Bps = 3350e9;     // B/s
    r.points = std::move(points);
    return r;
}

TEST(ReportLayout, RooflineLabelsCoverNoDotNoteOrLabel) {
    const RooflinePoint mem{"memory-bound operators", 0.5, 1.3e12, 4e-4};
    // GEMMs and attention 20 px apart (the default job's, attention moved
    // beside GEMMs: the placement of a fixed offset put one on the other).
    check_roofline(roofline_svg(h100({{"GEMMs", 1816.5, 686.7e12, 7e-3}, {"attention", 2300, 560e12, 1e-3}, mem})));
    // Attention 10 px left of and 3 px below GEMMs (a shorter sequence):
    // a label moved left of its dot when a neighbour is near lands on it.
    check_roofline(roofline_svg(h100({{"GEMMs", 1816.5, 686.7e12, 7e-3}, {"attention", 1500, 600e12, 1e-3}, mem})));
    // On top of each other.
    check_roofline(roofline_svg(h100({{"GEMMs", 1000, 500e12, 7e-3}, {"attention", 1000, 500e12, 1e-3}, mem})));
    // At the right edge, under the dense peak's note, and at the left edge.
    check_roofline(roofline_svg(h100({{"GEMMs", 3000, 980e12, 7e-3}, {"attention", 3300, 900e12, 1e-3},
                                      {"memory-bound operators", 0.1, 0.05e12, 4e-4}})));
    // Under the ridge's note, at the foot of the ridge line.
    const double ridge = 989e12 / 3350e9;
    check_roofline(roofline_svg(h100({{"GEMMs", ridge * 1.5, 0.02e12, 7e-3}, {"attention", ridge * 1.6, 0.025e12, 1e-3}})));
    // Real jobs: the dense default and a MoE job (Qwen3-30B-A3B on 64 H100, ep 8).
    const Calibration cal = default_calibration();
    EXPECT_EQ(check_roofline(test::svg_element(html_report(JobSource{}, cal), "chart-roofline")), 3u);
    const JobSource moe{"", {"model.preset=qwen3-30b-a3b", "cluster.num_gpus=64", "training.seq_length=4096",
                             "training.global_batch_size=512", "parallel.tp=1", "parallel.pp=1", "parallel.vpp=1",
                             "parallel.ep=8", "parallel.recompute=full", "parallel.sequence_parallel=false"}};
    EXPECT_EQ(check_roofline(test::svg_element(html_report(moe, cal), "chart-roofline")), 3u);
}

// A point no log axis can place (an intensity of zero or infinity: a mixer
// whose bytes are not counted) is left out, not drawn on an endless grid; a
// stack without softmax attention (Falcon-Mamba's 64 Mamba-1 layers, which
// hung `report` until it ran out of memory) draws GEMMs and memory-bound
// operators only.
TEST(ReportLayout, RooflineLeavesOutPointsALogAxisCannotPlace) {
    const RooflinePoint mem{"memory-bound operators", 0.5, 1.3e12, 4e-4};
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(check_roofline(roofline_svg(h100({{"GEMMs", 1816.5, 686.7e12, 7e-3}, {"scan", inf, 5e12, 1e-3}, mem}))), 2u);
    EXPECT_EQ(check_roofline(roofline_svg(h100({{"GEMMs", 1816.5, 686.7e12, 7e-3}, {"scan", 0, 0, 1e-3}, mem}))), 2u);
    const JobSource mamba{"", {"model.num_hidden_layers=4", "model.hidden_size=1024", "model.vocab_size=32000",
                               "model.model_type=mamba", "model.intermediate_size=2048", "model.state_size=16",
                               "model.conv_kernel=4", "model.time_step_rank=64", "cluster.num_gpus=8",
                               "parallel.tp=1", "parallel.pp=1", "parallel.vpp=1", "parallel.sequence_parallel=false"}};
    const Calibration cal = default_calibration();
    EXPECT_EQ(check_roofline(test::svg_element(html_report(mamba, cal), "chart-roofline")), 2u);
}

// Every table of the page in the sideways-scrolling container, and the
// container and the charts held to the page's width by the stylesheet.
TEST(ReportLayout, EveryTableScrollsInsideThePage) {
    const Calibration cal = default_calibration();
    for (const auto& src : {JobSource{}, JobSource{"", {"training.micro_batch_size=8"}}}) {
        const std::string html = html_report(src, cal);
        size_t tables = 0;
        for (auto pos = html.find("<table"); pos != std::string::npos; pos = html.find("<table", pos + 1), ++tables) {
            const auto open = html.rfind("<div class=\"table-scroll\"", pos);
            ASSERT_NE(open, std::string::npos);
            // Directly inside it: nothing but the container's own tag between the two.
            EXPECT_EQ(html.find('>', open) + 1, pos) << html.substr(open, pos - open + 40);
        }
        EXPECT_GE(tables, 4u);  // waterfall, roofline, timeline, memory (and the levers when one helps)
        EXPECT_EQ(test::count_of(html, "class=\"table-scroll\""), tables);
        EXPECT_EQ(test::count_of(html, "</table></div>"), tables);
        // The plan of micro-batch 8 does not fit (196 GiB of 76.8): its banner is still the page's first block.
        EXPECT_EQ(html.find("class=\"banner bad\"") != std::string::npos, !src.overrides.empty());
    }
    const std::string css = report_css();
    EXPECT_NE(css.find(".table-scroll { max-width: 100%; overflow-x: auto;"), std::string::npos);
    EXPECT_NE(css.find("svg.chart { max-width: 100%; height: auto;"), std::string::npos);
}

}  // namespace
}  // namespace lostflops
