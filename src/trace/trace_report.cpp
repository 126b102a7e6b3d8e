// Renderings of trace results: JSON (nlohmann) and text tables (fmt). The
// per-rank JSON objects are the summary objects (trace_summary.cpp), so the
// output of `trace --format json` and of `trace merge --format json` agree.
#include "lostflops/trace_report.h"
#include "lostflops/trace_summary.h"
#include "trace/trace_text.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
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

// Idle time per stream by cause (trace.h StreamIdle).
void idle_table(std::string& out, const RankReport& r) {
    if (r.idle_breakdown.empty()) return;
    out += fmt::format("\nIdle time by stream, rank {} (host wait: launched after the previous kernel ended; "
                       "kernel wait: gap < {:g} us; other)\n  {:>8} {:>8} {:>10} {:>10} {:>12} {:>10}\n",
                       r.rank, kKernelWaitThresholdUs, "stream", "kernels", "idle_ms", "host_wait",
                       "kernel_wait", "other");
    for (const auto& s : r.idle_breakdown) {
        const double idle = s.idle_us();
        out += fmt::format("  {:>8} {:>8} {:>10.3f} {:>9.1f}% {:>11.1f}% {:>9.1f}%\n", s.stream, s.kernels,
                           idle / 1e3, pct(s.host_wait_us, idle), pct(s.kernel_wait_us, idle),
                           pct(s.other_us, idle));
    }
}

// CUDA launches (trace.h LaunchStats).
void launch_table(std::string& out, const RankReport& r) {
    const LaunchStats& l = r.launches;
    if (l.launched == 0) return;
    out += fmt::format("\nCUDA launches, rank {}: {} kernels with their CPU launch; mean launch {:.1f} us, GPU "
                       "{:.1f} us, delay {:.1f} us (median {:.1f}); launch bound (GPU shorter than the launch): "
                       "{} ({:.1f}%), {:.3f} ms of GPU time\n",
                       r.rank, l.launched, l.mean_launch_us, l.mean_gpu_us, l.mean_delay_us, l.median_delay_us,
                       l.launch_bound, pct(static_cast<double>(l.launch_bound), static_cast<double>(l.launched)),
                       l.launch_bound_gpu_us / 1e3);
    out += fmt::format("  {:>7} {:>7} {:>10} {:>9} {:>10}  {}\n", "calls", "bound", "launch_us", "gpu_us",
                       "delay_us", "kernel");
    for (const auto& k : l.kernels) {
        std::string name = printable(k.name.size() > 80 ? k.name.substr(0, 77) + "..." : k.name);
        out += fmt::format("  {:>7} {:>7} {:>10.1f} {:>9.1f} {:>10.1f}  {}\n", k.count, k.launch_bound, k.launch_us,
                           k.gpu_us, k.delay_us, name);
    }
}

// Achieved bandwidth per collective (trace.h CollectiveStats).
void collective_table(std::string& out, const RankReport& r) {
    if (r.collectives.empty()) return;
    out += fmt::format("\nCollectives with recorded sizes, rank {} (bus bandwidth as nccl-tests defines it)\n"
                       "  {:<16} {:>7} {:>6} {:>12} {:>11} {:>11} {:>11}\n",
                       r.rank, "collective", "calls", "ranks", "MB", "time_ms", "algbw_GB/s", "busbw_GB/s");
    for (const auto& c : r.collectives) {
        out += fmt::format("  {:<16} {:>7} {:>6} {:>12.1f} {:>11.3f} {:>11.2f} {:>11.2f}\n", c.collective, c.calls,
                           c.group_size, c.bytes / 1e6, c.time_us / 1e3, c.algbw_gbps, c.busbw_gbps);
    }
}

}  // namespace

std::string report_json(const std::vector<RankReport>& ranks, const std::vector<Straggler>& stragglers,
                        const JobComparison* cmp) {
    json j;
    j["convention"] = convention(ranks);
    json rs = json::array();
    for (const auto& r : ranks) rs.push_back(json::parse(rank_json(r)));
    j["ranks"] = std::move(rs);
    json s = json::array();
    for (const auto& x : stragglers) {
        s.push_back({{"rank", x.rank}, {"metric", x.metric}, {"value_us", x.value_us},
                     {"median_us", x.median_us}, {"deviation_pct", x.deviation_pct}});
    }
    j["stragglers"] = s;
    json sk = json::array();
    for (const auto& x : collective_skew(ranks)) {
        sk.push_back({{"step", x.step}, {"ranks", x.ranks}, {"skew_us", x.skew_us},
                      {"latest_rank", x.latest_rank}, {"earliest_rank", x.earliest_rank}});
    }
    j["collective_skew"] = sk;
    if (cmp != nullptr) {
        json walls = json::array();
        for (const auto& w : cmp->walls) {
            walls.push_back({{"wall", w.wall}, {"measured_s", w.measured_s}, {"predicted_s", w.predicted_s}});
        }
        j["job"] = {{"measured_step_s", cmp->measured_step_s}, {"predicted_step_s", cmp->predicted_step_s},
                    {"measured_mfu", cmp->measured_mfu}, {"predicted_mfu", cmp->predicted_mfu},
                    {"step_source", cmp->step_source}, {"walls", walls}};
    }
    // Kernel names are the trace's bytes: invalid UTF-8 becomes U+FFFD, not an error.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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
                           r.mean_step_us > 0 ? fmt::format("{:.3f}", r.mean_step_us / 1e3) : "-", printable(r.source));
    }
    out += "  (compute + comm_exp + mem_exp + idle = span; overlap = communication time with compute running;\n"
           "   step_ms = mean ProfilerStep duration; definitions in README, Traces)\n";
    if (ranks.size() <= 4) {
        for (const auto& r : ranks) {
            categories_table(out, r.categories, fmt::format("Kernels by category, rank {} ({})", r.rank, printable(r.source)));
            idle_table(out, r);
            launch_table(out, r);
            collective_table(out, r);
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
    const auto skew = collective_skew(ranks);
    if (!skew.empty()) {
        out += fmt::format("\nCollective start skew per step (first communication kernel of the step; the latest "
                           "rank makes the others wait)\n  {:>8} {:>6} {:>10} {:>7} {:>9}\n",
                           "step", "ranks", "skew_ms", "latest", "earliest");
        const std::size_t shown = std::min<std::size_t>(skew.size(), 20);
        for (std::size_t i = 0; i < shown; ++i) {
            const auto& x = skew[i];
            out += fmt::format("  {:>8} {:>6} {:>10.3f} {:>7} {:>9}\n", x.step, x.ranks, x.skew_us / 1e3,
                               x.latest_rank, x.earliest_rank);
        }
        if (skew.size() > shown) out += fmt::format("  ... and {} more steps (--format json lists all)\n", skew.size() - shown);
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
