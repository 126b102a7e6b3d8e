// The MFU waterfall as horizontal bars: the first row is 100 % of dense
// peak, each following row removes one loss (a bar from what is left after it
// to what was left before it), the last row is the predicted MFU. The
// classic waterfall chart laid on its side so the step names can be read.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/svg.h"

namespace lostflops {

double nice_step(double range, int target) {
    if (!(range > 0)) return 1;
    // Every chart steps from 0 to its maximum by this: over an infinite range
    // no step ends the loop, so the range is refused (an estimate or a trace
    // figure that is not finite is a bug upstream).
    if (!std::isfinite(range)) throw std::invalid_argument(fmt::format("nice_step: the range {} is not finite", range));
    const double raw = range / std::max(target, 1);
    // Too small for a power of ten (raw below the normal doubles): one step across.
    if (!std::isnormal(raw)) return range;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    const double step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
    return step > 0 ? step : range;
}

std::string waterfall_svg(const Explanation& x) {
    // Room for the longest step name at about 6.6 px per character of 12 px text.
    size_t longest = 13;  // "predicted MFU"
    for (const auto& w : x.waterfall) longest = std::max(longest, w.name.size());
    const double label_w = 16 + 6.6 * static_cast<double>(longest), plot_w = 420, row_h = 24, top = 10;
    const double rows = static_cast<double>(x.waterfall.size()) + 2;
    const double height = top + rows * row_h + 34;
    const double width = label_w + plot_w + 160;  // "-21.8 points · 1.326 s" right of a bar at 100 %
    const auto px = [&](double pct) { return label_w + plot_w * pct / 100.0; };
    Svg svg("chart-waterfall", width, height, "MFU waterfall",
            fmt::format("From 100 % of dense peak, one bar per loss, down to the predicted MFU of {:.1f} %.",
                        100 * x.mfu));
    for (int g = 0; g <= 100; g += 20) {
        svg.line(px(g), top, px(g), top + rows * row_h, "grid");
        svg.text(px(g), top + rows * row_h + 16, fmt::format("{} %", g), "axis", Svg::Anchor::middle);
    }
    svg.text(px(50), top + rows * row_h + 30, "share of dense peak", "axis", Svg::Anchor::middle);
    double y = top, left = 100;
    const auto label = [&](const std::string& s) { svg.text(label_w - 8, y + row_h * 0.66, s, "label", Svg::Anchor::end); };
    label("dense peak");
    svg.rect(px(0), y + 3, px(100) - px(0), row_h - 6, "wf-total", "100 % of dense peak");
    svg.text(px(100) + 6, y + row_h * 0.66, "100 %", "value");
    y += row_h;
    for (const auto& w : x.waterfall) {
        const double after = left - w.pp;
        label(w.name);
        const double a = std::min(left, after), b = std::max(left, after);
        const std::string tip = fmt::format("{}: {:.2f} points of peak, {:.4f} s per step", w.name, w.pp, w.s);
        svg.rect(px(a), y + 3, std::max(0.75, px(b) - px(a)), row_h - 6, w.pp >= 0 ? "wf-loss" : "wf-gain", tip);
        svg.line(px(after), y + row_h - 3, px(after), y + row_h + 3, "connector");
        svg.text(px(b) + 6, y + row_h * 0.66, fmt::format("{:+.1f} points · {:.3f} s", -w.pp, w.s), "value");
        left = after;
        y += row_h;
    }
    label("predicted MFU");
    svg.rect(px(0), y + 3, px(100 * x.mfu) - px(0), row_h - 6, "wf-mfu", fmt::format("MFU {:.1f} %", 100 * x.mfu));
    svg.text(px(100 * x.mfu) + 6, y + row_h * 0.66, fmt::format("{:.1f} %", 100 * x.mfu), "value strong");
    return svg.str();
}

}  // namespace lostflops
