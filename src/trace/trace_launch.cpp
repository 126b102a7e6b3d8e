// CUDA launch statistics of one rank (definitions in include/lostflops/trace.h,
// LaunchStats): each analysed kernel joined with its CPU launch through the
// correlation id (Kineto's cuda_runtime / cuda_driver events carry the same
// args.correlation as the kernel they launch); launch delay = kernel start -
// launch start; a kernel is launch bound when its GPU duration is below its
// launch call's CPU duration (the comparison of HTA's
// hta/analyzers/cuda_kernel_analysis.py, CPU op vs kernel duration). The
// median delay is nth_element over the delays (exact, one copy of 8 bytes per
// launched kernel).
#include <algorithm>
#include <cmath>
#include <map>

#include "lostflops/trace.h"
#include "trace/trace_internal.h"

namespace lostflops::trace::detail {

LaunchStats launch_stats(const TraceData& d, const std::vector<Picked>& ks, const Rounding& r) {
    LaunchStats out;
    struct Sum {
        int64_t count = 0, bound = 0;
        double launch = 0, gpu = 0, delay = 0;
    };
    std::map<uint32_t, Sum> by_name;  // name id -> sums
    std::vector<double> delays;
    double launch_sum = 0, gpu_sum = 0, delay_sum = 0;
    for (const auto& k : ks) {
        const GpuEvent& g = d.gpu[k.ev];
        const CpuLaunch* l = find_launch(d, g.correlation);
        if (l == nullptr || g.correlation == kNoCorrelation || !(l->dur_us >= 0) || !std::isfinite(l->dur_us)) continue;
        const double launch = l->dur_us;
        const double gpu = k.iv.end - k.iv.start;
        const double delay = k.iv.start - r.start(l->ts_us);
        ++out.launched;
        launch_sum += launch;
        gpu_sum += gpu;
        delay_sum += delay;
        delays.push_back(delay);
        const bool bound = gpu < launch;
        if (bound) {
            ++out.launch_bound;
            out.launch_bound_gpu_us += gpu;
        }
        Sum& s = by_name[d.label(g).name_id];
        ++s.count;
        s.bound += bound ? 1 : 0;
        s.launch += launch;
        s.gpu += gpu;
        s.delay += delay;
    }
    if (out.launched == 0) return out;
    const auto n = static_cast<double>(out.launched);
    out.mean_launch_us = launch_sum / n;
    out.mean_gpu_us = gpu_sum / n;
    out.mean_delay_us = delay_sum / n;
    const std::size_t mid = delays.size() / 2;
    std::nth_element(delays.begin(), delays.begin() + static_cast<std::ptrdiff_t>(mid), delays.end());
    if (delays.size() % 2 == 1) {
        out.median_delay_us = delays[mid];
    } else {
        const double hi = delays[mid];
        const double lo = *std::max_element(delays.begin(), delays.begin() + static_cast<std::ptrdiff_t>(mid));
        out.median_delay_us = 0.5 * (lo + hi);
    }
    for (const auto& [name, s] : by_name) {
        const auto c = static_cast<double>(s.count);
        out.kernels.push_back({d.names[name], s.count, s.launch / c, s.gpu / c, s.delay / c, s.bound});
    }
    // Most launch-bound calls first, then most calls, then name (the map's order, kept by the stable sort).
    std::stable_sort(out.kernels.begin(), out.kernels.end(), [](const LaunchKernel& a, const LaunchKernel& b) {
        return a.launch_bound != b.launch_bound ? a.launch_bound > b.launch_bound : a.count > b.count;
    });
    if (out.kernels.size() > kMaxLaunchKernels) out.kernels.resize(kMaxLaunchKernels);
    return out;
}

}  // namespace lostflops::trace::detail
