// Which kernels the analysis counts (detail::pick_kernels, trace_internal.h),
// by convention (trace.h). Native: every kernel, GPU memcpy and memset but
// the synchronisation ones. HTA-compatible (hta/common/trace.py
// _filter_irrelevant_gpu_kernels; trace_parser.py round_down_time_stamps):
// no CUDA synchronisation events; with two ProfilerSteps or more and CPU
// events, only events on a stream launched before the last step starts,
// otherwise every event with a stream; fractional times rounded inward to
// whole microseconds. Then start order, and kernels identical to another
// left out. Kernels are classified by name (trace_classify.cpp), once per
// label.
#include <algorithm>
#include <string>
#include <vector>

#include "lostflops/trace.h"
#include "trace/trace_internal.h"

namespace lostflops::trace {
namespace {

using detail::Picked;
using detail::launch_ts;
using detail::Rounding;

// Classification is by name: done once per label (name, collective, kind).
class Classifier {
public:
    Classifier(const TraceData& d, bool hta) : d_(d), hta_(hta), cache_(d.labels.size(), -1) {}
    KernelCategory operator()(const GpuEvent& g) {
        int8_t& c = cache_[g.label];
        if (c < 0) {
            const GpuLabel& l = d_.labels[g.label];
            c = static_cast<int8_t>(classify_kernel(d_.names[l.name_id], l.kind, d_.names[l.collective_id], hta_));
        }
        return static_cast<KernelCategory>(c);
    }

private:
    const TraceData& d_;
    bool hta_;
    std::vector<int8_t> cache_;
};

uint32_t index_of(const TraceData& d, const GpuEvent& g) { return static_cast<uint32_t>(&g - d.gpu.data()); }

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
        const GpuLabel& l = d.label(g);
        if (l.kind == EventKind::cuda_sync) continue;
        if (filter) {
            if (l.stream < 0) continue;
            bool found = false;
            const double ts = launch_ts(d, g.correlation, found);
            if (!found || !(r.start(ts) < last_start)) continue;
        } else if (l.stream == -1) {
            continue;
        }
        const auto cat = classify(g);
        out.push_back({{r.start(g.ts_us), r.end(g.ts_us, g.dur_us)}, index_of(d, g), cat,
                       static_cast<uint16_t>(l.group)});
    }
    return out;
}

std::vector<Picked> pick_native(const TraceData& d) {
    Classifier classify(d, false);
    std::vector<Picked> out;
    for (const auto& g : d.gpu) {
        const EventKind kind = d.label(g).kind;
        if (kind != EventKind::kernel && kind != EventKind::gpu_memcpy && kind != EventKind::gpu_memset) continue;
        const auto cat = classify(g);
        if (cat == KernelCategory::sync) continue;
        out.push_back({{g.ts_us, g.ts_us + g.dur_us}, index_of(d, g), cat, static_cast<uint16_t>(d.label(g).group)});
    }
    return out;
}

// Kernels identical to another (trace.h) left out: within each run of equal
// starts, the run's indices sorted by (duration, label, correlation) make
// twins neighbours; the first in file order stays.
uint64_t drop_duplicates(const TraceData& d, std::vector<Picked>& ks) {
    std::vector<char> drop(ks.size(), 0);
    std::vector<std::size_t> run;
    uint64_t dropped = 0;
    const auto same = [&](std::size_t a, std::size_t b) {
        const GpuEvent& x = d.gpu[ks[a].ev];
        const GpuEvent& y = d.gpu[ks[b].ev];
        return x.ts_us == y.ts_us && x.dur_us == y.dur_us && x.label == y.label && x.correlation == y.correlation;
    };
    for (std::size_t i = 0; i < ks.size();) {
        std::size_t j = i + 1;
        while (j < ks.size() && ks[j].iv.start == ks[i].iv.start) ++j;  // twins share the (rounded) start
        if (j - i > 1) {
            run.clear();
            for (std::size_t k = i; k < j; ++k) run.push_back(k);
            std::stable_sort(run.begin(), run.end(), [&](std::size_t a, std::size_t b) {
                const GpuEvent& x = d.gpu[ks[a].ev];
                const GpuEvent& y = d.gpu[ks[b].ev];
                if (x.ts_us != y.ts_us) return x.ts_us < y.ts_us;
                if (x.dur_us != y.dur_us) return x.dur_us < y.dur_us;
                if (x.label != y.label) return x.label < y.label;
                return x.correlation < y.correlation;
            });
            for (std::size_t k = 1; k < run.size(); ++k) {
                if (same(run[k - 1], run[k])) {
                    drop[run[k]] = 1;
                    ++dropped;
                }
            }
        }
        i = j;
    }
    if (dropped > 0) {
        std::size_t w = 0;
        for (std::size_t i = 0; i < ks.size(); ++i)
            if (!drop[i]) ks[w++] = ks[i];
        ks.resize(w);
    }
    return dropped;
}

}  // namespace

std::vector<Picked> detail::pick_kernels(const TraceData& d, bool hta_compatible, std::vector<std::string>& warnings) {
    auto ks = hta_compatible ? pick_hta(d, warnings) : pick_native(d);
    // Start order (stable: the order merge_intervals would give each subset),
    // so that every union is one pass.
    std::stable_sort(ks.begin(), ks.end(), [](const Picked& a, const Picked& b) { return a.iv.start < b.iv.start; });
    const uint64_t dups = d.duplicates + drop_duplicates(d, ks);
    if (dups > 0) {
        warnings.push_back("duplicate-events: " + std::to_string(dups) +
                           " events identical to another (same name, stream, start, duration and correlation) "
                           "counted once");
    }
    return ks;
}

}  // namespace lostflops::trace
