// Roofline bounds (Williams, Waterman & Patterson 2009, "Roofline: an
// insightful visual performance model"; Austin et al. 2025, "How to Scale
// Your Model", ch. 1): T >= max(F / peak, B / bandwidth); ridge = peak / bandwidth.
#include "cost/roofline.h"

#include <algorithm>
#include <limits>

namespace lostflops {

double ridge_flop_per_byte(const Gpu& gpu, Precision p) {
    return gpu.peak_tflops(p) * 1e12 / (gpu.hbm_GBps * 1e9);
}

double roofline_time_s(const Gpu& gpu, Precision p, double flops, double bytes) {
    const double peak = gpu.peak_tflops(p) * 1e12;
    if (peak <= 0) return std::numeric_limits<double>::infinity();
    return std::max(flops / peak, bytes / (gpu.hbm_GBps * 1e9));
}

}  // namespace lostflops
