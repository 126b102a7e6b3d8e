// Kernel-by-kernel difference of two traces (contract and definitions in
// include/lostflops/trace_diff.h): per kernel name and per category, calls and
// summed durations per profiler step in each trace, the change of the mean
// duration per call against a noise threshold, and the change per step as a
// share of the first trace's step time. Kernels and categories are those of
// analyze() (trace_pick.cpp pick_kernels, trace_classify.cpp).
#include "lostflops/trace_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "lostflops/error.h"
#include "trace/trace_internal.h"

namespace lostflops::trace {
namespace {

struct Totals {
    std::string category;
    int64_t count = 0;
    double time_us = 0;
};

struct Side {
    std::map<std::string, Totals> kernels, categories;
    double steps = 1;
    double step_us = 0;
};

Side totals_of(const TraceData& d, bool hta, std::vector<std::string>& warnings) {
    std::vector<std::string> picked;
    const auto ks = detail::pick_kernels(d, hta, picked);
    for (auto& w : picked)
        if (w.rfind("duplicate-events:", 0) == 0) warnings.push_back(d.source + ": " + w);
    if (ks.empty()) {
        throw InputError(d.source, "traceEvents", "no GPU kernels to compare (expected events of cat kernel, "
                                                  "gpu_memcpy or gpu_memset with args.stream)");
    }
    Side s;
    double first = ks.front().iv.start, last = ks.front().iv.end;
    for (const auto& k : ks) {
        const GpuLabel& l = d.label(d.gpu[k.ev]);
        const std::string& name = d.names[l.name_id];
        std::string cat = to_string(k.cat);
        if (k.cat == KernelCategory::communication) {
            cat = "comm:" + collective_of(name, d.names[l.collective_id]);
        }
        const double dur = k.iv.end - k.iv.start;
        auto& t = s.kernels[name];
        t.category = cat;
        ++t.count;
        t.time_us += dur;
        auto& c = s.categories[cat];
        c.category = cat;
        ++c.count;
        c.time_us += dur;
        first = std::min(first, k.iv.start);
        last = std::max(last, k.iv.end);
    }
    int64_t n = 0;
    double sum = 0;
    for (const auto& m : d.steps) {
        if (!m.on_cpu) continue;
        ++n;
        sum += m.dur_us;
    }
    // HTA-compatible mode drops the last step's kernels when there are two or more steps.
    const bool dropped_last = hta && d.step_names.size() >= 2 && d.has_cpu_events;
    s.steps = static_cast<double>(std::max<int64_t>(1, dropped_last ? n - 1 : n));
    s.step_us = n > 0 ? sum / static_cast<double>(n) : (last - first);
    return s;
}

KernelDiff diff_one(const std::string& name, const Totals* a, const Totals* b, const Side& sa, const Side& sb,
                    double threshold_pct) {
    KernelDiff k;
    k.name = name;
    k.category = a ? a->category : b->category;
    if (a) {
        k.count_a = static_cast<double>(a->count) / sa.steps;
        k.time_a_us = a->time_us / sa.steps;
        k.mean_a_us = a->count > 0 ? a->time_us / static_cast<double>(a->count) : 0;
    }
    if (b) {
        k.count_b = static_cast<double>(b->count) / sb.steps;
        k.time_b_us = b->time_us / sb.steps;
        k.mean_b_us = b->count > 0 ? b->time_us / static_cast<double>(b->count) : 0;
    }
    k.delta_us = k.time_b_us - k.time_a_us;
    k.step_share_pct = sa.step_us > 0 ? 100.0 * k.delta_us / sa.step_us : 0.0;
    if (!a) {
        k.change = Change::added;
    } else if (!b) {
        k.change = Change::vanished;
    } else {
        const double diff = k.mean_b_us - k.mean_a_us;
        k.mean_change_pct = k.mean_a_us > 0 ? 100.0 * diff / k.mean_a_us : 0.0;
        // A mean of zero (sub-microsecond kernels after HTA's rounding) changes when the other is not zero.
        const bool mean_moved = k.mean_a_us > 0 ? std::fabs(k.mean_change_pct) > threshold_pct : diff != 0;
        const bool time_moved = k.time_a_us > 0 ? 100.0 * std::fabs(k.delta_us) / k.time_a_us > threshold_pct
                                                : k.delta_us != 0;
        const bool calls_changed = k.count_a != k.count_b;
        const Change by_calls = k.count_b > k.count_a ? Change::more_calls : Change::fewer_calls;
        if (mean_moved && diff > 0 && k.delta_us > 0) k.change = Change::slower;
        else if (mean_moved && diff < 0 && k.delta_us < 0) k.change = Change::faster;
        else if (calls_changed && (mean_moved || time_moved)) k.change = by_calls;  // the calls moved the time
        else k.change = Change::same;
    }
    return k;
}

std::vector<KernelDiff> diff_maps(const std::map<std::string, Totals>& a, const std::map<std::string, Totals>& b,
                                  const Side& sa, const Side& sb, double threshold_pct) {
    std::vector<KernelDiff> out;
    for (const auto& [name, t] : a) {
        const auto it = b.find(name);
        out.push_back(diff_one(name, &t, it == b.end() ? nullptr : &it->second, sa, sb, threshold_pct));
    }
    for (const auto& [name, t] : b) {
        if (a.count(name) == 0) out.push_back(diff_one(name, nullptr, &t, sa, sb, threshold_pct));
    }
    // Changed first by |delta| (ties by name: the maps' order, kept by the stable sort).
    std::stable_sort(out.begin(), out.end(), [](const KernelDiff& x, const KernelDiff& y) {
        const bool cx = x.change != Change::same, cy = y.change != Change::same;
        if (cx != cy) return cx;
        return cx && std::fabs(x.delta_us) > std::fabs(y.delta_us);
    });
    return out;
}

}  // namespace

const char* to_string(Change c) {
    switch (c) {
        case Change::same: return "same";
        case Change::slower: return "slower";
        case Change::faster: return "faster";
        case Change::added: return "new";
        case Change::vanished: return "vanished";
        case Change::more_calls: return "more calls";
        case Change::fewer_calls: return "fewer calls";
    }
    return "?";
}

TraceDiff diff_traces(const TraceData& a, const TraceData& b, const DiffOptions& opts) {
    if (!(opts.threshold_pct >= 0) || !std::isfinite(opts.threshold_pct)) {
        throw InputError("--threshold", "", "expected a finite percentage >= 0");
    }
    TraceDiff d;
    const Side sa = totals_of(a, opts.hta_compatible, d.warnings);
    const Side sb = totals_of(b, opts.hta_compatible, d.warnings);
    d.source_a = a.source;
    d.source_b = b.source;
    d.steps_a = sa.steps;
    d.steps_b = sb.steps;
    d.step_a_us = sa.step_us;
    d.step_b_us = sb.step_us;
    d.threshold_pct = opts.threshold_pct;
    d.kernels = diff_maps(sa.kernels, sb.kernels, sa, sb, opts.threshold_pct);
    d.categories = diff_maps(sa.categories, sb.categories, sa, sb, opts.threshold_pct);
    return d;
}

}  // namespace lostflops::trace
