// Measured breakdown of one rank from its kernel intervals.
//
// Temporal breakdown (HTA, hta/analyzers/breakdown_analysis.py
// get_temporal_breakdown): span = last end - first start of the merged kernel
// intervals; idle = span - union of all kernels; compute = union of the
// computation kernels; non-compute = span - compute - idle.
// Idle time per stream by cause: trace_idle.cpp; launch statistics:
// trace_launch.cpp; bandwidth per collective: trace_comm.cpp.
// Overlap (communication_analysis.py get_comm_comp_overlap): time in both the
// union of communication kernels and the union of computation kernels,
// divided by the union of communication kernels.
// Which kernels count, and how times are rounded, depends on the convention
// (trace.h); in HTA-compatible mode this follows hta/common/trace.py
// _filter_irrelevant_gpu_kernels and trace_parser.py round_down_time_stamps
// (the kernels picked in trace_pick.cpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <unordered_map>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "trace/trace_host_speed.h"
#include "trace/trace_internal.h"

namespace lostflops::trace {
namespace {

using detail::Interval;

using detail::Picked;

bool is_compute(KernelCategory c) {
    return c == KernelCategory::gemm || c == KernelCategory::attention ||
           c == KernelCategory::norm_elementwise || c == KernelCategory::other_compute;
}

using detail::launch_ts;
using detail::Rounding;

// Groups (HTA's merge) of the kernels, in start order, that `pred` selects.
template <typename Pred>
detail::GroupMerger merge_where(const std::vector<Picked>& ks, Pred pred, std::vector<Interval>* keep = nullptr) {
    detail::GroupMerger m(keep);
    for (const auto& k : ks) if (pred(k.cat)) m.add(k.iv);
    m.finish();
    return m;
}

bool is_comm(KernelCategory c) { return c == KernelCategory::communication; }
bool is_memory(KernelCategory c) { return c == KernelCategory::memcpy || c == KernelCategory::memset; }
bool is_matmul(KernelCategory c) { return c == KernelCategory::gemm || c == KernelCategory::attention; }

// Count and summed duration of the kernels of each label.
struct LabelSum {
    int64_t count = 0;
    double time_us = 0;
    KernelCategory cat = KernelCategory::other_compute;
};
std::vector<LabelSum> per_label(const TraceData& d, const std::vector<Picked>& ks) {
    std::vector<LabelSum> v(d.labels.size());
    for (const auto& k : ks) {
        LabelSum& s = v[d.gpu[k.ev].label];
        ++s.count;
        s.time_us += k.iv.end - k.iv.start;
        s.cat = k.cat;
    }
    return v;
}

// "gemm", ..., or "comm:<collective>" for communication.
std::string category_key(const TraceData& d, uint32_t label, KernelCategory cat) {
    if (cat != KernelCategory::communication) return to_string(cat);
    const GpuLabel& l = d.labels[label];
    return "comm:" + collective_of(d.names[l.name_id], d.names[l.collective_id]);
}

std::vector<CategoryTotal> category_totals(const TraceData& d, const std::vector<LabelSum>& sums) {
    std::map<std::string, CategoryTotal> by;
    for (uint32_t label = 0; label < sums.size(); ++label) {
        const LabelSum& s = sums[label];
        if (s.count == 0) continue;
        const std::string key = category_key(d, label, s.cat);
        auto& t = by[key];
        t.name = key;
        t.category = s.cat;
        t.count += s.count;
        t.time_us += s.time_us;
    }
    std::vector<CategoryTotal> out;
    for (auto& [_, t] : by) out.push_back(t);
    std::stable_sort(out.begin(), out.end(),
                     [](const CategoryTotal& a, const CategoryTotal& b) { return a.time_us > b.time_us; });
    return out;
}

// The costliest kernel names of each category (categories in `cats` order).
std::vector<TopKernel> top_kernels(const TraceData& d, const std::vector<LabelSum>& sums,
                                   const std::vector<CategoryTotal>& cats) {
    std::map<std::pair<std::string, uint32_t>, TopKernel> by;  // (category, name id)
    for (uint32_t label = 0; label < sums.size(); ++label) {
        const LabelSum& s = sums[label];
        if (s.count == 0) continue;
        const std::string key = category_key(d, label, s.cat);
        const uint32_t name = d.labels[label].name_id;
        TopKernel& t = by[{key, name}];
        t.name = d.names[name];
        t.category = key;
        t.count += s.count;
        t.time_us += s.time_us;
    }
    std::vector<TopKernel> out;
    for (const auto& c : cats) {
        std::vector<TopKernel> mine;
        for (auto it = by.lower_bound({c.name, 0}); it != by.end() && it->first.first == c.name; ++it)
            mine.push_back(it->second);
        std::stable_sort(mine.begin(), mine.end(),
                         [](const TopKernel& a, const TopKernel& b) { return a.time_us > b.time_us; });
        if (mine.size() > kTopKernelsPerCategory) mine.resize(kTopKernelsPerCategory);
        out.insert(out.end(), mine.begin(), mine.end());
    }
    return out;
}

// Per ProfilerStep: the kernels launched inside it (by their CPU launch, else
// their start). Reorders `ks` by step (each step's kernels stay in start
// order) and overwrites Picked::ev with the step: no per-step copies.
std::vector<Iteration> iterations(const TraceData& d, std::vector<Picked>& ks) {
    std::vector<StepMark> steps;
    for (const auto& s : d.steps) if (s.on_cpu) steps.push_back(s);
    std::sort(steps.begin(), steps.end(),
              [](const StepMark& a, const StepMark& b) { return a.ts_us < b.ts_us; });
    std::vector<Iteration> out(steps.size());
    const std::size_t groups = d.groups.empty() ? 0 : d.groups.size() - 1;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        out[i].number = steps[i].number;
        out[i].cpu_us = steps[i].dur_us;
        out[i].group_comm_start_us.assign(groups, std::nullopt);
    }
    if (steps.empty()) return out;
    constexpr uint32_t kNone = 0xFFFFFFFFu;
    for (auto& k : ks) {
        bool found = false;
        const GpuEvent& g = d.gpu[k.ev];
        // Kernels without a correlation id share one key (the earliest CPU row
        // without one): they are placed by their own start.
        double at = g.correlation == kNoCorrelation ? 0.0 : launch_ts(d, g.correlation, found);
        if (!found) at = g.ts_us;
        k.ev = kNone;
        auto it = std::upper_bound(steps.begin(), steps.end(), at,
                                   [](double t, const StepMark& s) { return t < s.ts_us; });
        if (it == steps.begin()) continue;
        --it;
        if (at >= it->ts_us + it->dur_us) continue;
        k.ev = static_cast<uint32_t>(it - steps.begin());
    }
    std::sort(ks.begin(), ks.end(), [](const Picked& a, const Picked& b) {
        return a.ev != b.ev ? a.ev < b.ev : a.iv.start < b.iv.start;
    });
    std::size_t from = 0;
    std::vector<Interval> comp_iv, comm_iv, mem_iv, busy_iv;
    while (from < ks.size() && ks[from].ev != kNone) {
        const uint32_t step = ks[from].ev;
        std::size_t to = from;
        comp_iv.clear(), comm_iv.clear(), mem_iv.clear(), busy_iv.clear();
        detail::GroupMerger all, comp(&comp_iv), comm(&comm_iv), mem(&mem_iv), busy(&busy_iv), matmul;
        Iteration& it = out[step];
        for (; to < ks.size() && ks[to].ev == step; ++to) {
            const Picked& k = ks[to];
            all.add(k.iv);
            if (is_compute(k.cat)) comp.add(k.iv), busy.add(k.iv);
            if (is_matmul(k.cat)) matmul.add(k.iv);
            if (is_memory(k.cat)) mem.add(k.iv);
            if (!is_comm(k.cat)) continue;
            comm.add(k.iv);
            busy.add(k.iv);
            if (!it.first_comm_start_us) it.first_comm_start_us = k.iv.start;  // start order within the step
            if (k.group > 0 && !it.group_comm_start_us[k.group - 1]) it.group_comm_start_us[k.group - 1] = k.iv.start;
        }
        for (auto* m : {&all, &comp, &comm, &mem, &busy, &matmul}) m->finish();
        it.kernels = static_cast<int64_t>(to - from);
        it.gpu_span_us = all.span();
        it.idle_us = it.gpu_span_us - all.total();
        it.compute_us = comp.total();
        it.comm_us = comm.total();
        it.matmul_us = matmul.total();
        it.exposed_comm_us = it.comm_us - detail::overlap_length(comm_iv, comp_iv);
        it.exposed_memory_us = mem_iv.empty() ? 0.0 : mem.total() - detail::overlap_length(mem_iv, busy_iv);
        from = to;
    }
    return out;
}

std::optional<int> rank_from_name(const std::string& path) {
    static const std::regex re(R"(rank[_\-.]?(\d{1,7}))", std::regex::icase);
    std::smatch m;
    const std::string base = path.substr(path.find_last_of('/') == std::string::npos
                                             ? 0 : path.find_last_of('/') + 1);
    if (!std::regex_search(base, m, re)) return std::nullopt;
    return std::stoi(m[1].str());
}

}  // namespace

RankReport analyze(const TraceData& d, const AnalyzeOptions& opts) {
    RankReport r;
    r.source = d.source;
    r.hta_compatible = opts.hta_compatible;
    if (d.rank) {
        r.rank = *d.rank;
    } else {
        const auto guess = rank_from_name(d.source);
        r.rank = guess.value_or(-1);
    }
    for (const auto& w : d.warnings) {
        if (w.rfind("skipped-events:", 0) != 0) {
            r.warnings.push_back(w);
            continue;
        }
        // The issue's form: "rank 3: skipped 2 events: ts not a number (1), dur negative (1)".
        r.warnings.push_back("skipped-events: " +
                             (r.rank >= 0 ? "rank " + std::to_string(r.rank) : std::string("rank unknown")) +
                             ": skipped " + std::to_string(d.skipped.total()) + " events: " +
                             d.skipped.describe());
    }
    r.skipped_events = d.skipped.total();
    if (!d.rank) {
        r.warnings.push_back(std::string("no-distributed-info: no distributedInfo.rank; ") +
                             (r.rank >= 0 ? "rank taken from the file name" : "rank unknown"));
    }
    auto ks = detail::pick_kernels(d, opts.hta_compatible, r.warnings);
    if (ks.empty()) {
        // A file cut before its first kernel says so: the cut is the cause.
        std::string cut;
        for (const auto& w : d.warnings)
            if (w.rfind("truncated", 0) == 0) cut = "; " + w;
        throw InputError(d.source, "traceEvents",
                         "no GPU kernels to analyse (expected events of cat kernel, gpu_memcpy "
                         "or gpu_memset with args.stream)" +
                             (d.skipped.total() > 0 ? "; skipped " + std::to_string(d.skipped.total()) +
                                                          " implausible events: " + d.skipped.describe()
                                                    : std::string()) +
                             cut);
    }
    r.kernels = static_cast<int64_t>(ks.size());
    // A kernel's kind comes from its name: without one ("name": null, "" or
    // absent) it can only be other compute, and the split of compute time
    // by kind (and the advice drawn from it) does not hold for it.
    const auto unnamed = std::count_if(ks.begin(), ks.end(), [&](const Picked& k) {
        return d.labels[d.gpu[k.ev].label].name_id == 0 && is_compute(k.cat);
    });
    if (unnamed > 0)
        r.warnings.push_back("unnamed-kernels: " + std::to_string(unnamed) + " of " + std::to_string(ks.size()) +
                             " kernels have no name (null, empty or absent): counted as other compute, their kind "
                             "(GEMM, attention, elementwise) unknown");
    // ks is in start order (pick_kernels): every union is one pass, and only
    // the groups the overlaps need are kept.
    const auto all = merge_where(ks, [](KernelCategory) { return true; });
    r.kernel_span_us = all.span();
    r.idle_us = r.kernel_span_us - all.total();
    r.matmul_us = merge_where(ks, is_matmul).total();
    double comm_overlap = 0;
    {
        std::vector<Interval> comp, comm;
        r.compute_us = merge_where(ks, is_compute, &comp).total();
        r.comm_us = merge_where(ks, is_comm, &comm).total();
        comm_overlap = detail::overlap_length(comm, comp);
    }
    r.non_compute_us = r.kernel_span_us - r.compute_us - r.idle_us;
    r.exposed_comm_us = r.comm_us - comm_overlap;
    {
        // Memory copies hidden under neither compute nor communication.
        std::vector<Interval> mem, busy;
        r.memory_us = merge_where(ks, is_memory, &mem).total();
        if (!mem.empty()) {
            merge_where(ks, [](KernelCategory c) { return is_compute(c) || is_comm(c); }, &busy);
            r.exposed_memory_us = r.memory_us - detail::overlap_length(mem, busy);
        }
    }
    if (r.comm_us > 0) {
        const double pct = 100.0 * comm_overlap / r.comm_us;
        // HTA reports round(100 * ratio, 2).
        r.comm_comp_overlap_pct = opts.hta_compatible ? std::round(pct * 100.0) / 100.0 : pct;
    }
    {
        const auto sums = per_label(d, ks);
        r.categories = category_totals(d, sums);
        r.top_kernels = top_kernels(d, sums, r.categories);
    }
    const Rounding rounding{opts.hta_compatible && d.fractional_ts};
    r.idle_breakdown = detail::idle_breakdown(d, ks, rounding, opts.hta_compatible);
    r.launches = detail::launch_stats(d, ks, rounding);
    r.collectives = detail::collective_stats(d, ks);
    r.iterations = iterations(d, ks);
    double sum = 0;
    int n = 0;
    for (const auto& s : d.steps) {
        if (!s.on_cpu) continue;
        sum += s.dur_us;
        ++n;
    }
    r.mean_step_us = n > 0 ? sum / n : 0.0;
    r.steps_total = n;
    if (n > 0) {
        r.host_events_per_step = static_cast<double>(d.host_events) / n;
        r.profiler_overhead_us_per_step = d.profiler_overhead_us / n;
    }
    r.host_speed = detail::host_speed(d);
    r.step_host_speeds = detail::step_host_speeds(d);
    r.stack_markers = d.stack_markers;
    r.host = d.host;
    r.gpus_per_node = d.gpus_per_node;
    if (d.groups.size() > 1) r.process_groups.assign(d.groups.begin() + 1, d.groups.end());
    r.memory = detail::rank_memory(d, r.warnings);
    return r;
}

}  // namespace lostflops::trace
