// The HTML report of profiler traces (`lostflops trace ... --report F.html`):
// per rank, the kernel span split into compute, exposed communication, other
// busy time and idle (the temporal breakdown of Holistic Trace Analysis,
// trace/trace_analyze.cpp); compute time per rank against the median with the
// stragglers of trace::find_stragglers marked; and, with --job, the measured
// walls next to the predicted ones (trace/trace_compare.cpp). Same page rules
// as html_report.cpp: inline SVG and CSS only, a table after every chart.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/svg.h"
#include "lostflops/explain.h"
#include "trace/trace_text.h"

namespace lostflops {

namespace {

using trace::RankReport;

std::string esc(const std::string& s) { return xml_escape(trace::printable(s)); }

std::string ranks_svg(const std::vector<RankReport>& ranks) {
    const double w = 900, l = 80, r = 20, top = 40, b = 40;
    const double row_h = std::clamp(480.0 / ranks.size(), 6.0, 24.0);
    const double h = top + row_h * ranks.size() + b;
    const auto px = [&](double pct) { return l + (w - l - r) * pct / 100; };
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
    for (int g = 0; g <= 100; g += 20) {
        svg.line(px(g), top, px(g), top + row_h * ranks.size(), "grid");
        svg.text(px(g), top + row_h * ranks.size() + 16, fmt::format("{} %", g), "axis", Svg::Anchor::middle);
    }
    svg.text(px(50), h - 6, "share of the rank's kernel span", "axis", Svg::Anchor::middle);
    const int every = row_h >= 13 ? 1 : static_cast<int>(std::ceil(13 / row_h));
    for (size_t i = 0; i < ranks.size(); ++i) {
        const RankReport& rk = ranks[i];
        const double y = top + row_h * i;
        if (i % every == 0) svg.text(l - 6, y + row_h / 2 + 4, fmt::format("rank {}", rk.rank), "axis", Svg::Anchor::end);
        const double span = rk.kernel_span_us > 0 ? rk.kernel_span_us : 1;
        const double other = std::max(0.0, rk.non_compute_us - rk.exposed_comm_us);
        const double parts[] = {rk.compute_us, rk.exposed_comm_us, other, rk.idle_us};
        double at = 0;
        for (int k = 0; k < 4; ++k) {
            const double pct = 100 * parts[k] / span;
            if (pct <= 0) continue;
            svg.rect(px(at), y + 1, px(at + pct) - px(at), std::max(1.0, row_h - 2), cls[k],
                     fmt::format("rank {} {}: {:.1f} ms ({:.1f} %)", rk.rank, names[k], parts[k] / 1e3, pct));
            at += pct;
        }
    }
    return svg.str();
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string stragglers_svg(const std::vector<RankReport>& ranks, const std::vector<trace::Straggler>& st) {
    const double w = 900, h = 320, l = 70, r = 20, t = 30, b = 44;
    std::vector<double> compute;
    for (const auto& rk : ranks) compute.push_back(rk.compute_us / 1e3);
    const double med = median_of(compute);
    double ymax = std::max(1e-9, *std::max_element(compute.begin(), compute.end()));
    const double step = nice_step(ymax * 1.1, 5);
    ymax = step * std::ceil(ymax * 1.1 / step);
    const double slot = (w - l - r) / ranks.size(), bar = std::clamp(slot * 0.7, 1.0, 60.0);
    const auto py = [&](double v) { return h - b - (h - t - b) * v / ymax; };
    Svg svg("chart-trace-stragglers", w, h, "Compute time per rank",
            fmt::format("Compute time of each of {} ranks against the median of {:.1f} ms; {} straggler(s) marked.",
                        ranks.size(), med, st.size()));
    for (double v = 0; v <= ymax * 1.0001; v += step) {
        svg.line(l, py(v), w - r, py(v), "grid");
        svg.text(l - 6, py(v) + 4, fmt::format("{:g}", v), "axis", Svg::Anchor::end);
    }
    svg.text(8, t - 10, "compute ms", "axis");
    const int every = slot >= 28 ? 1 : static_cast<int>(std::ceil(28 / slot));
    for (size_t i = 0; i < ranks.size(); ++i) {
        const bool slow = std::any_of(st.begin(), st.end(), [&](const trace::Straggler& s) {
            return s.rank == ranks[i].rank && s.metric == "compute";
        });
        const double x = l + slot * i + (slot - bar) / 2;
        svg.rect(x, py(compute[i]), bar, py(0) - py(compute[i]), slow ? "wf-loss" : "mem0",
                 fmt::format("rank {}: {:.1f} ms compute{}", ranks[i].rank, compute[i], slow ? " (straggler)" : ""));
        if (i % every == 0)
            svg.text(x + bar / 2, h - b + 16, fmt::format("{}", ranks[i].rank), "axis", Svg::Anchor::middle);
    }
    svg.line(l, py(med), w - r, py(med), "capacity");
    svg.text(w - r - 4, py(med) - 5, fmt::format("median {:.1f} ms", med), "note", Svg::Anchor::end);
    svg.text((l + w - r) / 2, h - 8, "rank", "axis", Svg::Anchor::middle);
    return svg.str();
}

std::string walls_svg(const trace::JobComparison& c) {
    size_t longest = 8;
    for (const auto& wr : c.walls) longest = std::max(longest, wr.wall.size());
    const double l = 16 + 6.6 * static_cast<double>(longest);  // room for the wall names
    const double w = l + 520, r = 120, t = 36, row = 44, b = 36;
    const double h = t + row * c.walls.size() + b;
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
    for (double s = 0; s <= xmax * 1.0001; s += step) {
        svg.line(px(s), t, px(s), t + row * c.walls.size(), "grid");
        svg.text(px(s), t + row * c.walls.size() + 16, fmt::format("{:g} s", s), "axis", Svg::Anchor::middle);
    }
    for (size_t i = 0; i < c.walls.size(); ++i) {
        const auto& wr = c.walls[i];
        const double y = t + row * i;
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

}  // namespace

std::string trace_html_report(const std::vector<trace::RankReport>& ranks,
                              const std::vector<trace::Straggler>& stragglers, const trace::JobComparison* cmp) {
    std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<meta name=\"color-scheme\" content=\"light dark\">";
    h += fmt::format("<title>lostflops trace report</title><style>{}</style></head><body><main>", report_css());
    h += fmt::format("<h1>What the traced run did</h1><p class=\"sub\">{} rank(s), from Kineto profiler traces</p>",
                     ranks.size());
    if (ranks.empty()) return h + "<p>No ranks.</p></main></body></html>\n";
    h += "<section aria-labelledby=\"h-ranks\"><h2 id=\"h-ranks\">Temporal breakdown per rank</h2>";
    h += ranks_svg(ranks);
    h += "<table><caption>Per rank, ms (text alternative of the chart)</caption><thead><tr><th scope=\"col\">rank"
         "</th><th scope=\"col\">kernel span</th><th scope=\"col\">compute</th><th scope=\"col\">exposed comm</th>"
         "<th scope=\"col\">other busy</th><th scope=\"col\">idle</th><th scope=\"col\">comm/compute overlap</th>"
         "</tr></thead><tbody>";
    for (const auto& rk : ranks)
        h += fmt::format("<tr><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td>"
                         "<td>{}</td></tr>",
                         rk.rank, rk.kernel_span_us / 1e3, rk.compute_us / 1e3, rk.exposed_comm_us / 1e3,
                         std::max(0.0, rk.non_compute_us - rk.exposed_comm_us) / 1e3, rk.idle_us / 1e3,
                         rk.comm_comp_overlap_pct ? fmt::format("{:.1f} %", *rk.comm_comp_overlap_pct) : "—");
    h += "</tbody></table></section>";
    h += "<section aria-labelledby=\"h-stragglers\"><h2 id=\"h-stragglers\">Stragglers</h2>";
    if (ranks.size() > 1) {
        h += stragglers_svg(ranks, stragglers);
    } else {
        h += "<p>One rank: no other rank to compare it with.</p>";
    }
    if (stragglers.empty()) {
        h += "<p>No straggler found.</p>";
    } else {
        h += "<table><caption>Stragglers (trace::find_stragglers)</caption><thead><tr><th scope=\"col\">rank</th>"
             "<th scope=\"col\">metric</th><th scope=\"col\">ms</th><th scope=\"col\">median ms</th>"
             "<th scope=\"col\">deviation</th></tr></thead><tbody>";
        for (const auto& s : stragglers)
            h += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:+.1f} %</td></tr>", s.rank,
                             esc(s.metric), s.value_us / 1e3, s.median_us / 1e3, s.deviation_pct);
        h += "</tbody></table>";
    }
    h += "</section>";
    if (cmp != nullptr) {
        h += "<section aria-labelledby=\"h-walls\"><h2 id=\"h-walls\">Measured against predicted</h2>";
        h += fmt::format("<p>Step: measured {:.3f} s ({}), predicted {:.3f} s; MFU measured {:.1f} %, predicted "
                         "{:.1f} %.</p>",
                         cmp->measured_step_s, esc(cmp->step_source), cmp->predicted_step_s, 100 * cmp->measured_mfu,
                         100 * cmp->predicted_mfu);
        h += walls_svg(*cmp);
        h += "<table><caption>Seconds per step by wall (text alternative of the chart)</caption><thead><tr>"
             "<th scope=\"col\">wall</th><th scope=\"col\">measured s</th><th scope=\"col\">predicted s</th></tr>"
             "</thead><tbody>";
        for (const auto& wr : cmp->walls)
            h += fmt::format("<tr><td>{}</td><td>{:.4f}</td><td>{:.4f}</td></tr>", esc(wr.wall), wr.measured_s,
                             wr.predicted_s);
        h += "</tbody></table></section>";
    }
    h += "<footer>Generated by lostflops from the traces (<code>lostflops trace FILES --report FILE.html</code>; "
         "the same figures as text without <code>--report</code>).</footer></main></body></html>\n";
    return h;
}

}  // namespace lostflops
