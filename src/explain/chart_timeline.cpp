// The pipeline schedule of one step as a timeline (a Gantt chart): one row
// per pipeline rank, time to the right; each pass split into its causes
// (explain/report_data.h StepTimeline), idle time left as the row's
// background, so the fill and drain bubble shows as empty space.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/svg.h"

namespace lostflops {

namespace {

const char* kind_class(SegmentKind k) {
    switch (k) {
        case SegmentKind::forward: return "tl-fwd";
        case SegmentKind::backward: return "tl-bwd";
        case SegmentKind::recompute: return "tl-rec";
        case SegmentKind::comm: return "tl-comm";
        case SegmentKind::host_wait: return "tl-host";
        case SegmentKind::dp_comm: return "tl-dp";
        case SegmentKind::optimizer: return "tl-opt";
    }
    return "";
}

}  // namespace

std::string timeline_svg(const StepTimeline& t, double window_s, const std::string& id, const std::string& title) {
    const double w = 960, l = 70, r = 20, top = 44, b = 40;
    const double row_h = std::clamp(420.0 / t.stages, 9.0, 30.0);
    const double h = top + row_h * t.stages + b;
    const double span = window_s > 0 && window_s < t.step_s ? window_s : t.step_s > 0 ? t.step_s : 1;
    const auto px = [&](double s) { return l + (w - l - r) * s / span; };
    Svg svg(id, w, h, title,
            fmt::format("{} pipeline ranks, {} model chunks per rank, {} micro-batches; the pipeline phase takes "
                        "{:.3f} s of which the bubble is {:.1f} %, then data-parallel traffic and the optimizer. "
                        "Shown: the first {:.3f} s of the {:.3f} s step.",
                        t.stages, t.chunks, t.micro_batches, t.pipeline_s, 100 * t.bubble_s / t.pipeline_s, span,
                        t.step_s));
    // Legend.
    double lx = l;
    for (const SegmentKind k : {SegmentKind::forward, SegmentKind::backward, SegmentKind::recompute, SegmentKind::comm,
                                SegmentKind::host_wait, SegmentKind::dp_comm, SegmentKind::optimizer}) {
        svg.rect(lx, 10, 12, 12, kind_class(k));
        svg.text(lx + 16, 20, to_string(k), "legend");
        lx += 28 + 6.5 * std::string(to_string(k)).size();
    }
    svg.rect(lx, 10, 12, 12, "tl-idle");
    svg.text(lx + 16, 20, "idle (bubble)", "legend");
    const double step = nice_step(span, 8);
    for (double s = 0; s <= span * 1.0001; s += step) {
        svg.line(px(s), top, px(s), top + row_h * t.stages, "grid");
        svg.text(px(s), top + row_h * t.stages + 16, fmt::format("{:g} s", s), "axis", Svg::Anchor::middle);
    }
    svg.text(px(span / 2), h - 6, "time in the step", "axis", Svg::Anchor::middle);
    for (int rk = 0; rk < t.stages; ++rk) {
        const double y = top + rk * row_h;
        svg.rect(px(0), y + 1, px(span) - px(0), row_h - 2, "tl-idle");
        // Every rank's label when the rows are tall enough for 11 px text, else every k-th.
        const int every = row_h >= 13 ? 1 : static_cast<int>(std::ceil(13 / row_h));
        if (rk % every == 0)
            svg.text(l - 6, y + row_h * 0.5 + 4, fmt::format("rank {}", rk), "axis", Svg::Anchor::end);
    }
    // Neighbouring segments of one kind on a rank closer than half a pixel
    // are drawn as one rectangle, and what stays under a quarter of a pixel
    // is not drawn: a step of 64 ranks x 1,000 passes would otherwise be
    // hundreds of thousands of shapes no screen can show. Tooltips name the
    // pass while a rectangle is one pass.
    const double px_s = span / (w - l - r);
    struct Run {
        Segment first;
        double end_s = 0;
        int passes = 0;
        std::string cls;
    };
    std::vector<Run> open(static_cast<size_t>(t.stages));
    const auto flush = [&](Run& run) {
        if (run.passes == 0) return;
        const Segment& sg = run.first;
        if (run.end_s - sg.start_s >= px_s / 4) {
            const double y = top + sg.rank * row_h;
            std::string tip;
            if (run.passes > 1)
                tip = fmt::format("rank {} {}: {} passes, {:.4f}-{:.4f} s", sg.rank, to_string(sg.kind), run.passes,
                                  sg.start_s, run.end_s);
            else if (sg.micro_batch >= 0)
                tip = fmt::format("rank {} {} micro-batch {} chunk {}: {:.4f}-{:.4f} s", sg.rank, to_string(sg.kind),
                                  sg.micro_batch, sg.chunk, sg.start_s, run.end_s);
            else
                tip = fmt::format("rank {} {}: {:.4f}-{:.4f} s", sg.rank, to_string(sg.kind), sg.start_s, run.end_s);
            svg.rect(px(sg.start_s), y + 2, px(std::min(run.end_s, span)) - px(sg.start_s), row_h - 4, run.cls, tip);
        }
        run.passes = 0;
    };
    // More passes than a row has pixels: each 2-pixel column of a rank is a
    // stacked bar of the kinds that ran in it, each as tall as its share of
    // the column's time (idle: the background left over), so every kind's
    // area is its time. (The kind that filled most of a column used to take
    // all of it: in 1F1B's steady state the backward, twice a forward, won
    // every column and forward, recompute and TP communication vanished.)
    // Heights are in steps of 1/16 of the row, and neighbouring columns with
    // the same bar are one rectangle per kind.
    size_t shown = 0;
    for (const Segment& sg : t.segments) shown += sg.start_s < span ? 1 : 0;
    const int bins = static_cast<int>((w - l - r) / 2);
    if (shown > static_cast<size_t>(t.stages) * bins / 2) {
        constexpr int kKinds = 7, kLevels = 16;
        const double bin_s = span / bins;
        std::vector<double> fill(static_cast<size_t>(t.stages) * bins * kKinds, 0.0);
        for (const Segment& sg : t.segments) {
            const double a = sg.start_s, b = std::min(sg.end_s, span);
            if (a >= b) continue;
            for (int k = static_cast<int>(a / bin_s); k < bins && k * bin_s < b; ++k) {
                const double o = std::min(b, (k + 1) * bin_s) - std::max(a, k * bin_s);
                if (o > 0) fill[(static_cast<size_t>(sg.rank) * bins + k) * kKinds + static_cast<int>(sg.kind)] += o;
            }
        }
        for (int rk = 0; rk < t.stages; ++rk) {
            struct Bar {
                int from = 0, size = 0;  // in 1/kLevels of the row, from its top
                int first_bin = 0;
            };
            std::array<Bar, kKinds> bars{};
            const auto draw = [&](int q, const Bar& bar, int end_bin) {
                if (bar.size == 0) return;
                const double y = top + rk * row_h + 2 + (row_h - 4) * bar.from / kLevels;
                const double a = bar.first_bin * bin_s, b = end_bin * bin_s;
                svg.rect(px(a), y, px(b) - px(a), (row_h - 4) * bar.size / kLevels,
                         kind_class(static_cast<SegmentKind>(q)),
                         fmt::format("rank {} {}: {:.0f} % of {:.4f}-{:.4f} s", rk,
                                     to_string(static_cast<SegmentKind>(q)), 100.0 * bar.size / kLevels, a, b));
            };
            // Each boundary's rounding error is carried to the next column
            // (error diffusion), so along a row every kind's area is its time
            // to within a level, not off by the same rounding in every column.
            std::array<double, kKinds> carry{};
            for (int k = 0; k < bins; ++k) {
                const double* f = &fill[(static_cast<size_t>(rk) * bins + k) * kKinds];
                double cum = 0;
                int at = 0;
                for (int q = 0; q < kKinds; ++q) {
                    cum = std::min(1.0, cum + f[q] / bin_s);
                    const double want = cum * kLevels + carry[static_cast<size_t>(q)];
                    const int to = std::clamp(static_cast<int>(std::lround(want)), at, kLevels);
                    carry[static_cast<size_t>(q)] = want - to;
                    const Bar now{at, to - at, k};
                    Bar& run = bars[static_cast<size_t>(q)];
                    if (run.size != now.size || run.from != now.from) {
                        draw(q, run, k);
                        run = now;
                    }
                    at = to;
                }
            }
            for (int q = 0; q < kKinds; ++q) draw(q, bars[static_cast<size_t>(q)], bins);
        }
        return svg.str();
    }
    for (const Segment& sg : t.segments) {
        if (sg.start_s >= span) continue;
        std::string cls = kind_class(sg.kind);
        if (sg.chunk > 0 && sg.chunk % 2 == 1) cls += " odd";
        Run& run = open[static_cast<size_t>(sg.rank)];
        if (run.passes > 0 && run.cls == cls && sg.start_s - run.end_s < px_s / 2) {
            run.end_s = sg.end_s;
            ++run.passes;
            continue;
        }
        flush(run);
        run = Run{sg, sg.end_s, 1, cls};
    }
    for (Run& run : open) flush(run);
    return svg.str();
}

}  // namespace lostflops
