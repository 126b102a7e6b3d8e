// The roofline (Williams, Waterman, Patterson 2009, CACM 52(4)): on log-log
// axes, attainable FLOP/s = min(peak, intensity * HBM bandwidth), the ridge
// point where the two meet (peak / bandwidth), and one point per operator
// class at its arithmetic intensity and the FLOP/s the model gives it.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/label_place.h"
#include "explain/svg.h"

namespace lostflops {

namespace {

std::string si(double v) {
    if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
    return fmt::format("{:g}", v);
}

}  // namespace

std::string roofline_svg(const Roofline& r) {
    const double w = 680, h = 420, l = 70, rt = 20, t = 20, b = 50;
    double xmin = 0.1, xmax = 10000;
    double ymax = r.peak_flops * 3, ymin = r.peak_flops / 1e4;
    // Only points a log axis can place set the axes (a point of zero or
    // infinite intensity would make an endless grid).
    const auto drawable = [](const RooflinePoint& p) {
        return p.flop_per_byte > 0 && std::isfinite(p.flop_per_byte) && p.achieved_flop_per_s > 0 &&
               std::isfinite(p.achieved_flop_per_s);
    };
    std::vector<RooflinePoint> pts;
    for (const auto& p : r.points)
        if (drawable(p)) pts.push_back(p);
    for (const auto& p : pts) {
        xmin = std::min(xmin, p.flop_per_byte / 3);
        xmax = std::max(xmax, p.flop_per_byte * 3);
        ymin = std::min(ymin, p.achieved_flop_per_s / 3);
    }
    const double lx0 = std::floor(std::log10(xmin)), lx1 = std::ceil(std::log10(xmax));
    const double ly0 = std::floor(std::log10(ymin / 1e12)) + 12, ly1 = std::ceil(std::log10(ymax / 1e12)) + 12;
    const auto px = [&](double i) { return l + (w - l - rt) * (std::log10(i) - lx0) / (lx1 - lx0); };
    const auto py = [&](double f) { return h - b - (h - t - b) * (std::log10(f) - ly0) / (ly1 - ly0); };
    Svg svg("chart-roofline", w, h, "Roofline",
            fmt::format("Arithmetic intensity against achieved FLOP/s per operator class; peak {:.0f} TFLOP/s, "
                        "HBM {:.0f} GB/s, ridge point at {:.0f} FLOP/byte.",
                        r.peak_flops / 1e12, r.hbm_Bps / 1e9, r.ridge_flop_per_byte()));
    for (double e = lx0; e <= lx1; e += 1) {
        svg.line(px(std::pow(10, e)), t, px(std::pow(10, e)), h - b, "grid");
        svg.text(px(std::pow(10, e)), h - b + 16, si(std::pow(10, e)), "axis", Svg::Anchor::middle);
    }
    for (double e = ly0; e <= ly1; e += 1) {
        svg.line(l, py(std::pow(10, e)), w - rt, py(std::pow(10, e)), "grid");
        svg.text(l - 6, py(std::pow(10, e)) + 4, si(std::pow(10, e - 12)), "axis", Svg::Anchor::end);
    }
    svg.text((l + w - rt) / 2, h - 12, "arithmetic intensity (FLOP per byte of HBM traffic)", "axis", Svg::Anchor::middle);
    svg.text(14, t - 6, "TFLOP/s", "axis");
    const double x_lo = std::pow(10, lx0), x_hi = std::pow(10, lx1), ridge = r.ridge_flop_per_byte();
    const double y_lo = std::max(x_lo * r.hbm_Bps, std::pow(10, ly0));
    svg.polyline({{px(y_lo / r.hbm_Bps), py(y_lo)}, {px(ridge), py(r.peak_flops)}, {px(x_hi), py(r.peak_flops)}},
                 "roof");
    svg.line(px(ridge), py(r.peak_flops), px(ridge), h - b, "ridge");
    // The two notes (11 px, the stylesheet's .note) and then the points'
    // labels (12 px), each placed where it covers no dot, note or label.
    constexpr double kNotePx = 11, kLabelPx = 12, kDotR = 6;
    const std::string ridge_note = fmt::format("ridge {:.0f} FLOP/B", ridge);
    const std::string peak_note = fmt::format("dense peak {:.0f} TFLOP/s", r.peak_flops / 1e12);
    svg.text(px(ridge) + 4, h - b - 6, ridge_note, "note");
    svg.text(px(x_hi) - 4, py(r.peak_flops) - 6, peak_note, "note", Svg::Anchor::end);
    const std::vector<Box> notes = {text_box(px(ridge) + 4, h - b - 6, ridge_note, kNotePx, Svg::Anchor::start),
                                    text_box(px(x_hi) - 4, py(r.peak_flops) - 6, peak_note, kNotePx, Svg::Anchor::end)};
    std::vector<LabelDot> dots;
    for (const RooflinePoint& p : pts) dots.push_back({px(p.flop_per_byte), py(p.achieved_flop_per_s), kDotR, p.name});
    for (size_t i = 0; i < pts.size(); ++i) {
        const RooflinePoint& p = pts[i];
        svg.circle(dots[i].cx, dots[i].cy, kDotR, fmt::format("pt pt{}", i),
                   fmt::format("{}: {:.1f} FLOP/B, {:.1f} TFLOP/s", p.name, p.flop_per_byte, p.achieved_flop_per_s / 1e12));
    }
    const std::vector<PlacedLabel> labels = place_labels(dots, notes, Box{l, t, w - rt, h - b}, kLabelPx);
    for (size_t i = 0; i < labels.size(); ++i) svg.text(labels[i].x, labels[i].y, dots[i].text, "label", labels[i].anchor);
    return svg.str();
}

}  // namespace lostflops
