// Idle-time breakdown per CUDA stream, after Holistic Trace Analysis
// (facebookresearch/HolisticTraceAnalysis, hta/analyzers/breakdown_analysis.py
// _analyze_idle_time_for_stream and get_idle_time_breakdown; threshold from
// hta/trace_analysis.py, consecutive_kernel_delay = 30). Per stream, kernels in
// start order; the gap before each kernel (its start minus the previous
// kernel's end) is host wait when the kernel's CPU launch (the CPU event with
// its correlation id) started after the previous kernel ended, else kernel
// wait when shorter than the threshold, else other. The first kernel of a
// stream has no gap. Rules of each convention: include/lostflops/trace.h
// (StreamIdle).
#include <algorithm>
#include <numeric>

#include "lostflops/trace.h"
#include "trace/trace_internal.h"

namespace lostflops::trace::detail {

std::vector<StreamIdle> idle_breakdown(const TraceData& d, const std::vector<Picked>& ks, const Rounding& r,
                                       bool hta_compatible) {
    // Kernel indices grouped by stream; within a stream the start order of
    // `ks` is kept (stable sort), as HTA's sort by start keeps it.
    std::vector<uint32_t> order(ks.size());
    std::iota(order.begin(), order.end(), 0u);
    const auto stream_of = [&](uint32_t i) { return d.label(d.gpu[ks[i].ev]).stream; };
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return stream_of(a) < stream_of(b); });
    std::vector<StreamIdle> out;
    double prev_end = 0;
    for (std::size_t n = 0; n < order.size(); ++n) {
        const Picked& k = ks[order[n]];
        const int64_t stream = stream_of(order[n]);
        if (out.empty() || out.back().stream != stream) {
            out.push_back(StreamIdle{stream, 0, 0, 0, 0});
            out.back().kernels = 1;
            prev_end = k.iv.end;
            continue;
        }
        StreamIdle& s = out.back();
        ++s.kernels;
        double gap = k.iv.start - prev_end;
        if (!hta_compatible) gap = std::max(gap, 0.0);
        bool launched = false;
        const double launch = launch_ts(d, d.gpu[k.ev].correlation, launched);
        if (launched && r.start(launch) > prev_end) {
            s.host_wait_us += gap;
        } else if (gap < kKernelWaitThresholdUs) {
            s.kernel_wait_us += gap;
        } else {
            s.other_us += gap;
        }
        prev_end = k.iv.end;
    }
    return out;
}

}  // namespace lostflops::trace::detail
