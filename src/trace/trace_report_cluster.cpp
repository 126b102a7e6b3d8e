// Text of the cross-rank answers (include/lostflops/trace_cluster.h), the
// triage (trace_triage.h) and measured vs predicted (trace_compare.h).
#include <fmt/format.h>

#include <algorithm>

#include "trace/trace_report_text.h"
#include "lostflops/terminal_text.h"
#include "trace/trace_text.h"

namespace lostflops::trace::detail {
namespace {

constexpr std::size_t kShownSlow = 20, kShownGroups = 10, kShownSteps = 20;

std::string z_text(const std::optional<double>& z) { return z ? fmt::format("{:.1f}", *z) : "-"; }

// "1.19" for the whole trace's speed; "1.49 / 1.00 and 0.95 / 1.48" step by
// step, the first kShownSpeeds and then the count (JSON has them all).
std::string host_speed_words(const JobComparison& cmp) {
    constexpr std::size_t kShownSpeeds = 8;
    const auto& steps = cmp.step_host_speeds;
    if (steps.empty()) return fmt::format("{:.2f}", cmp.host_speed);
    std::string out;
    for (std::size_t k = 0; k < steps.size() && k < kShownSpeeds; ++k) {
        out += k == 0 ? "" : k + 1 == steps.size() ? " and " : ", ";
        out += fmt::format("{:.2f} / {:.2f}", steps[k].python, steps[k].autograd);
    }
    if (steps.size() > kShownSpeeds) out += fmt::format(", ... ({} steps)", steps.size());
    return out;
}

void slow_ranks(std::string& out, const ClusterReport& c) {
    if (c.rows.size() < 2) return;
    if (!c.outlier_test) {
        out += "\nRanks against the fastest (fewer than 3 ranks: no median to stand out from; busy = step - "
               "communication waited for, per step)\n";
    } else {
        out += fmt::format("\nRanks that hold the others back (robust z of busy > {:g}; busy = step - "
                           "communication waited for, per step; median busy {:.3f} ms)\n",
                           kOutlierZ, c.median_busy_us / 1e3);
    }
    if (c.slow_ranks.empty()) {
        out += "  none\n";
        return;
    }
    out += fmt::format("  {:>6} {:<14} {:>10} {:>10} {:>9} {:>12} {:>6}  {}\n", "rank", "node", "busy_ms", "ref_ms",
                       "late_ms", "held_back_ms", "z", "phase");
    for (std::size_t i = 0; i < c.slow_ranks.size() && i < kShownSlow; ++i) {
        const SlowOne& s = c.slow_ranks[i];
        out += fmt::format("  {:>6} {:<14} {:>10.3f} {:>10.3f} {:>9.3f} {:>12.3f} {:>6}  {} (+{:.3f} ms){}\n", s.rank,
                           cut_name(s.node, 14), s.busy_us / 1e3, s.median_busy_us / 1e3, s.late_us / 1e3,
                           s.held_back_us / 1e3, z_text(s.z), s.phase, s.phase_excess_us / 1e3,
                           s.on_slow_node ? "; its node is slow" : "");
    }
    if (c.slow_ranks.size() > kShownSlow)
        out += fmt::format("  ... and {} more (--format json lists all)\n", c.slow_ranks.size() - kShownSlow);
}

void slow_nodes(std::string& out, const ClusterReport& c) {
    if (c.nodes < 3) return;
    out += fmt::format("\nNodes that hold the others back ({} nodes; a node's busy = the median of its ranks')\n", c.nodes);
    if (c.slow_nodes.empty()) {
        out += "  none\n";
        return;
    }
    out += fmt::format("  {:<14} {:<12} {:>10} {:>10} {:>12} {:>6}  {}\n", "node", "ranks", "busy_ms", "median_ms",
                       "held_back_ms", "z", "phase");
    for (const auto& s : c.slow_nodes) {
        out += fmt::format("  {:<14} {:<12} {:>10.3f} {:>10.3f} {:>12.3f} {:>6}  {} (+{:.3f} ms)\n", cut_name(s.node, 14),
                           cut_name(s.ranks, 12), s.busy_us / 1e3, s.median_busy_us / 1e3, s.held_back_us / 1e3,
                           z_text(s.z), s.phase, s.phase_excess_us / 1e3);
    }
}

void groups(std::string& out, const ClusterReport& c) {
    if (c.groups.empty()) return;
    out += "\nCollective start skew per process group (first communication kernel of each step; the latest rank "
           "makes the others wait)\n";
    out += fmt::format("  {:>6} {:>6} {:>11} {:>10} {:>7} {:>6}  {}\n", "ranks", "steps", "median_ms", "max_ms",
                       "latest", "times", "group");
    for (std::size_t i = 0; i < c.groups.size() && i < kShownGroups; ++i) {
        const GroupSkew& g = c.groups[i];
        out += fmt::format("  {:>6} {:>6} {:>11.3f} {:>10.3f} {:>7} {:>6}  {}\n", g.ranks, g.steps, g.median_skew_us / 1e3,
                           g.max_skew_us / 1e3, g.latest_rank, g.latest_count, cut_name(g.group, 70));
    }
    if (c.groups.size() > kShownGroups)
        out += fmt::format("  ... and {} more groups (--format json lists all)\n", c.groups.size() - kShownGroups);
}

void steps(std::string& out, const ClusterReport& c) {
    if (!c.step_skew.empty()) {
        out += fmt::format("\nCollective start skew per step, all ranks\n  {:>8} {:>6} {:>10} {:>7} {:>9}\n", "step",
                           "ranks", "skew_ms", "latest", "earliest");
        for (std::size_t i = 0; i < c.step_skew.size() && i < kShownSteps; ++i) {
            const auto& x = c.step_skew[i];
            out += fmt::format("  {:>8} {:>6} {:>10.3f} {:>7} {:>9}\n", x.step, x.ranks, x.skew_us / 1e3, x.latest_rank,
                               x.earliest_rank);
        }
        if (c.step_skew.size() > kShownSteps)
            out += fmt::format("  ... and {} more steps (--format json lists all)\n", c.step_skew.size() - kShownSteps);
    }
    if (c.steps.size() < 2 || c.rows.size() < 2) return;
    out += fmt::format("\nStep times over ranks (the step means spread {:.1f} % around their median)\n  {:>8} {:>6} "
                       "{:>10} {:>10} {:>8} {:>12} {:>8}\n",
                       c.step_spread_pct, "step", "ranks", "mean_ms", "max_ms", "slowest", "max_busy_ms", "busiest");
    for (std::size_t i = 0; i < c.steps.size() && i < kShownSteps; ++i) {
        const StepStat& s = c.steps[i];
        out += fmt::format("  {:>8} {:>6} {:>10.3f} {:>10.3f} {:>8} {:>12.3f} {:>8}\n", s.step, s.ranks, s.mean_us / 1e3,
                           s.max_us / 1e3, s.slowest_rank, s.max_busy_us / 1e3, s.busiest_rank);
    }
    if (c.steps.size() > kShownSteps)
        out += fmt::format("  ... and {} more steps (--format json lists all)\n", c.steps.size() - kShownSteps);
}

}  // namespace

std::string cut_name(std::string_view name, std::size_t width) {
    return terminal_text(name.size() > width ? std::string(name.substr(0, width - 3)) + "..." : std::string(name));
}

std::string convention_of(const ClusterReport& c) {
    bool hta = false, native = false;
    for (const auto& r : c.rows) (r.hta_compatible ? hta : native) = true;
    if (hta && native) return "mixed";
    return hta ? "hta-compatible" : "native";
}

void summed_idle_and_launches(std::string& out, const ClusterReport& c) {
    const double waits = c.host_wait_us + c.kernel_wait_us + c.other_wait_us;
    if (waits > 0) {
        out += fmt::format("\nIdle time by stream, all {} ranks: {:.3f} ms; host wait {:.1f}%, kernel wait {:.1f}%, "
                           "other {:.1f}%\n",
                           c.ranks, waits / 1e3, pct(c.host_wait_us, waits), pct(c.kernel_wait_us, waits),
                           pct(c.other_wait_us, waits));
    }
    if (c.launched > 0) {
        out += fmt::format("CUDA launches, all ranks: {} kernels with their CPU launch, {:.1f} us per launch; launch "
                           "bound: {} ({:.1f}%), {:.3f} ms of GPU time\n",
                           c.launched, c.launch_us / static_cast<double>(c.launched), c.launch_bound,
                           pct(static_cast<double>(c.launch_bound), static_cast<double>(c.launched)),
                           c.launch_bound_gpu_us / 1e3);
    }
}

void cluster_tables(std::string& out, const ClusterReport& c) {
    slow_ranks(out, c);
    slow_nodes(out, c);
    groups(out, c);
    steps(out, c);
}

void triage_table(std::string& out, const std::vector<TriageItem>& items) {
    if (items.empty()) return;
    out += "\nWhat costs the most, and what to try (cost: share of GPU time; of the median step for ranks, nodes and "
           "step spread)\n";
    int n = 0;
    for (const auto& t : items) {
        if (t.key == "lever") continue;
        out += fmt::format("  {}. {:.1f}%  {}\n       {}\n       try: {}\n", ++n, t.cost_pct, t.what, t.evidence, t.to_try);
    }
    for (const auto& t : items) {
        if (t.key != "lever") continue;
        out += fmt::format("  estimate's lever for the job: {} ({}; {:+.1f}% MFU, relative)\n",
                           t.what.substr(t.what.find(": ") + 2), t.evidence, t.cost_pct);
    }
}

void job_table(std::string& out, const JobComparison& cmp) {
    out += fmt::format("\nMeasured vs predicted (step time from {})\n", cmp.step_source);
    // A job that does not describe the traced run is said first, and its
    // "measured" MFU (the job's FLOPs over the trace's step) is not printed
    // when it is beyond the peak.
    for (const auto& w : cmp.warnings)
        if (w.rfind("job-mismatch", 0) == 0) out += "  warning: " + terminal_text(w) + "\n";
    // The profiled step's column, when the traces count the profiler's host events.
    const bool profiled = cmp.has_profiled();
    const auto col = [profiled](double v) { return profiled ? fmt::format(" {:>12.4f}", v) : std::string(); };
    out += fmt::format("  {:<46} {:>12} {:>12}{}\n", "", "measured", "predicted",
                       profiled ? fmt::format(" {:>12}", "as profiled") : std::string());
    out += fmt::format("  {:<46} {:>12.4f} {:>12.4f}{}\n", "step time (s)", cmp.measured_step_s, cmp.predicted_step_s,
                       col(cmp.predicted_profiled_step_s));
    out += fmt::format("  {:<46} {:>12} {:>11.1f}%{}\n", "MFU",
                       cmp.measured_mfu > 1 ? std::string("n/a") : fmt::format("{:.1f}%", 100 * cmp.measured_mfu),
                       100 * cmp.predicted_mfu,
                       profiled ? fmt::format(" {:>11.1f}%", 100 * cmp.predicted_profiled_mfu) : std::string());
    for (const auto& w : cmp.walls)
        out += fmt::format("  {:<46} {:>12.4f} {:>12.4f}{}\n", w.wall + " (s)", w.measured_s, w.predicted_s,
                           col(w.predicted_profiled_s));
    if (cmp.profiler_host_s > 0)
        out += fmt::format("  (as profiled: the host {:.4f} s slower a step, the profiler's own cost per host event it "
                           "recorded and its stalls{})\n",
                           cmp.profiler_host_s,
                           cmp.host_speed > 0
                               ? fmt::format("; and its operators at {}x the calibration trace's CPU time (the "
                                             "median of as_strided, view, t, transpose, reshape, detach{})",
                                             host_speed_words(cmp),
                                             cmp.step_host_speeds.empty()
                                                 ? ""
                                                 : "; step by step, Python thread / autograd engine, each step "
                                                   "priced at its own and the column their mean")
                               : std::string());
    if (!cmp.profiled_settings.empty())
        out += fmt::format("  (as profiled: under the stack the traces show, {})\n",
                           terminal_text(fmt::format("{}", fmt::join(cmp.profiled_settings, ", "))));
    if (cmp.stages > 1)
        out += fmt::format("  (measured walls: pipeline stage {}, the busiest of the {} in the traces)\n",
                           cmp.measured_stage, cmp.stages);
    for (const auto& m : cmp.memory)
        out += fmt::format("  {:<46} {:>12.2f} {:>12.2f}{}\n", fmt::format("{} (GiB, rank {})", m.memory, m.rank),
                           m.measured_bytes / kBytesPerGiB, m.predicted_bytes / kBytesPerGiB,
                           profiled ? fmt::format(" {:>12.2f}", m.predicted_profiled_bytes / kBytesPerGiB)
                                    : std::string());
    if (!cmp.memory.empty())
        out += std::string("  (memory: the highest traced rank against the worst pipeline stage's predicted allocated "
                           "and reserved") +
               (profiled ? "; as profiled, under the stack the traces show" : "") + ")\n";
    for (const auto& w : cmp.warnings)
        if (w.rfind("job-mismatch", 0) != 0) out += "  warning: " + terminal_text(w) + "\n";
}

}  // namespace lostflops::trace::detail
