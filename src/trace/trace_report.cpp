// Renderings of trace results: JSON (nlohmann) and text tables (fmt). The
// per-rank JSON objects are the summary objects (trace_summary.cpp), so the
// output of `trace --format json` and of `trace merge --format json` agree.
#include "lostflops/trace_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>

namespace lostflops::trace {
namespace {

using nlohmann::json;

std::string convention(const std::vector<RankReport>& ranks) {
    bool hta = false, native = false;
    for (const auto& r : ranks) (r.hta_compatible ? hta : native) = true;
    if (hta && native) return "mixed";
    return hta ? "hta-compatible" : "native";
}

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

std::string overlap_text(const RankReport& r) {
    return r.comm_comp_overlap_pct ? fmt::format("{:.1f}%", *r.comm_comp_overlap_pct) : "-";
}

void categories_table(std::string& out, const std::vector<CategoryTotal>& cats, const std::string& title) {
    double total = 0;
    for (const auto& c : cats) total += c.time_us;
    out += fmt::format("\n{}\n  {:<28} {:>9} {:>12} {:>8}\n", title, "category", "kernels", "time_ms", "share");
    for (const auto& c : cats) {
        out += fmt::format("  {:<28} {:>9} {:>12.3f} {:>7.1f}%\n", c.name, c.count, c.time_us / 1e3,
                           pct(c.time_us, total));
    }
}

}  // namespace

std::string report_json(const std::vector<RankReport>& ranks, const std::vector<Straggler>& stragglers,
                        const JobComparison* cmp) {
    json j;
    j["convention"] = convention(ranks);
    j["ranks"] = json::parse(summary_to_json(ranks))["ranks"];
    json s = json::array();
    for (const auto& x : stragglers) {
        s.push_back({{"rank", x.rank}, {"metric", x.metric}, {"value_us", x.value_us},
                     {"median_us", x.median_us}, {"deviation_pct", x.deviation_pct}});
    }
    j["stragglers"] = s;
    if (cmp != nullptr) {
        json walls = json::array();
        for (const auto& w : cmp->walls) {
            walls.push_back({{"wall", w.wall}, {"measured_s", w.measured_s}, {"predicted_s", w.predicted_s}});
        }
        j["job"] = {{"measured_step_s", cmp->measured_step_s}, {"predicted_step_s", cmp->predicted_step_s},
                    {"measured_mfu", cmp->measured_mfu}, {"predicted_mfu", cmp->predicted_mfu},
                    {"step_source", cmp->step_source}, {"walls", walls}};
    }
    return j.dump(2) + "\n";
}

std::string report_table(const std::vector<RankReport>& ranks, const std::vector<Straggler>& stragglers,
                         const JobComparison* cmp) {
    std::string out = fmt::format("Temporal breakdown per rank ({} conventions), shares of the kernel span\n",
                                  convention(ranks));
    out += fmt::format("  {:>5} {:>8} {:>11} {:>8} {:>9} {:>9} {:>8} {:>8} {:>10}  {}\n", "rank", "kernels",
                       "span_ms", "compute", "comm_exp", "mem_exp", "idle", "overlap", "step_ms", "file");
    for (const auto& r : ranks) {
        const double s = r.kernel_span_us;
        out += fmt::format("  {:>5} {:>8} {:>11.3f} {:>7.1f}% {:>8.1f}% {:>8.1f}% {:>7.1f}% {:>8} {:>10}  {}\n",
                           r.rank, r.kernels, s / 1e3, pct(r.compute_us, s), pct(r.exposed_comm_us, s),
                           pct(r.exposed_memory_us, s), pct(r.idle_us, s), overlap_text(r),
                           r.mean_step_us > 0 ? fmt::format("{:.3f}", r.mean_step_us / 1e3) : "-", r.source);
    }
    out += "  (compute + comm_exp + mem_exp + idle = span; overlap = communication time with compute running;\n"
           "   step_ms = mean ProfilerStep duration; definitions in README, Traces)\n";
    if (ranks.size() <= 4) {
        for (const auto& r : ranks) {
            categories_table(out, r.categories, fmt::format("Kernels by category, rank {} ({})", r.rank, r.source));
            if (r.iterations.empty()) continue;
            out += fmt::format("\nIterations, rank {}\n  {:>8} {:>10} {:>8} {:>12} {:>11} {:>9} {:>9}\n", r.rank,
                               "step", "cpu_ms", "kernels", "gpu_span_ms", "compute_ms", "comm_ms", "idle_ms");
            for (const auto& i : r.iterations) {
                out += fmt::format("  {:>8} {:>10.3f} {:>8} {:>12.3f} {:>11.3f} {:>9.3f} {:>9.3f}\n", i.number,
                                   i.cpu_us / 1e3, i.kernels, i.gpu_span_us / 1e3, i.compute_us / 1e3,
                                   i.comm_us / 1e3, i.idle_us / 1e3);
            }
        }
    } else {
        std::map<std::string, CategoryTotal> all;
        for (const auto& r : ranks) {
            for (const auto& c : r.categories) {
                auto& t = all[c.name];
                t.name = c.name;
                t.category = c.category;
                t.count += c.count;
                t.time_us += c.time_us;
            }
        }
        std::vector<CategoryTotal> v;
        for (auto& [_, t] : all) v.push_back(t);
        std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.time_us > b.time_us; });
        categories_table(out, v, fmt::format("Kernels by category, all {} ranks", ranks.size()));
    }
    if (!stragglers.empty()) {
        out += fmt::format("\nStragglers (furthest from the median of all ranks; waiting = idle + exposed "
                           "communication)\n  {:>5} {:<11} {:>12} {:>12} {:>9}\n",
                           "rank", "metric", "value_ms", "median_ms", "dev");
        for (const auto& s : stragglers) {
            out += fmt::format("  {:>5} {:<11} {:>12.3f} {:>12.3f} {:>+8.1f}%\n", s.rank, s.metric,
                               s.value_us / 1e3, s.median_us / 1e3, s.deviation_pct);
        }
    }
    if (cmp != nullptr) {
        out += fmt::format("\nMeasured vs predicted (step time from {})\n", cmp->step_source);
        out += fmt::format("  {:<46} {:>12} {:>12}\n", "", "measured", "predicted");
        out += fmt::format("  {:<46} {:>12.4f} {:>12.4f}\n", "step time (s)", cmp->measured_step_s,
                           cmp->predicted_step_s);
        out += fmt::format("  {:<46} {:>11.1f}% {:>11.1f}%\n", "MFU", 100 * cmp->measured_mfu,
                           100 * cmp->predicted_mfu);
        for (const auto& w : cmp->walls) {
            out += fmt::format("  {:<46} {:>12.4f} {:>12.4f}\n", w.wall + " (s)", w.measured_s, w.predicted_s);
        }
    }
    return out;
}

}  // namespace lostflops::trace
