// The HTML report of profiler traces (`lostflops trace ... --report F.html`):
// what the text output has (trace/trace_report.cpp), as charts with a table
// beside each and tables: the triage; per rank the kernel span split into
// compute, exposed communication, other busy time and idle (HTA's temporal
// breakdown, trace/trace_analyze.cpp); the busy time per rank against the
// median with the ranks that hold the others back marked, the nodes, the skew
// of collective starts per process group and per step, the step times
// (trace/trace_cluster.cpp); kernels by category with the costliest kernels of
// each, idle time by stream, CUDA launches, collectives and iterations, per
// rank up to trace::kMaxDetailedRanks ranks and summed beyond; with --job the
// measured walls beside the predicted ones (trace/trace_compare.cpp). Same
// page rules as html_report.cpp: inline SVG and CSS only, a table after every
// chart. Names from the traces are escaped for the terminal's sake too
// (trace/trace_text.h: no control character reaches the page).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/svg.h"
#include "lostflops/explain.h"
#include "explain/trace_html_tables.h"

namespace lostflops {

namespace {

using trace::RankReport;
using trace::RankRow;
using trace_html::esc;

constexpr std::size_t kChartRanks = 128;  // ranks drawn one by one; beyond, the most held back

// The rows drawn: all up to kChartRanks, else the most held back (by rank).
std::vector<RankRow> chart_rows(const trace::ClusterReport& c) {
    std::vector<RankRow> rows = c.rows;
    if (rows.size() <= kChartRanks) return rows;
    std::stable_sort(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) { return a.held_back_us > b.held_back_us; });
    rows.resize(kChartRanks);
    std::sort(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) { return a.rank < b.rank; });
    return rows;
}

std::string ranks_svg(const std::vector<RankRow>& ranks) {
    const double w = 900, l = 80, r = 20, top = 40, b = 40;
    const double row_h = std::clamp(480.0 / static_cast<double>(ranks.size()), 4.0, 24.0);
    const double h = top + row_h * static_cast<double>(ranks.size()) + b;
    const auto px = [&](double p) { return l + (w - l - r) * p / 100; };
    Svg svg("chart-trace-ranks", w, h, "Temporal breakdown per rank",
            fmt::format("For each of {} ranks, its kernel span as compute, exposed communication, other busy time "
                        "and idle, in per cent.",
                        ranks.size()));
    const char* names[] = {"compute", "exposed communication", "other busy", "idle"};
    const char* cls[] = {"tl-fwd", "tl-comm", "tl-host", "tl-idle"};
    double lx = l;
    for (int k = 0; k < 4; ++k) {
        svg.rect(lx, 10, 12, 12, cls[k]);
        svg.text(lx + 16, 20, names[k], "legend");
        lx += 40 + 6.5 * std::string(names[k]).size();
    }
    const double bottom = top + row_h * static_cast<double>(ranks.size());
    for (int g = 0; g <= 100; g += 20) {
        svg.line(px(g), top, px(g), bottom, "grid");
        svg.text(px(g), bottom + 16, fmt::format("{} %", g), "axis", Svg::Anchor::middle);
    }
    svg.text(px(50), h - 6, "share of the rank's kernel span", "axis", Svg::Anchor::middle);
    const std::size_t every = row_h >= 13 ? 1 : static_cast<std::size_t>(std::ceil(13 / row_h));
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const RankRow& rk = ranks[i];
        const double y = top + row_h * static_cast<double>(i);
        if (i % every == 0) svg.text(l - 6, y + row_h / 2 + 4, fmt::format("rank {}", rk.rank), "axis", Svg::Anchor::end);
        const double span = rk.kernel_span_us > 0 ? rk.kernel_span_us : 1;
        const double other = std::max(0.0, rk.non_compute_us - rk.exposed_comm_us);
        const double parts[] = {rk.compute_us, rk.exposed_comm_us, other, rk.idle_us};
        double at = 0;
        for (int k = 0; k < 4; ++k) {
            const double p = 100 * parts[k] / span;
            if (p <= 0) continue;
            svg.rect(px(at), y + 1, px(at + p) - px(at), std::max(1.0, row_h - 2), cls[k],
                     fmt::format("rank {} {}: {:.1f} ms ({:.1f} %)", rk.rank, names[k], parts[k] / 1e3, p));
            at += p;
        }
    }
    return svg.str();
}

// Busy time per step of each rank against the median; the ranks that hold the others back in red.
std::string busy_svg(const std::vector<RankRow>& ranks, const trace::ClusterReport& c) {
    const double w = 900, h = 320, l = 70, r = 20, t = 30, b = 44;
    double ymax = 1e-9;
    for (const auto& rk : ranks) ymax = std::max(ymax, rk.busy_us / 1e3);
    const double step = nice_step(ymax * 1.1, 5);
    ymax = step * std::ceil(ymax * 1.1 / step);
    const double slot = (w - l - r) / static_cast<double>(ranks.size()), bar = std::clamp(slot * 0.7, 1.0, 60.0);
    const auto py = [&](double v) { return h - b - (h - t - b) * v / ymax; };
    Svg svg("chart-trace-stragglers", w, h, "Busy time per step of each rank",
            fmt::format("Busy time (step minus communication waited for) of {} ranks against the median of {:.2f} ms; "
                        "{} rank(s) that hold the others back marked.",
                        ranks.size(), c.median_busy_us / 1e3, c.slow_ranks.size()));
    for (double v = 0; v <= ymax * 1.0001; v += step) {
        svg.line(l, py(v), w - r, py(v), "grid");
        svg.text(l - 6, py(v) + 4, fmt::format("{:g}", v), "axis", Svg::Anchor::end);
    }
    svg.text(8, t - 10, "busy ms per step", "axis");
    const std::size_t every = slot >= 28 ? 1 : static_cast<std::size_t>(std::ceil(28 / slot));
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const RankRow& rk = ranks[i];
        const bool slow = std::any_of(c.slow_ranks.begin(), c.slow_ranks.end(),
                                      [&](const trace::SlowOne& s) { return s.rank == rk.rank; });
        const double x = l + slot * static_cast<double>(i) + (slot - bar) / 2, v = rk.busy_us / 1e3;
        svg.rect(x, py(v), bar, py(0) - py(v), slow ? "wf-loss" : "mem0",
                 fmt::format("rank {}: {:.2f} ms busy per step{}", rk.rank, v, slow ? " (holds the others back)" : ""));
        if (i % every == 0) svg.text(x + bar / 2, h - b + 16, fmt::format("{}", rk.rank), "axis", Svg::Anchor::middle);
    }
    svg.line(l, py(c.median_busy_us / 1e3), w - r, py(c.median_busy_us / 1e3), "capacity");
    svg.text(w - r - 4, py(c.median_busy_us / 1e3) - 5, fmt::format("median {:.2f} ms", c.median_busy_us / 1e3), "note",
             Svg::Anchor::end);
    svg.text((l + w - r) / 2, h - 8, "rank", "axis", Svg::Anchor::middle);
    return svg.str();
}

// Horizontal bars: the time of each kernel category (summed over ranks).
std::string categories_svg(const std::vector<trace::CategoryTotal>& cats) {
    const double w = 900, l = 190, r = 120, t = 20, row = 22, b = 36;
    const double h = t + row * static_cast<double>(cats.size()) + b;
    double xmax = 1e-9;
    for (const auto& c : cats) xmax = std::max(xmax, c.time_us / 1e3);
    const double step = nice_step(xmax * 1.1, 6);
    xmax = step * std::ceil(xmax * 1.1 / step);
    const auto px = [&](double v) { return l + (w - l - r) * v / xmax; };
    Svg svg("chart-trace-categories", w, h, "Kernel time by category",
            fmt::format("Summed kernel time of {} categories, largest first.", cats.size()));
    const double bottom = t + row * static_cast<double>(cats.size());
    for (double v = 0; v <= xmax * 1.0001; v += step) {
        svg.line(px(v), t, px(v), bottom, "grid");
        svg.text(px(v), bottom + 16, fmt::format("{:g} ms", v), "axis", Svg::Anchor::middle);
    }
    for (std::size_t i = 0; i < cats.size(); ++i) {
        const double y = t + row * static_cast<double>(i), v = cats[i].time_us / 1e3;
        svg.text(l - 8, y + row / 2 + 4, cats[i].name, "label", Svg::Anchor::end);
        svg.rect(px(0), y + 3, px(v) - px(0), row - 6, cats[i].category == trace::KernelCategory::communication ? "tl-comm" : "mem0",
                 fmt::format("{}: {:.3f} ms, {} kernels", cats[i].name, v, cats[i].count));
        svg.text(px(v) + 6, y + row / 2 + 4, fmt::format("{:.3f} ms", v), "value");
    }
    return svg.str();
}

std::string walls_svg(const trace::JobComparison& c) {
    std::size_t longest = 8;
    for (const auto& wr : c.walls) longest = std::max(longest, wr.wall.size());
    const double l = 16 + 6.6 * static_cast<double>(longest);
    const double w = l + 520, r = 120, t = 36, row = 44, b = 36;
    const double h = t + row * static_cast<double>(c.walls.size()) + b;
    double xmax = 1e-12;
    for (const auto& wr : c.walls) xmax = std::max({xmax, wr.measured_s, wr.predicted_s});
    const double step = nice_step(xmax * 1.1, 6);
    xmax = step * std::ceil(xmax * 1.1 / step);
    const auto px = [&](double s) { return l + (w - l - r) * s / xmax; };
    Svg svg("chart-trace-walls", w, h, "Measured and predicted time per wall",
            fmt::format("Per step: measured {:.3f} s and predicted {:.3f} s; measured MFU {:.1f} %, predicted {:.1f} %.",
                        c.measured_step_s, c.predicted_step_s, 100 * c.measured_mfu, 100 * c.predicted_mfu));
    svg.rect(l, 8, 12, 12, "mem0");
    svg.text(l + 16, 18, "measured", "legend");
    svg.rect(l + 100, 8, 12, 12, "pt1");
    svg.text(l + 116, 18, "predicted", "legend");
    const double bottom = t + row * static_cast<double>(c.walls.size());
    for (double s = 0; s <= xmax * 1.0001; s += step) {
        svg.line(px(s), t, px(s), bottom, "grid");
        svg.text(px(s), bottom + 16, fmt::format("{:g} s", s), "axis", Svg::Anchor::middle);
    }
    for (std::size_t i = 0; i < c.walls.size(); ++i) {
        const auto& wr = c.walls[i];
        const double y = t + row * static_cast<double>(i);
        svg.text(l - 8, y + row / 2 + 4, wr.wall, "label", Svg::Anchor::end);
        svg.rect(px(0), y + 4, px(wr.measured_s) - px(0), row / 2 - 6, "mem0",
                 fmt::format("{} measured: {:.4f} s", wr.wall, wr.measured_s));
        svg.rect(px(0), y + row / 2, px(wr.predicted_s) - px(0), row / 2 - 6, "pt1",
                 fmt::format("{} predicted: {:.4f} s", wr.wall, wr.predicted_s));
        svg.text(px(std::max(wr.measured_s, wr.predicted_s)) + 6, y + row / 2 + 4,
                 fmt::format("{:.3f} / {:.3f} s", wr.measured_s, wr.predicted_s), "value");
    }
    return svg.str();
}

std::string section(const std::string& id, const std::string& title, const std::string& body) {
    return fmt::format("<section aria-labelledby=\"h-{0}\"><h2 id=\"h-{0}\">{1}</h2>{2}</section>", id, esc(title), body);
}

}  // namespace


std::string trace_html_report(const trace::TraceReport& t) {
    const trace::ClusterReport& c = *t.cluster;
    std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<meta name=\"color-scheme\" content=\"light dark\">";
    h += fmt::format("<title>lostflops trace report</title><style>{}</style></head><body><main>", report_css());
    h += fmt::format("<h1>What the traced run did</h1><p class=\"sub\">{} rank(s), {} node(s), from Kineto profiler "
                     "traces</p>",
                     c.ranks, c.nodes);
    if (c.rows.empty()) return h + "<p>No ranks.</p></main></body></html>\n";
    if (t.triage != nullptr && !t.triage->empty())
        h += section("triage", "What costs the most, and what to try", trace_html::triage(*t.triage));
    const auto rows = chart_rows(c);
    h += section("ranks", "Temporal breakdown per rank",
                 ranks_svg(rows) + trace_html::rank_rows(rows, c.rows.size()));
    std::string cross = c.rows.size() > 1 ? busy_svg(rows, c) : "<p>One rank: no other rank to compare it with.</p>";
    h += section("stragglers", "Ranks and nodes that hold the others back", cross + trace_html::cross_rank(c));
    if (!c.categories.empty()) h += section("categories", "Kernels by category", categories_svg(c.categories));
    if (t.ranks != nullptr && t.ranks->size() <= trace::kMaxDetailedRanks) {
        for (const auto& r : *t.ranks)
            h += section(fmt::format("rank-{}", r.rank), fmt::format("Rank {} ({})", r.rank, r.source), trace_html::per_rank(r));
    } else {
        h += section("all-ranks", fmt::format("All {} ranks, summed", c.ranks), trace_html::summed(c));
    }
    if (t.cmp != nullptr) h += section("walls", "Measured against predicted", walls_svg(*t.cmp) + trace_html::job(*t.cmp));
    h += "<footer>Generated by lostflops from the traces (<code>lostflops trace FILES --report FILE.html</code>; "
         "the same figures as text without <code>--report</code>, every rank with <code>--format json</code>)."
         "</footer></main></body></html>\n";
    return h;
}

}  // namespace lostflops
