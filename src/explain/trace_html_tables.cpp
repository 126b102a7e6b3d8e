// The tables of the traces' HTML page (contract in trace_html_tables.h):
// the same rows as the text output, as HTML tables with captions.
#include "explain/trace_html_tables.h"

#include <fmt/format.h>

#include <initializer_list>

#include "explain/charts.h"
#include "explain/svg.h"
#include "lostflops/terminal_text.h"
#include "lostflops/trace_memory.h"
#include "trace/trace_text.h"

namespace lostflops::trace_html {
namespace {

double pct(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }
std::string ms(double us) { return fmt::format("{:.3f}", us / 1e3); }
std::string opt(const std::optional<double>& v, const char* f = "{:.1f}") {
    return v ? fmt::format(fmt::runtime(f), *v) : "—";
}

// A table: caption, header cells, then rows of escaped cells.
class Table {
public:
    Table(const std::string& caption, std::initializer_list<const char*> head) {
        html_ = "<table><caption>" + esc(caption) + "</caption><thead><tr>";
        for (const char* h : head) html_ += fmt::format("<th scope=\"col\">{}</th>", h);
        html_ += "</tr></thead><tbody>";
    }
    void row(std::initializer_list<std::string> cells) {
        html_ += "<tr>";
        for (const auto& c : cells) html_ += "<td>" + c + "</td>";
        html_ += "</tr>";
    }
    std::string done() { return scroll_table(html_ + "</tbody></table>"); }

private:
    std::string html_;
};

std::string categories(const std::vector<trace::CategoryTotal>& cats, const std::vector<trace::TopKernel>& top,
                       const std::string& who) {
    double total = 0;
    for (const auto& c : cats) total += c.time_us;
    Table t("Kernels by category, " + who + ", each followed by its costliest kernels",
            {"category or kernel", "kernels", "time ms", "share"});
    for (const auto& c : cats) {
        t.row({"<b>" + esc(c.name) + "</b>", std::to_string(c.count), ms(c.time_us),
               fmt::format("{:.1f} %", pct(c.time_us, total))});
        for (const auto& k : top) {
            if (k.category != c.name) continue;
            t.row({"&nbsp;&nbsp;" + esc(k.name.size() > 160 ? k.name.substr(0, 157) + "..." : k.name),
                   std::to_string(k.count), ms(k.time_us), fmt::format("{:.1f} % of {}", pct(k.time_us, c.time_us), esc(c.name))});
        }
    }
    return t.done();
}

std::string collectives(const std::vector<trace::CollectiveStats>& cs, const std::string& who) {
    if (cs.empty()) return "";
    Table t("Collectives with recorded sizes, " + who + " (bus bandwidth as nccl-tests defines it)",
            {"collective", "calls", "ranks", "MB", "time ms", "algbw GB/s", "busbw GB/s"});
    for (const auto& c : cs) {
        t.row({esc(c.collective), std::to_string(c.calls), std::to_string(c.group_size), fmt::format("{:.1f}", c.bytes / 1e6),
               ms(c.time_us), fmt::format("{:.2f}", c.algbw_gbps), fmt::format("{:.2f}", c.busbw_gbps)});
    }
    return t.done();
}

std::string slow_table(const std::vector<trace::SlowOne>& v, bool nodes, const std::string& caption) {
    Table t(caption, {nodes ? "node" : "rank", nodes ? "ranks" : "node", "busy ms", "reference ms", "late ms",
                      "held back ms", "z", "phase"});
    for (const auto& s : v) {
        t.row({nodes ? esc(s.node) : std::to_string(s.rank), nodes ? esc(s.ranks) : esc(s.node), ms(s.busy_us),
               ms(s.median_busy_us), ms(s.late_us), ms(s.held_back_us), opt(s.z),
               esc(s.phase) + fmt::format(" (+{} ms){}", ms(s.phase_excess_us), s.on_slow_node ? "; its node is slow" : "")});
    }
    return t.done();
}

}  // namespace

std::string esc(const std::string& s) { return xml_escape(terminal_text(s)); }

std::string triage(const std::vector<trace::TriageItem>& items) {
    Table t("Ranked by cost: share of GPU time (of the median step for ranks, nodes and step spread)",
            {"cost", "what", "evidence", "what to try"});
    for (const auto& x : items) {
        const std::string cost = x.key == "lever" ? fmt::format("{:+.1f} % MFU", x.cost_pct) : fmt::format("{:.1f} %", x.cost_pct);
        t.row({cost, esc(x.what), esc(x.evidence), esc(x.to_try)});
    }
    return t.done();
}

std::string rank_rows(const std::vector<trace::RankRow>& rows, std::size_t all) {
    Table t(rows.size() < all ? fmt::format("Per rank, ms: the {} of {} ranks most held back (--format json lists all)",
                                            rows.size(), all)
                              : "Per rank, ms (text alternative of the chart)",
            {"rank", "node", "kernel span", "compute", "exposed comm", "exposed copies", "idle", "comm/compute overlap",
             "step", "busy", "held back", "file"});
    for (const auto& r : rows) {
        t.row({std::to_string(r.rank), esc(r.node), ms(r.kernel_span_us), ms(r.compute_us), ms(r.exposed_comm_us),
               ms(r.exposed_memory_us), ms(r.idle_us), opt(r.comm_comp_overlap_pct, "{:.1f} %"), ms(r.step_us),
               ms(r.busy_us), ms(r.held_back_us), esc(r.source)});
    }
    return t.done();
}

std::string cross_rank(const trace::ClusterReport& c) {
    std::string h;
    if (c.rows.size() > 1) {
        const std::string what = c.outlier_test
                                     ? fmt::format("Ranks that hold the others back (robust z of busy > {:g})",
                                                   trace::kOutlierZ)
                                     : "Ranks against the fastest (fewer than 3 ranks: no median to stand out from)";
        h += c.slow_ranks.empty() ? "<p>" + esc(what) + ": none.</p>" : slow_table(c.slow_ranks, false, what);
    }
    if (c.nodes >= 3) {
        h += c.slow_nodes.empty() ? fmt::format("<p>Nodes that hold the others back ({} nodes): none.</p>", c.nodes)
                                  : slow_table(c.slow_nodes, true, "Nodes that hold the others back");
    }
    if (!c.groups.empty()) {
        Table t("Collective start skew per process group (first communication kernel of each step)",
                {"group", "ranks", "steps", "median ms", "max ms", "latest rank", "times latest"});
        for (const auto& g : c.groups) {
            t.row({esc(g.group.size() > 120 ? g.group.substr(0, 117) + "..." : g.group), std::to_string(g.ranks),
                   std::to_string(g.steps), ms(g.median_skew_us), ms(g.max_skew_us), std::to_string(g.latest_rank),
                   std::to_string(g.latest_count)});
        }
        h += t.done();
    }
    if (!c.step_skew.empty()) {
        Table t("Collective start skew per step, all ranks", {"step", "ranks", "skew ms", "latest", "earliest"});
        for (const auto& s : c.step_skew)
            t.row({std::to_string(s.step), std::to_string(s.ranks), ms(s.skew_us), std::to_string(s.latest_rank),
                   std::to_string(s.earliest_rank)});
        h += t.done();
    }
    if (c.steps.size() >= 2 && c.rows.size() >= 2) {
        Table t(fmt::format("Step times over ranks (the step means spread {:.1f} % around their median)", c.step_spread_pct),
                {"step", "ranks", "mean ms", "max ms", "slowest", "max busy ms", "busiest"});
        for (const auto& s : c.steps)
            t.row({std::to_string(s.step), std::to_string(s.ranks), ms(s.mean_us), ms(s.max_us),
                   std::to_string(s.slowest_rank), ms(s.max_busy_us), std::to_string(s.busiest_rank)});
        h += t.done();
    }
    return h;
}

std::string per_rank(const trace::RankReport& r) {
    const std::string who = fmt::format("rank {}", r.rank);
    std::string h = categories(r.categories, r.top_kernels, who);
    if (!r.idle_breakdown.empty()) {
        Table t(fmt::format("Idle time by stream, {} (host wait: launched after the previous kernel ended; kernel "
                            "wait: gap < {:g} us; other)",
                            who, trace::kKernelWaitThresholdUs),
                {"stream", "kernels", "idle ms", "host wait", "kernel wait", "other"});
        for (const auto& s : r.idle_breakdown) {
            const double idle = s.idle_us();
            t.row({std::to_string(s.stream), std::to_string(s.kernels), ms(idle), fmt::format("{:.1f} %", pct(s.host_wait_us, idle)),
                   fmt::format("{:.1f} %", pct(s.kernel_wait_us, idle)), fmt::format("{:.1f} %", pct(s.other_us, idle))});
        }
        h += t.done();
    }
    const trace::LaunchStats& l = r.launches;
    if (l.launched > 0) {
        Table t(fmt::format("CUDA launches, {}: {} kernels with their CPU launch; mean launch {:.1f} us, GPU {:.1f} us, "
                            "delay {:.1f} us (median {:.1f}); launch bound: {} ({:.1f} %), {:.3f} ms of GPU time",
                            who, l.launched, l.mean_launch_us, l.mean_gpu_us, l.mean_delay_us, l.median_delay_us,
                            l.launch_bound, pct(static_cast<double>(l.launch_bound), static_cast<double>(l.launched)),
                            l.launch_bound_gpu_us / 1e3),
                {"calls", "launch bound", "launch us", "GPU us", "delay us", "kernel"});
        for (const auto& k : l.kernels)
            t.row({std::to_string(k.count), std::to_string(k.launch_bound), fmt::format("{:.1f}", k.launch_us),
                   fmt::format("{:.1f}", k.gpu_us), fmt::format("{:.1f}", k.delay_us), esc(k.name)});
        h += t.done();
    }
    h += collectives(r.collectives, who);
    if (!r.iterations.empty()) {
        Table t("Iterations, " + who, {"step", "CPU ms", "kernels", "GPU span ms", "compute ms", "comm ms",
                                       "exposed comm ms", "idle ms"});
        for (const auto& i : r.iterations)
            t.row({std::to_string(i.number), ms(i.cpu_us), std::to_string(i.kernels), ms(i.gpu_span_us), ms(i.compute_us),
                   ms(i.comm_us), ms(i.exposed_comm_us), ms(i.idle_us)});
        h += t.done();
    }
    return h;
}

std::string summed(const trace::ClusterReport& c) {
    const std::string who = fmt::format("all {} ranks", c.ranks);
    std::string h = categories(c.categories, c.top_kernels, who);
    const double waits = c.host_wait_us + c.kernel_wait_us + c.other_wait_us;
    h += fmt::format("<p>Idle time by stream, {}: {} ms; host wait {:.1f} %, kernel wait {:.1f} %, other {:.1f} %. CUDA "
                     "launches: {} kernels with their CPU launch; launch bound {} ({:.1f} %), {} ms of GPU time.</p>",
                     who, ms(waits), pct(c.host_wait_us, waits), pct(c.kernel_wait_us, waits), pct(c.other_wait_us, waits),
                     c.launched, c.launch_bound, pct(static_cast<double>(c.launch_bound), static_cast<double>(c.launched)),
                     ms(c.launch_bound_gpu_us));
    return h + collectives(c.collectives, who);
}

std::string job(const trace::JobComparison& c) {
    // As the text's "Measured vs predicted" (trace/trace_report_cluster.cpp
    // job_table): the as-profiled column when the traces count the
    // profiler's host events, no measured MFU past the peak, the memory rows.
    const bool profiled = c.has_profiled();
    std::string h = fmt::format("<p>Step: measured {:.3f} s ({}), predicted {:.3f} s; MFU measured {}, predicted "
                                "{:.1f} %.</p>",
                                c.measured_step_s, esc(c.step_source), c.predicted_step_s,
                                c.measured_mfu > 1 ? std::string("n/a") : fmt::format("{:.1f} %", 100 * c.measured_mfu),
                                100 * c.predicted_mfu);
    if (profiled)
        h += fmt::format("<p>As profiled (the host {:.4f} s slower a step, the profiler's own cost per host event it "
                         "recorded and its stalls{}): predicted {:.3f} s, MFU {:.1f} %.</p>",
                         c.profiler_host_s,
                         c.host_speed > 0 ? fmt::format("; its operators at {:.2f}x the calibration trace's CPU time",
                                                        c.host_speed)
                                          : std::string(),
                         c.predicted_profiled_step_s, 100 * c.predicted_profiled_mfu);
    if (!c.profiled_settings.empty())
        h += "<p>As profiled, under the stack the traces show: " + esc(fmt::format("{}", fmt::join(c.profiled_settings, ", "))) +
             ".</p>";
    if (c.stages > 1)
        h += fmt::format("<p>Measured walls: pipeline stage {}, the busiest of the {} in the traces.</p>",
                         c.measured_stage, c.stages);
    for (const auto& w : c.warnings) h += "<p class=\"warn\">Warning: " + esc(w) + "</p>";
    const char* caption = "Seconds per step by wall (text alternative of the chart)";
    Table t = profiled ? Table(caption, {"wall", "measured s", "predicted s", "as profiled s"})
                       : Table(caption, {"wall", "measured s", "predicted s"});
    for (const auto& w : c.walls) {
        if (profiled)
            t.row({esc(w.wall), fmt::format("{:.4f}", w.measured_s), fmt::format("{:.4f}", w.predicted_s),
                   fmt::format("{:.4f}", w.predicted_profiled_s)});
        else
            t.row({esc(w.wall), fmt::format("{:.4f}", w.measured_s), fmt::format("{:.4f}", w.predicted_s)});
    }
    h += t.done();
    if (c.memory.empty()) return h;
    const char* mcaption =
        "Memory per GPU: the highest traced rank against the worst pipeline stage's predicted allocated and reserved";
    Table m = profiled ? Table(mcaption, {"memory", "rank", "measured GiB", "predicted GiB", "as profiled GiB"})
                       : Table(mcaption, {"memory", "rank", "measured GiB", "predicted GiB"});
    const auto gib = [](double b) { return fmt::format("{:.2f}", b / trace::kBytesPerGiB); };
    for (const auto& r : c.memory) {
        if (profiled)
            m.row({esc(r.memory), std::to_string(r.rank), gib(r.measured_bytes), gib(r.predicted_bytes),
                   gib(r.predicted_profiled_bytes)});
        else
            m.row({esc(r.memory), std::to_string(r.rank), gib(r.measured_bytes), gib(r.predicted_bytes)});
    }
    return h + m.done();
}

}  // namespace lostflops::trace_html
