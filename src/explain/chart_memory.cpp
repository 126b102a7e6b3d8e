// Memory per GPU of every pipeline rank as stacked bars (weights, gradients,
// optimizer state, activations, logits, buffers; estimate/memory.cpp) against
// the usable HBM as a line.
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

}  // namespace lostflops
