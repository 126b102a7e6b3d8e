// Measured breakdown of one rank from its kernel intervals.
//
// Temporal breakdown (HTA, hta/analyzers/breakdown_analysis.py
// get_temporal_breakdown): span = last end - first start of the merged kernel
// intervals; idle = span - union of all kernels; compute = union of the
// computation kernels; non-compute = span - compute - idle.
// Overlap (communication_analysis.py get_comm_comp_overlap): time in both the
// union of communication kernels and the union of computation kernels,
// divided by the union of communication kernels.
// Which kernels count, and how times are rounded, depends on the convention
// (trace.h); in HTA-compatible mode this follows hta/common/trace.py
// _filter_irrelevant_gpu_kernels and trace_parser.py round_down_time_stamps.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <unordered_map>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "trace/trace_internal.h"

namespace lostflops::trace {
namespace {

using detail::Interval;

struct Picked {
    const GpuEvent* ev;
    Interval iv;
    KernelCategory cat;
};

bool is_compute(KernelCategory c) {
    return c == KernelCategory::gemm || c == KernelCategory::attention ||
           c == KernelCategory::norm_elementwise || c == KernelCategory::other_compute;
}

double launch_ts(const TraceData& d, int64_t correlation, bool& found) {
    const auto it = std::lower_bound(
        d.cpu_launches.begin(), d.cpu_launches.end(), correlation,
        [](const CpuLaunch& l, int64_t c) { return l.correlation < c; });
    found = it != d.cpu_launches.end() && it->correlation == correlation;
    return found ? it->ts_us : 0.0;
}

// HTA: ceil the start, floor the end, when the file has fractional "ts".
struct Rounding {
    bool on = false;
    double start(double ts) const { return on ? std::ceil(ts) : ts; }
    double end(double ts, double dur) const { return on ? std::floor(ts + dur) : ts + dur; }
};

// Classification is by name: done once per distinct (name, collective, kind).
class Classifier {
public:
    Classifier(const TraceData& d, bool hta) : d_(d), hta_(hta) {}
    KernelCategory operator()(const GpuEvent& g) {
        const uint64_t key = (static_cast<uint64_t>(g.name_id) << 35) ^
                             (static_cast<uint64_t>(g.collective_id) << 3) ^ static_cast<uint64_t>(g.kind);
        const auto it = cache_.find(key);
        if (it != cache_.end()) return it->second;
        const auto c = classify_kernel(d_.names[g.name_id], g.kind, d_.names[g.collective_id], hta_);
        cache_.emplace(key, c);
        return c;
    }

private:
    const TraceData& d_;
    bool hta_;
    std::unordered_map<uint64_t, KernelCategory> cache_;
};

std::vector<Picked> pick_hta(const TraceData& d, std::vector<std::string>& warnings) {
    Classifier classify(d, true);
    const Rounding r{d.fractional_ts};
    std::vector<Picked> out;
    const bool filter = d.step_names.size() >= 2 && d.has_cpu_events;
    double last_start = 0;
    if (filter) {
        bool any = false;
        for (const auto& s : d.steps) {
            if (!s.on_cpu) continue;
            last_start = any ? std::max(last_start, r.start(s.ts_us)) : r.start(s.ts_us);
            any = true;
        }
        if (!any) last_start = r.start(d.cpu_min_ts_us);
    } else {
        warnings.push_back(
            "few-steps: fewer than two ProfilerStep annotations; all kernels kept (as HTA does)");
    }
    for (const auto& g : d.gpu) {
        if (g.kind == EventKind::cuda_sync) continue;
        if (filter) {
            if (g.stream < 0) continue;
            bool found = false;
            const double ts = launch_ts(d, g.correlation, found);
            if (!found || !(r.start(ts) < last_start)) continue;
        } else if (g.stream == -1) {
            continue;
        }
        const auto cat = classify(g);
        out.push_back({&g, {r.start(g.ts_us), r.end(g.ts_us, g.dur_us)}, cat});
    }
    return out;
}

std::vector<Picked> pick_native(const TraceData& d) {
    Classifier classify(d, false);
    std::vector<Picked> out;
    for (const auto& g : d.gpu) {
        if (g.kind != EventKind::kernel && g.kind != EventKind::gpu_memcpy &&
            g.kind != EventKind::gpu_memset) continue;
        const auto cat = classify(g);
        if (cat == KernelCategory::sync) continue;
        const double dur = std::max(0.0, g.dur_us);
        out.push_back({&g, {g.ts_us, g.ts_us + dur}, cat});
    }
    return out;
}

std::vector<Interval> merged_where(const std::vector<Picked>& ks, bool (*pred)(KernelCategory)) {
    std::vector<Interval> v;
    for (const auto& k : ks) if (pred(k.cat)) v.push_back(k.iv);
    return detail::merge_intervals(std::move(v));
}

std::vector<CategoryTotal> category_totals(const TraceData& d, const std::vector<Picked>& ks) {
    std::map<std::string, CategoryTotal> by;
    for (const auto& k : ks) {
        std::string key = to_string(k.cat);
        if (k.cat == KernelCategory::communication) {
            key = "comm:" + collective_of(d.names[k.ev->name_id], d.names[k.ev->collective_id]);
        }
        auto& t = by[key];
        t.name = key;
        t.category = k.cat;
        ++t.count;
        t.time_us += k.iv.end - k.iv.start;
    }
    std::vector<CategoryTotal> out;
    for (auto& [_, t] : by) out.push_back(t);
    std::stable_sort(out.begin(), out.end(),
                     [](const CategoryTotal& a, const CategoryTotal& b) { return a.time_us > b.time_us; });
    return out;
}

std::vector<Iteration> iterations(const TraceData& d, const std::vector<Picked>& ks) {
    std::vector<StepMark> steps;
    for (const auto& s : d.steps) if (s.on_cpu) steps.push_back(s);
    std::sort(steps.begin(), steps.end(),
              [](const StepMark& a, const StepMark& b) { return a.ts_us < b.ts_us; });
    std::vector<Iteration> out(steps.size());
    std::vector<std::vector<Interval>> all(steps.size()), comp(steps.size()), comm(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        out[i].number = steps[i].number;
        out[i].cpu_us = steps[i].dur_us;
    }
    for (const auto& k : ks) {
        bool found = false;
        double at = launch_ts(d, k.ev->correlation, found);
        if (!found) at = k.ev->ts_us;
        auto it = std::upper_bound(steps.begin(), steps.end(), at,
                                   [](double t, const StepMark& s) { return t < s.ts_us; });
        if (it == steps.begin()) continue;
        --it;
        if (at >= it->ts_us + it->dur_us) continue;
        const auto i = static_cast<std::size_t>(it - steps.begin());
        ++out[i].kernels;
        all[i].push_back(k.iv);
        if (is_compute(k.cat)) comp[i].push_back(k.iv);
        if (k.cat == KernelCategory::communication) comm[i].push_back(k.iv);
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto m = detail::merge_intervals(std::move(all[i]));
        if (m.empty()) continue;
        out[i].gpu_span_us = m.back().end - m.front().start;
        out[i].idle_us = out[i].gpu_span_us - detail::total_length(m);
        out[i].compute_us = detail::total_length(detail::merge_intervals(std::move(comp[i])));
        out[i].comm_us = detail::total_length(detail::merge_intervals(std::move(comm[i])));
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
    r.warnings = d.warnings;
    if (d.rank) {
        r.rank = *d.rank;
    } else {
        const auto guess = rank_from_name(d.source);
        r.rank = guess.value_or(-1);
        r.warnings.push_back(std::string("no-distributed-info: no distributedInfo.rank; ") +
                             (guess ? "rank taken from the file name" : "rank unknown"));
    }
    const auto ks = opts.hta_compatible ? pick_hta(d, r.warnings) : pick_native(d);
    if (ks.empty()) {
        throw InputError(d.source, "traceEvents",
                         "no GPU kernels to analyse (expected events of cat kernel, gpu_memcpy "
                         "or gpu_memset with args.stream)");
    }
    r.kernels = static_cast<int64_t>(ks.size());
    std::vector<Interval> every;
    every.reserve(ks.size());
    for (const auto& k : ks) every.push_back(k.iv);
    const auto all = detail::merge_intervals(std::move(every));
    const auto comp = merged_where(ks, is_compute);
    const auto comm = merged_where(ks, [](KernelCategory c) { return c == KernelCategory::communication; });
    const auto mem = merged_where(ks, [](KernelCategory c) {
        return c == KernelCategory::memcpy || c == KernelCategory::memset;
    });
    const auto matmul = merged_where(ks, [](KernelCategory c) {
        return c == KernelCategory::gemm || c == KernelCategory::attention;
    });
    r.kernel_span_us = all.back().end - all.front().start;
    r.idle_us = r.kernel_span_us - detail::total_length(all);
    r.compute_us = detail::total_length(comp);
    r.non_compute_us = r.kernel_span_us - r.compute_us - r.idle_us;
    r.comm_us = detail::total_length(comm);
    r.memory_us = detail::total_length(mem);
    r.matmul_us = detail::total_length(matmul);
    const double comm_overlap = detail::overlap_length(comm, comp);
    r.exposed_comm_us = r.comm_us - comm_overlap;
    // Memory copies hidden under neither compute nor communication.
    std::vector<Interval> busy = comp;
    busy.insert(busy.end(), comm.begin(), comm.end());
    r.exposed_memory_us = r.memory_us - detail::overlap_length(mem, detail::merge_intervals(busy));
    if (r.comm_us > 0) {
        const double pct = 100.0 * comm_overlap / r.comm_us;
        // HTA reports round(100 * ratio, 2).
        r.comm_comp_overlap_pct = opts.hta_compatible ? std::round(pct * 100.0) / 100.0 : pct;
    }
    r.categories = category_totals(d, ks);
    r.iterations = iterations(d, ks);
    double sum = 0;
    int n = 0;
    for (const auto& s : d.steps) {
        if (!s.on_cpu) continue;
        sum += s.dur_us;
        ++n;
    }
    r.mean_step_us = n > 0 ? sum / n : 0.0;
    return r;
}

}  // namespace lostflops::trace
