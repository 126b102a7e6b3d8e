// Cross-rank answers (definitions in include/lostflops/trace_cluster.h):
// a fixed-size row per rank and running sums as ranks arrive; medians,
// robust z-scores (Iglewicz and Hoaglin 1993), phases and nodes at the end.
// Skew per process group: trace_cluster_skew.cpp.
#include "lostflops/trace_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

#include "lostflops/error.h"
#include "trace/trace_cluster_skew.h"

namespace lostflops::trace {
namespace {

// Where a rank's time per step goes, for the phase of its excess.
constexpr std::array<const char*, 6> kPhases = {"gemm", "attention", "norm_elementwise", "other_compute",
                                                "memory copies", "idle (waiting for the host)"};
using PhaseVec = std::array<double, kPhases.size()>;

std::string group_key(const ProcessGroup& g) {
    const bool named = !g.desc.empty() && g.desc != "undefined";
    return (named ? g.desc + " " : std::string()) + "(" + g.name + ") " + g.ranks;
}

// "24-31", "3, 9, 12-13" of sorted ranks.
std::string ranks_text(const std::vector<int>& r) {
    std::string out;
    for (std::size_t i = 0; i < r.size();) {
        std::size_t j = i;
        while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
        if (!out.empty()) out += ", ";
        out += j > i ? fmt::format("{}-{}", r[i], r[j]) : std::to_string(r[i]);
        i = j + 1;
    }
    return out;
}

// The phase with the largest excess over the median phase vector.
std::pair<std::string, double> phase_of(const PhaseVec& v, const PhaseVec& med) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < v.size(); ++k)
        if (v[k] - med[k] > v[best] - med[best]) best = k;
    return {kPhases[best], v[best] - med[best]};
}

}  // namespace

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    const std::size_t n = v.size();
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
    const double hi = v[n / 2];
    if (n % 2 == 1) return hi;
    return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2)));
}

std::vector<double> robust_z(const std::vector<double>& v) {
    if (v.size() < 3) return {};
    const double med = median_of(v);
    std::vector<double> dev(v.size());
    double mean_ad = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        dev[i] = std::fabs(v[i] - med);
        mean_ad += dev[i];
    }
    mean_ad /= static_cast<double>(v.size());
    const double mad = median_of(dev);
    std::vector<double> z(v.size(), 0.0);
    // Iglewicz and Hoaglin's modified z-score; with MAD = 0, IBM SPSS's MeanAD form.
    const double scale = mad > 0 ? mad / 0.6745 : 1.253314 * mean_ad;
    if (!(scale > 0)) return z;  // all equal
    for (std::size_t i = 0; i < v.size(); ++i) z[i] = (v[i] - med) / scale;
    return z;
}

struct ClusterMerger::State {
    int gpus_per_node = 0;
    std::vector<RankRow> rows;
    std::vector<PhaseVec> phases;
    std::vector<double> considered;  // steps of each row in the skew analysis
    std::vector<std::string> origins;  // where each row came from (a summary file or the trace)
    std::unordered_map<int, std::size_t> row_of;
    detail::SkewAccumulator skew;
    std::map<int64_t, StepStat> steps;
    std::map<std::string, CategoryTotal> categories;
    std::map<std::pair<std::string, std::string>, TopKernel> kernels;
    std::map<std::string, CollectiveStats> collectives;
    ClusterReport totals;
};

ClusterMerger::ClusterMerger(int gpus_per_node) : s_(std::make_unique<State>()) { s_->gpus_per_node = gpus_per_node; }
ClusterMerger::~ClusterMerger() = default;

void ClusterMerger::add(const RankReport& r, const std::string& origin) {
    State& s = *s_;
    const std::string from = origin.empty() ? r.source : origin;
    const auto [seen, inserted] = s.row_of.try_emplace(r.rank, s.rows.size());
    if (!inserted) {
        throw InputError(from, "rank",
                         "rank " + std::to_string(r.rank) + " appears twice: in " + s.origins[seen->second] +
                             " and in " + from + " (each rank must come from one file)");
    }
    s.origins.push_back(from);
    RankRow row;
    row.rank = r.rank;
    row.source = r.source;
    row.hta_compatible = r.hta_compatible;
    const int gpn = s.gpus_per_node > 0 ? s.gpus_per_node : r.gpus_per_node;
    row.node = !r.host.empty() ? r.host : gpn > 0 ? fmt::format("node {}", r.rank / gpn) : std::string();
    row.kernels = r.kernels;
    row.steps = static_cast<double>(std::max<int64_t>({r.steps_total, static_cast<int64_t>(r.iterations.size()), 1}));
    row.kernel_span_us = r.kernel_span_us;
    row.compute_us = r.compute_us;
    row.non_compute_us = r.non_compute_us;
    row.idle_us = r.idle_us;
    row.exposed_comm_us = r.exposed_comm_us;
    row.exposed_memory_us = r.exposed_memory_us;
    row.mean_step_us = r.mean_step_us;
    row.comm_comp_overlap_pct = r.comm_comp_overlap_pct;
    row.step_us = r.mean_step_us > 0 ? r.mean_step_us : r.kernel_span_us / row.steps;
    row.busy_us = row.step_us - r.exposed_comm_us / row.steps;
    row.warnings = r.warnings.size();
    PhaseVec ph{};
    for (const auto& c : r.categories) {
        const std::size_t k = c.category == KernelCategory::gemm ? 0 : c.category == KernelCategory::attention ? 1
                            : c.category == KernelCategory::norm_elementwise ? 2
                            : c.category == KernelCategory::other_compute ? 3 : kPhases.size();
        if (k < kPhases.size()) ph[k] += c.time_us / row.steps;
    }
    ph[4] = r.exposed_memory_us / row.steps;
    ph[5] = r.idle_us / row.steps;
    // Steps: spread of this rank's, the per-step table, and the skew analysis.
    double sum = 0, sum2 = 0;
    for (const auto& it : r.iterations) {
        sum += it.cpu_us;
        sum2 += it.cpu_us * it.cpu_us;
        auto st = s.steps.find(it.number);
        if (st == s.steps.end()) {
            if (s.steps.size() >= kMaxStepStats) continue;
            st = s.steps.emplace(it.number, StepStat{it.number}).first;
        }
        StepStat& x = st->second;
        ++x.ranks;
        x.mean_us += it.cpu_us;
        if (it.cpu_us > x.max_us || x.slowest_rank < 0) x.max_us = it.cpu_us, x.slowest_rank = r.rank;
        const double busy = it.cpu_us - it.exposed_comm_us;
        if (busy > x.max_busy_us || x.busiest_rank < 0) x.max_busy_us = busy, x.busiest_rank = r.rank;
    }
    if (r.iterations.size() > 1) {
        const double n = static_cast<double>(r.iterations.size()), mean = sum / n;
        row.step_cv_pct = mean > 0 ? 100 * std::sqrt(std::max(0.0, sum2 / n - mean * mean)) / mean : 0;
    }
    std::vector<std::string> groups;
    for (const auto& g : r.process_groups) groups.push_back(group_key(g));
    const std::size_t considered = std::min(r.iterations.size(), kMaxClusterSteps);
    for (std::size_t i = 0; i < considered; ++i) {
        const Iteration& it = r.iterations[i];
        if (it.first_comm_start_us) s.skew.add("", it.number, r.rank, *it.first_comm_start_us, true);
        std::optional<double> first;
        for (const auto& t : it.group_comm_start_us)
            if (t && (!first || *t < *first)) first = t;
        for (std::size_t g = 0; g < it.group_comm_start_us.size() && g < groups.size(); ++g) {
            const auto& t = it.group_comm_start_us[g];
            if (t) s.skew.add(groups[g], it.number, r.rank, *t, *t == *first);
        }
    }
    // Sums over ranks.
    ClusterReport& t = s.totals;
    t.span_us += r.kernel_span_us, t.compute_us += r.compute_us, t.matmul_us += r.matmul_us, t.idle_us += r.idle_us;
    t.comm_us += r.comm_us, t.exposed_comm_us += r.exposed_comm_us, t.exposed_memory_us += r.exposed_memory_us;
    for (const auto& x : r.idle_breakdown)
        t.host_wait_us += x.host_wait_us, t.kernel_wait_us += x.kernel_wait_us, t.other_wait_us += x.other_us;
    t.kernels += r.kernels, t.launched += r.launches.launched, t.launch_bound += r.launches.launch_bound;
    t.launch_bound_gpu_us += r.launches.launch_bound_gpu_us;
    t.launch_us += static_cast<double>(r.launches.launched) * r.launches.mean_launch_us;
    bool marked = false;
    for (std::size_t i = 0; i < t.stack_markers.size(); ++i) {
        t.stack_markers[i] += r.stack_markers[i];
        marked |= r.stack_markers[i] > 0;
    }
    if (marked) t.marked_steps += r.steps_total;
    for (const auto& c : r.categories) {
        CategoryTotal& x = s.categories[c.name];
        x.name = c.name, x.category = c.category, x.count += c.count, x.time_us += c.time_us;
    }
    for (const auto& k : r.top_kernels) {
        auto it = s.kernels.find({k.category, k.name});
        if (it == s.kernels.end()) {
            if (s.kernels.size() >= kMaxClusterKernels) continue;  // the rest stay in their category's total
            it = s.kernels.emplace(std::make_pair(k.category, k.name), TopKernel{k.name, k.category}).first;
        }
        it->second.count += k.count, it->second.time_us += k.time_us;
    }
    for (const auto& c : r.collectives) {
        CollectiveStats& x = s.collectives[c.collective];
        x.collective = c.collective, x.calls += c.calls, x.bytes += c.bytes, x.time_us += c.time_us;
        x.group_size = std::max(x.group_size, c.group_size);
        x.busbw_gbps += c.busbw_gbps * c.time_us;  // time-weighted, divided at the end
    }
    s.rows.push_back(std::move(row));
    s.phases.push_back(ph);
    s.considered.push_back(static_cast<double>(std::max<std::size_t>(considered, 1)));
}

namespace {

SlowOne slow_of(const RankRow& r, double reference) {
    SlowOne o;
    o.rank = r.rank;
    o.node = r.node;
    o.busy_us = r.busy_us;
    o.median_busy_us = reference;
    o.late_us = r.late_us;
    o.held_back_us = r.held_back_us;
    o.z = r.z;
    o.phase = r.phase;
    o.phase_excess_us = r.phase_excess_us;
    return o;
}

bool most_held_back(const SlowOne& a, const SlowOne& b) {
    return a.held_back_us != b.held_back_us ? a.held_back_us > b.held_back_us : a.rank < b.rank;
}

PhaseVec median_phases(const std::vector<PhaseVec>& all, const std::vector<std::size_t>& which) {
    PhaseVec med{};
    std::vector<double> v;
    for (std::size_t k = 0; k < kPhases.size(); ++k) {
        v.clear();
        for (const std::size_t i : which) v.push_back(all[i][k]);
        med[k] = median_of(v);
    }
    return med;
}

}  // namespace

ClusterReport ClusterMerger::finish() {
    State& s = *s_;
    ClusterReport out = std::move(s.totals);
    std::vector<RankRow>& rows = s.rows;
    const std::size_t n = rows.size();
    out.ranks = static_cast<int64_t>(n);
    out.outlier_test = n >= 3;
    const auto sk = s.skew.finish();
    out.groups = sk.groups;
    out.step_skew = sk.steps;
    std::vector<double> busy;
    for (std::size_t i = 0; i < n; ++i) {
        const auto it = sk.late_us.find(rows[i].rank);
        rows[i].late_us = it == sk.late_us.end() ? 0.0 : it->second / s.considered[i];
        busy.push_back(rows[i].busy_us);
    }
    out.median_busy_us = median_of(busy);
    // The reference: the median rank, or the fastest below 3 ranks (no median to stand out from).
    const double ref = n >= 3 || busy.empty() ? out.median_busy_us : *std::min_element(busy.begin(), busy.end());
    const auto z = robust_z(busy);
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    const PhaseVec med = median_phases(s.phases, all);
    for (std::size_t i = 0; i < n; ++i) {
        RankRow& r = rows[i];
        r.held_back_us = std::max(r.busy_us - ref, 0.0);
        std::tie(r.phase, r.phase_excess_us) = phase_of(s.phases[i], med);
        if (!z.empty()) r.z = z[i];
        const bool slow = n >= 3 ? z[i] > kOutlierZ && r.held_back_us > 0 : r.busy_us > ref;
        if (slow) out.slow_ranks.push_back(slow_of(r, ref));
    }
    std::stable_sort(out.slow_ranks.begin(), out.slow_ranks.end(), most_held_back);
    // Nodes: the median of their ranks.
    std::map<std::string, std::vector<std::size_t>> nodes;
    for (std::size_t i = 0; i < n; ++i)
        if (!rows[i].node.empty()) nodes[rows[i].node].push_back(i);
    out.nodes = static_cast<int64_t>(nodes.size());
    if (nodes.size() >= 3) {
        std::vector<SlowOne> ns;
        std::vector<double> node_busy;
        for (const auto& [name, idx] : nodes) {
            std::vector<double> b, l;
            std::vector<int> ranks;
            for (const std::size_t i : idx) b.push_back(rows[i].busy_us), l.push_back(rows[i].late_us), ranks.push_back(rows[i].rank);
            std::sort(ranks.begin(), ranks.end());
            SlowOne o;
            o.node = name;
            o.ranks = ranks_text(ranks);
            o.busy_us = median_of(b);
            o.late_us = median_of(l);
            std::tie(o.phase, o.phase_excess_us) = phase_of(median_phases(s.phases, idx), med);
            ns.push_back(o);
            node_busy.push_back(o.busy_us);
        }
        const double node_med = median_of(node_busy);
        const auto nz = robust_z(node_busy);
        for (std::size_t k = 0; k < ns.size(); ++k) {
            ns[k].median_busy_us = node_med;
            ns[k].z = nz[k];
            ns[k].held_back_us = std::max(ns[k].busy_us - node_med, 0.0);
            if (nz[k] > kOutlierZ && ns[k].held_back_us > 0) out.slow_nodes.push_back(ns[k]);
        }
        std::stable_sort(out.slow_nodes.begin(), out.slow_nodes.end(), most_held_back);
        for (auto& r : out.slow_ranks)
            for (const auto& sn : out.slow_nodes) r.on_slow_node = r.on_slow_node || r.node == sn.node;
    }
    // Steps.
    std::vector<double> means;
    for (auto& [_, st] : s.steps) {
        st.mean_us /= static_cast<double>(st.ranks);
        means.push_back(st.mean_us);
        out.steps.push_back(st);
    }
    if (means.size() >= 2) {
        const double m = median_of(means);
        const auto [lo, hi] = std::minmax_element(means.begin(), means.end());
        out.step_spread_pct = m > 0 ? 100 * (*hi - *lo) / m : 0;
    }
    // Sums: categories by time, the top kernels of each, bandwidth over all calls.
    for (auto& [_, c] : s.categories) out.categories.push_back(c);
    std::stable_sort(out.categories.begin(), out.categories.end(),
                     [](const CategoryTotal& a, const CategoryTotal& b) { return a.time_us > b.time_us; });
    for (const auto& c : out.categories) {
        std::vector<TopKernel> mine;
        for (auto it = s.kernels.lower_bound({c.name, ""}); it != s.kernels.end() && it->first.first == c.name; ++it)
            mine.push_back(it->second);
        std::stable_sort(mine.begin(), mine.end(), [](const TopKernel& a, const TopKernel& b) { return a.time_us > b.time_us; });
        if (mine.size() > kTopKernelsPerCategory) mine.resize(kTopKernelsPerCategory);
        out.top_kernels.insert(out.top_kernels.end(), mine.begin(), mine.end());
    }
    for (auto& [_, c] : s.collectives) {
        if (c.time_us > 0) {
            c.algbw_gbps = c.bytes / (c.time_us * 1e-6) / 1e9;
            c.busbw_gbps /= c.time_us;
        }
        out.collectives.push_back(c);
    }
    std::stable_sort(out.collectives.begin(), out.collectives.end(),
                     [](const CollectiveStats& a, const CollectiveStats& b) { return a.time_us > b.time_us; });
    std::sort(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) { return a.rank < b.rank; });
    out.rows = std::move(rows);
    return out;
}

ClusterReport cluster_report(const std::vector<RankReport>& ranks, int gpus_per_node) {
    ClusterMerger m(gpus_per_node);
    for (const auto& r : ranks) m.add(r);
    return m.finish();
}

}  // namespace lostflops::trace
