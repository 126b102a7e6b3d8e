// Where a chart puts the label of each dot so that no label covers another
// label, a dot or a fixed text: a small deterministic placement that tries
// the right, left, top and bottom of the dot, then the same a line further
// out, and keeps the first spot that is free and inside the plot. Boxes are
// in CSS pixels of the SVG's viewBox, y down. Internal to src/explain.
#pragma once

#include <string>
#include <vector>

#include "explain/svg.h"

namespace lostflops {

struct Box {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // px, left < right, top < bottom
    bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
    double overlap_area(const Box& o) const;  // px²
};

// The box a text of `s` at (x, y) (y the baseline) in a font of `font_px`
// pixels may take: an upper bound over the sans-serif fonts of system-ui
// (advance per character class, 0.95 em above the baseline, 0.3 em below).
Box text_box(double x, double y, const std::string& s, double font_px, Svg::Anchor a);
inline Box dot_box(double cx, double cy, double r_px) { return {cx - r_px, cy - r_px, cx + r_px, cy + r_px}; }

struct LabelDot {
    double cx = 0, cy = 0, r = 0;  // px: the dot's centre and radius
    std::string text;
};
struct PlacedLabel {
    double x = 0, y = 0;  // px: the anchor point, y the baseline
    Svg::Anchor anchor = Svg::Anchor::start;
    Box box;
};

// One label per dot, in order: each avoids every dot, the `fixed` boxes
// (texts already drawn) and the labels placed before it, and stays within
// `plot`. When no spot is free, the one of least overlap (px² over dots,
// texts and the plot's edge; the first of equals) is kept.
std::vector<PlacedLabel> place_labels(const std::vector<LabelDot>& dots, const std::vector<Box>& fixed,
                                      const Box& plot, double font_px);

}  // namespace lostflops
