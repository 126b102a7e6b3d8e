// The text tables of trace results (fmt): per rank (the breakdown, kernels
// by category and the top kernels of each, idle time by stream, launches,
// collectives, iterations) up to kMaxDetailedRanks ranks one by one, else
// summed; up to kMaxListedRanks ranks a row each, else the spread of each
// column; then the cross-rank answers and the triage
// (trace_report_cluster.cpp). The JSON: trace_report_json.cpp.
#include "lostflops/trace_report.h"
#include "trace/trace_report_text.h"
#include "trace/trace_text.h"

#include <fmt/format.h>

#include <algorithm>

namespace lostflops::trace {
namespace {

using detail::pct;

std::string overlap_text(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", *v) : "-"; }

// Categories, each followed by its costliest kernels.
void categories_table(std::string& out, const std::vector<CategoryTotal>& cats, const std::vector<TopKernel>& top,
                      const std::string& title) {
    double total = 0;
    for (const auto& c : cats) total += c.time_us;
    out += fmt::format("\n{} (under each, its costliest kernels)\n  {:<28} {:>9} {:>12} {:>8}\n", title, "category",
                       "kernels", "time_ms", "share");
    for (const auto& c : cats) {
        out += fmt::format("  {:<28} {:>9} {:>12.3f} {:>7.1f}%\n", c.name, c.count, c.time_us / 1e3,
                           pct(c.time_us, total));
        for (const auto& k : top) {
            if (k.category != c.name) continue;
            out += fmt::format("    {:>34} {:>12.3f} {:>7.1f}%  {}\n", k.count, k.time_us / 1e3, pct(k.time_us, c.time_us),
                               detail::cut_name(k.name, 90));
        }
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
        const std::string name = detail::cut_name(k.name, 80);
        out += fmt::format("  {:>7} {:>7} {:>10.1f} {:>9.1f} {:>10.1f}  {}\n", k.count, k.launch_bound, k.launch_us,
                           k.gpu_us, k.delay_us, name);
    }
}

// Achieved bandwidth per collective (trace.h CollectiveStats).
void collective_table(std::string& out, const std::vector<CollectiveStats>& cs, const std::string& who) {
    if (cs.empty()) return;
    out += fmt::format("\nCollectives with recorded sizes, {} (bus bandwidth as nccl-tests defines it)\n"
                       "  {:<16} {:>7} {:>6} {:>12} {:>11} {:>11} {:>11}\n",
                       who, "collective", "calls", "ranks", "MB", "time_ms", "algbw_GB/s", "busbw_GB/s");
    for (const auto& c : cs) {
        out += fmt::format("  {:<16} {:>7} {:>6} {:>12.1f} {:>11.3f} {:>11.2f} {:>11.2f}\n", c.collective, c.calls,
                           c.group_size, c.bytes / 1e6, c.time_us / 1e3, c.algbw_gbps, c.busbw_gbps);
    }
}


void iterations_table(std::string& out, const RankReport& r) {
    if (r.iterations.empty()) return;
    out += fmt::format("\nIterations, rank {}\n  {:>8} {:>10} {:>8} {:>12} {:>11} {:>9} {:>9} {:>9}\n", r.rank, "step",
                       "cpu_ms", "kernels", "gpu_span_ms", "compute_ms", "comm_ms", "comm_exp", "idle_ms");
    for (const auto& i : r.iterations) {
        out += fmt::format("  {:>8} {:>10.3f} {:>8} {:>12.3f} {:>11.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", i.number,
                           i.cpu_us / 1e3, i.kernels, i.gpu_span_us / 1e3, i.compute_us / 1e3, i.comm_us / 1e3,
                           i.exposed_comm_us / 1e3, i.idle_us / 1e3);
    }
    if (r.steps_total > static_cast<int64_t>(r.iterations.size()))
        out += fmt::format("  ... {} steps in the trace, the first {} kept in its summary\n", r.steps_total,
                           r.iterations.size());
}

// The allocator's peaks (trace_memory.h) of the ranks whose traces have
// [memory] events: every rank up to kMaxListedRanks, else the highest.
void memory_table(std::string& out, const std::vector<RankReport>& ranks) {
    std::vector<const RankReport*> with;
    for (const auto& r : ranks)
        if (r.memory) with.push_back(&r);
    if (with.empty()) return;
    out += "\nMemory (the CUDA caching allocator's [memory] events; GiB = 2^30 bytes; at_ms: the allocated peak from "
           "the start of its ProfilerStep)\n";
    if (with.size() > kMaxListedRanks) {
        std::stable_sort(with.begin(), with.end(), [](const RankReport* a, const RankReport* b) {
            return a->memory->peak_allocated_bytes > b->memory->peak_allocated_bytes;
        });
        out += fmt::format("  {} ranks; the {} highest allocated peaks (--format json lists every rank)\n", with.size(),
                           kMaxListedRanks);
        with.resize(kMaxListedRanks);
    }
    out += fmt::format("  {:>5} {:>6} {:>14} {:>14} {:>9} {:>5}  {}\n", "rank", "device", "peak_alloc_GiB",
                       "peak_resv_GiB", "at_ms", "step", "op at the allocated peak");
    for (const RankReport* r : with) {
        const DeviceMemory& m = *r->memory;
        std::string op = m.peak_op.empty() ? "-" : detail::cut_name(m.peak_op, 60);
        if (!m.peak_op_context.empty() && m.peak_op_context != m.peak_op)
            op += " (in " + detail::cut_name(m.peak_op_context, 80) + ")";
        out += fmt::format("  {:>5} {:>6} {:>14.2f} {:>14.2f} {:>9} {:>5}  {}\n", r->rank, m.device,
                           m.peak_allocated_bytes / kBytesPerGiB, m.peak_reserved_bytes / kBytesPerGiB,
                           m.peak_allocated_step_offset_us ? fmt::format("{:.2f}", *m.peak_allocated_step_offset_us / 1e3)
                                                           : "-",
                           m.peak_allocated_step ? std::to_string(*m.peak_allocated_step) : "-", op);
    }
}

void rank_rows(std::string& out, const ClusterReport& c) {
    out += fmt::format("  {:>5} {:>8} {:>11} {:>8} {:>9} {:>9} {:>8} {:>8} {:>10}  {}\n", "rank", "kernels", "span_ms",
                       "compute", "comm_exp", "mem_exp", "idle", "overlap", "step_ms", "file");
    for (const auto& r : c.rows) {
        const double s = r.kernel_span_us;
        out += fmt::format("  {:>5} {:>8} {:>11.3f} {:>7.1f}% {:>8.1f}% {:>8.1f}% {:>7.1f}% {:>8} {:>10}  {}\n", r.rank,
                           r.kernels, s / 1e3, pct(r.compute_us, s), pct(r.exposed_comm_us, s),
                           pct(r.exposed_memory_us, s), pct(r.idle_us, s), overlap_text(r.comm_comp_overlap_pct),
                           r.mean_step_us > 0 ? fmt::format("{:.3f}", r.mean_step_us / 1e3) : "-", printable(r.source));
    }
}

// Many ranks: the spread of each column instead of a row per rank.
void rank_spread(std::string& out, const ClusterReport& c) {
    const auto col = [&](const char* name, auto value) {
        std::vector<double> v;
        for (const auto& r : c.rows) v.push_back(value(r));
        std::sort(v.begin(), v.end());
        const auto q = [&](double p) { return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)]; };
        out += fmt::format("  {:<16} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n", name, v.front(), q(0.1),
                           q(0.5), q(0.9), v.back());
    };
    out += fmt::format("  {} ranks: the spread of each column (--format json lists every rank)\n  {:<16} {:>10} {:>10} "
                       "{:>10} {:>10} {:>10}\n",
                       c.rows.size(), "", "min", "p10", "median", "p90", "max");
    col("span_ms", [](const RankRow& r) { return r.kernel_span_us / 1e3; });
    col("compute %", [](const RankRow& r) { return pct(r.compute_us, r.kernel_span_us); });
    col("comm_exp %", [](const RankRow& r) { return pct(r.exposed_comm_us, r.kernel_span_us); });
    col("mem_exp %", [](const RankRow& r) { return pct(r.exposed_memory_us, r.kernel_span_us); });
    col("idle %", [](const RankRow& r) { return pct(r.idle_us, r.kernel_span_us); });
    col("step_ms", [](const RankRow& r) { return r.step_us / 1e3; });
    col("busy_ms", [](const RankRow& r) { return r.busy_us / 1e3; });
}

}  // namespace

std::string report_table(const TraceReport& t) {
    const ClusterReport& c = *t.cluster;
    std::string out = fmt::format("Temporal breakdown per rank ({} conventions), shares of the kernel span\n",
                                  detail::convention_of(c));
    if (c.rows.size() <= kMaxListedRanks) rank_rows(out, c);
    else rank_spread(out, c);
    out += "  (compute + comm_exp + mem_exp + idle = span; overlap = communication time with compute running;\n"
           "   step_ms = mean ProfilerStep duration; definitions in docs/traces.md)\n";
    if (t.ranks != nullptr) memory_table(out, *t.ranks);
    if (t.ranks != nullptr && t.ranks->size() <= kMaxDetailedRanks) {
        for (const auto& r : *t.ranks) {
            categories_table(out, r.categories, r.top_kernels,
                             fmt::format("Kernels by category, rank {} ({})", r.rank, printable(r.source)));
            idle_table(out, r);
            launch_table(out, r);
            collective_table(out, r.collectives, fmt::format("rank {}", r.rank));
            iterations_table(out, r);
        }
    } else {
        categories_table(out, c.categories, c.top_kernels, fmt::format("Kernels by category, all {} ranks", c.ranks));
        detail::summed_idle_and_launches(out, c);
        collective_table(out, c.collectives, fmt::format("all {} ranks", c.ranks));
    }
    detail::cluster_tables(out, c);
    if (t.triage != nullptr) detail::triage_table(out, *t.triage);
    if (t.cmp != nullptr) detail::job_table(out, *t.cmp);
    return out;
}

std::string report_table(const std::vector<RankReport>& ranks) {
    const ClusterReport c = cluster_report(ranks);
    const auto items = triage(c, nullptr, {});
    return report_table(TraceReport{&ranks, &c, &items, nullptr});
}

}  // namespace lostflops::trace
