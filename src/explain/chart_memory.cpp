// Memory per GPU of every pipeline rank as stacked bars (weights, gradients,
// optimizer state, activations, logits, buffers; estimate/memory.cpp) against
// the usable HBM as a line; and each rank's allocated memory over the step
// as a line (explain/report_data.cpp memory_over_step), a measured
// allocator timeline over it when a trace is given.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/svg.h"

namespace lostflops {

std::string memory_svg(const std::vector<Memory>& ranks) {
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    const double w = 680, l = 60, r = 150, t = 20, b = 44, h = 380;
    double ymax = 1;
    for (const Memory& m : ranks) ymax = std::max({ymax, m.peak_bytes / kGiB, m.capacity_bytes / kGiB});
    const double step = nice_step(ymax * 1.08, 6);
    ymax = step * std::ceil(ymax * 1.08 / step);
    const auto py = [&](double gib) { return h - b - (h - t - b) * gib / ymax; };
    const double n = static_cast<double>(ranks.size());
    const double slot = (w - l - r) / n, bar = std::min(60.0, slot * 0.7);
    const double cap = ranks.empty() ? 0 : ranks.front().capacity_bytes / kGiB;
    Svg svg("chart-memory", w, h, "Memory per pipeline rank",
            fmt::format("Peak memory per GPU of each of {} pipeline ranks by kind, against {:.1f} GiB of usable HBM.",
                        ranks.size(), cap));
    for (double g = 0; g <= ymax * 1.0001; g += step) {
        svg.line(l, py(g), w - r, py(g), "grid");
        svg.text(l - 6, py(g) + 4, fmt::format("{:g}", g), "axis", Svg::Anchor::end);
    }
    svg.text(8, t - 6, "GiB per GPU", "axis");
    const char* names[] = {"weights", "gradients", "optimizer", "activations", "logits", "buffers"};
    for (size_t i = 0; i < ranks.size(); ++i) {
        const Memory& m = ranks[i];
        const double parts[] = {m.weights_bytes, m.gradients_bytes, m.optimizer_bytes,
                                m.activations_bytes, m.logits_bytes, m.buffers_bytes};
        const double x = l + slot * i + (slot - bar) / 2;
        double base = 0;
        for (int k = 0; k < 6; ++k) {
            const double g = parts[k] / kGiB;
            if (g <= 0) continue;
            svg.rect(x, py(base + g), bar, py(base) - py(base + g), fmt::format("mem{}", k),
                     fmt::format("rank {} {}: {:.1f} GiB", i, names[k], g));
            base += g;
        }
        if (ranks.size() <= 32 || i % (ranks.size() / 16) == 0)
            svg.text(x + bar / 2, h - b + 16, fmt::format("{}", i), "axis", Svg::Anchor::middle);
    }
    svg.text((l + w - r) / 2, h - 10, "pipeline rank", "axis", Svg::Anchor::middle);
    svg.line(l, py(cap), w - r, py(cap), "capacity");
    svg.text(w - r - 4, py(cap) - 5, fmt::format("usable HBM {:.1f} GiB", cap), "note", Svg::Anchor::end);
    for (int k = 0; k < 6; ++k) {
        const double y = t + 10 + k * 20;  // top to bottom as the stack reads
        svg.rect(w - r + 14, y, 12, 12, fmt::format("mem{}", 5 - k));
        svg.text(w - r + 32, y + 10, names[5 - k], "legend");
    }
    return svg.str();
}

std::string memory_time_svg(const std::vector<MemoryCurve>& curves, double usable_bytes, double step_s,
                            const MeasuredMemory& measured) {
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    const double w = 680, l = 60, r = 150, t = 20, b = 44, h = 340;
    double ymax = usable_bytes / kGiB, xmax = std::max(step_s, 1e-9);
    for (const MemoryCurve& c : curves) ymax = std::max(ymax, c.peak_bytes / kGiB);
    for (const auto* series : {&measured.allocated, &measured.reserved})
        for (const auto& [tm, v] : *series) ymax = std::max(ymax, v / kGiB), xmax = std::max(xmax, tm);
    const double ystep = nice_step(std::max(ymax, 1.0) * 1.08, 6);
    ymax = ystep * std::ceil(std::max(ymax, 1.0) * 1.08 / ystep);
    const auto px = [&](double s) { return l + (w - l - r) * s / xmax; };
    const auto py = [&](double gib) { return h - b - (h - t - b) * gib / ymax; };
    // Ranks drawn: all up to 8, else the first, the last and six between.
    std::vector<size_t> drawn;
    const size_t n = curves.size();
    for (size_t i = 0; i < n; ++i)
        if (n <= 8 || i == 0 || i + 1 == n || i % std::max<size_t>(1, n / 6) == 0) drawn.push_back(i);
    if (drawn.size() > 8) drawn.resize(8);
    Svg svg("chart-memory-time", w, h, "Memory over the step",
            fmt::format("Predicted allocated memory per GPU over one step of {} pipeline rank{}{}, against {:.1f} GiB "
                        "usable.",
                        drawn.size(), drawn.size() == 1 ? "" : "s",
                        measured.empty() ? "" : ", and the allocated and reserved memory a trace measured",
                        usable_bytes / kGiB));
    for (double g = 0; g <= ymax * 1.0001; g += ystep) {
        svg.line(l, py(g), w - r, py(g), "grid");
        svg.text(l - 6, py(g) + 4, fmt::format("{:g}", g), "axis", Svg::Anchor::end);
    }
    svg.text(8, t - 6, measured.empty() ? "GiB per GPU (allocated)" : "GiB per GPU", "axis");
    const double xstep = nice_step(xmax, 6);
    for (double s = 0; s <= xmax * 1.0001; s += xstep)
        svg.text(px(s), h - b + 16, fmt::format("{:g}", s), "axis", Svg::Anchor::middle);
    svg.text((l + w - r) / 2, h - 10, "seconds into the step", "axis", Svg::Anchor::middle);
    svg.line(l, py(usable_bytes / kGiB), w - r, py(usable_bytes / kGiB), "capacity");
    svg.text(w - r - 4, py(usable_bytes / kGiB) - 5, fmt::format("usable {:.1f} GiB", usable_bytes / kGiB), "note",
             Svg::Anchor::end);
    // The curves are piecewise linear: their points joined.
    const auto steps_of = [&](const std::vector<std::pair<double, double>>& pts) {
        std::vector<std::pair<double, double>> xy;
        for (const auto& [tm, v] : pts) xy.push_back({px(tm), py(v / kGiB)});
        return xy;
    };
    for (size_t k = 0; k < drawn.size(); ++k) {
        const MemoryCurve& c = curves[drawn[k]];
        svg.polyline(steps_of(c.points), fmt::format("memline{}", k % 8));
        const double y = t + 10 + static_cast<double>(k) * 20;
        svg.rect(w - r + 14, y + 4, 12, 4, fmt::format("memkey{}", k % 8),
                 fmt::format("rank {}: peak {:.1f} GiB", c.rank, c.peak_bytes / kGiB));
        svg.text(w - r + 32, y + 10, fmt::format("rank {} ({:.1f} GiB)", c.rank, c.peak_bytes / kGiB), "legend");
    }
    if (!measured.empty()) {
        // Reserved under allocated, so that the allocated line stays on top;
        // the legend lists allocated first, after the predicted ranks.
        svg.polyline(steps_of(measured.reserved), "memmeasuredresv");
        svg.polyline(steps_of(measured.allocated), "memmeasured");
        const std::string where = measured.step >= 0 ? fmt::format("ProfilerStep#{}", measured.step) : "its timeline";
        const struct {
            const char *key, *what, *label;
            double peak;
        } keys[] = {{"memkeymeasured", "allocated", "measured alloc.", measured.peak_allocated_bytes},
                    {"memkeymeasuredresv", "reserved", "measured reserved", measured.peak_reserved_bytes}};
        for (int k = 0; k < 2; ++k) {
            const double y = t + 10 + static_cast<double>(drawn.size() + k) * 20;
            svg.rect(w - r + 14, y + 4, 12, 4, keys[k].key,
                     fmt::format("measured {} (rank {} of {}, {}): peak {:.2f} GiB", keys[k].what, measured.rank,
                                 measured.source, where, keys[k].peak / kGiB));
            svg.text(w - r + 32, y + 10, keys[k].label, "legend");
        }
    }
    return svg.str();
}

}  // namespace lostflops
