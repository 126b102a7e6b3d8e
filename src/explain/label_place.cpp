// Label placement for the charts (contract in label_place.h): the classic
// greedy candidate-position method (Christensen, Marks, Shieber 1995, "An
// empirical study of algorithms for point-feature label placement", ACM TOG
// 14(3): a fixed set of spots around each point, the first free one taken),
// with four spots per ring and two rings.
#include "explain/label_place.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

namespace lostflops {

namespace {

// Glyph metrics as fractions of the font size (em), upper bounds over the
// sans-serif fonts a browser picks for system-ui; DejaVu Sans (Debian's, the
// widest of them) has i 0.28, r 0.41, a lower-case letter 0.52 to 0.64 but
// m 0.97, an upper-case one 0.58 to 0.79 but M 0.86 and W 0.99, a digit
// 0.64; ascent 0.93, descent 0.24. Chromium measured "GEMMs" at 12 px as
// 44.0 × 13.9 px (bound: 51 × 15) and "memory-bound operators" 153.8 px
// wide (bound: 165).
constexpr double kAscentEm = 0.95, kDescentEm = 0.3;

double advance_em(unsigned char c) {
    if (c >= 0x80) return 1.0;  // a byte of a multi-byte character: at most one em each
    if (c != 0 && std::strchr("ijltfr.,:;'|!()[]- ", c) != nullptr) return 0.42;
    if (c != 0 && std::strchr("mwMW%@", c) != nullptr) return 1.0;
    if (std::isupper(c) != 0) return 0.8;
    return 0.66;
}

}  // namespace

double Box::overlap_area(const Box& o) const {
    const double w = std::min(x1, o.x1) - std::max(x0, o.x0), h = std::min(y1, o.y1) - std::max(y0, o.y0);
    return w > 0 && h > 0 ? w * h : 0;
}

Box text_box(double x, double y, const std::string& s, double font_px, Svg::Anchor a) {
    double em = 0;
    for (const char c : s) em += advance_em(static_cast<unsigned char>(c));
    const double w = em * font_px;
    const double left = a == Svg::Anchor::start ? x : a == Svg::Anchor::middle ? x - w / 2 : x - w;
    return {left, y - kAscentEm * font_px, left + w, y + kDescentEm * font_px};
}

std::vector<PlacedLabel> place_labels(const std::vector<LabelDot>& dots, const std::vector<Box>& fixed,
                                      const Box& plot, double font_px) {
    std::vector<Box> taken = fixed;
    for (const LabelDot& d : dots) taken.push_back(dot_box(d.cx, d.cy, d.r));
    // The baseline that centres a line on the dot: the box's middle is
    // (descent - ascent) / 2 from the baseline.
    const double centre = (kAscentEm - kDescentEm) / 2 * font_px;
    std::vector<PlacedLabel> out;
    for (const LabelDot& d : dots) {
        std::vector<PlacedLabel> spots;
        for (int ring = 0; ring < 2; ++ring) {
            const double gap = 4 + ring * font_px;  // px between the dot's edge and the label
            const double side = d.r + gap;
            spots.push_back({d.cx + side, d.cy + centre, Svg::Anchor::start, {}});
            spots.push_back({d.cx - side, d.cy + centre, Svg::Anchor::end, {}});
            spots.push_back({d.cx, d.cy - side - kDescentEm * font_px, Svg::Anchor::middle, {}});
            spots.push_back({d.cx, d.cy + side + kAscentEm * font_px, Svg::Anchor::middle, {}});
        }
        const PlacedLabel* best = &spots.front();  // also when a coordinate is not a number
        double best_cost = std::numeric_limits<double>::infinity();
        for (PlacedLabel& s : spots) {
            s.box = text_box(s.x, s.y, d.text, font_px, s.anchor);
            double cost = 0;
            for (const Box& b : taken) cost += s.box.overlap_area(b);
            // Outside the plot costs as much as the part outside.
            cost += (s.box.x1 - s.box.x0) * (s.box.y1 - s.box.y0) - s.box.overlap_area(plot);
            if (cost < best_cost) best = &s, best_cost = cost;
            if (cost <= 0) break;  // the first free spot
        }
        taken.push_back(best->box);
        out.push_back(*best);
    }
    return out;
}

}  // namespace lostflops
