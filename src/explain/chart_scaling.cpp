// The scaling curve: tokens/s per GPU of the best plan at each GPU count
// (explain/scaling.cpp), counts evenly spaced in the order given, the MFU
// written above each point; the job's own plan at its count as a second
// marker. Counts where no plan fits are marked on the axis.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/svg.h"
#include "job/human_format.h"

namespace lostflops {

namespace {

// The job's own plan at (x, y), the i-th of n counts: an annotation of the
// point with its figure, under it (the MFU label sits above the best plan's
// point), a sentence about this point rather than a legend entry.
void job_point(Svg& svg, double x, double y, size_t i, size_t n, double tokens_per_s_per_gpu) {
    const std::string what = fmt::format("the job's own plan: {} tokens/s per GPU", grouped(tokens_per_s_per_gpu));
    svg.circle(x, y, 5, "pt pt1", what);
    Svg::Anchor a = Svg::Anchor::middle;  // the first and last counts' labels stay inside the chart
    double dx = 0;
    if (n > 1 && i == 0) a = Svg::Anchor::start, dx = -6;
    if (n > 1 && i + 1 == n) a = Svg::Anchor::end, dx = 6;
    svg.line(x, y + 6, x, y + 14, "connector");
    svg.text(x + dx, y + 26, what, "note", a);
}

}  // namespace

std::string scaling_svg(const std::vector<ScalingPoint>& pts, int job_gpus, double job_tokens_per_s_per_gpu) {
    const double w = 680, h = 340, l = 70, r = 30, t = 30, b = 50;
    double ymax = job_tokens_per_s_per_gpu;
    for (const auto& p : pts)
        if (p.fits) ymax = std::max(ymax, p.best.tokens_per_s_per_gpu);
    const double step = nice_step(ymax * 1.15, 5);
    ymax = step * std::max(1.0, std::ceil(ymax * 1.15 / step));
    const double n = static_cast<double>(pts.size());
    const double inset = 36;  // room for the first and last MFU labels
    const auto px = [&](size_t i) {
        return l + inset + (w - l - r - 2 * inset) * (n <= 1 ? 0.5 : static_cast<double>(i) / (n - 1));
    };
    const auto py = [&](double v) { return h - b - (h - t - b) * v / ymax; };
    Svg svg("chart-scaling", w, h, "Scaling curve",
            fmt::format("Tokens/s per GPU of the best plan at {} GPU counts from {} to {}; the job's own plan at {} "
                        "GPUs: {:.0f} tokens/s per GPU.",
                        pts.size(), pts.empty() ? 0 : pts.front().num_gpus, pts.empty() ? 0 : pts.back().num_gpus,
                        job_gpus, job_tokens_per_s_per_gpu));
    for (double v = 0; v <= ymax * 1.0001; v += step) {
        svg.line(l, py(v), w - r, py(v), "grid");
        svg.text(l - 6, py(v) + 4, fmt::format("{:g}", v), "axis", Svg::Anchor::end);
    }
    svg.text(8, t - 12, "tokens/s per GPU", "axis");
    svg.text((l + w - r) / 2, h - 10, "GPUs", "axis", Svg::Anchor::middle);
    std::vector<std::pair<double, double>> line;
    for (size_t i = 0; i < pts.size(); ++i) {
        svg.text(px(i), h - b + 16, fmt::format("{}", pts[i].num_gpus), "axis", Svg::Anchor::middle);
        if (!pts[i].fits) {
            svg.text(px(i), h - b - 6, "none fits", "note", Svg::Anchor::middle);
            continue;
        }
        const PlanScore& s = pts[i].best;
        line.emplace_back(px(i), py(s.tokens_per_s_per_gpu));
    }
    if (line.size() > 1) svg.polyline(line, "curve");
    for (size_t i = 0; i < pts.size(); ++i) {
        if (!pts[i].fits) continue;
        const PlanScore& s = pts[i].best;
        svg.circle(px(i), py(s.tokens_per_s_per_gpu), 5, "pt pt0",
                   fmt::format("{} GPUs: {:.0f} tokens/s per GPU, MFU {:.1f} %, {}", pts[i].num_gpus,
                               s.tokens_per_s_per_gpu, 100 * s.mfu, plan_words(s.plan, s.micro_batch)));
        svg.text(px(i), py(s.tokens_per_s_per_gpu) - 10, fmt::format("{:.1f} %", 100 * s.mfu), "note",
                 Svg::Anchor::middle);
        if (pts[i].num_gpus == job_gpus) job_point(svg, px(i), py(job_tokens_per_s_per_gpu), i, pts.size(),
                                                   job_tokens_per_s_per_gpu);
    }
    return svg.str();
}

}  // namespace lostflops
