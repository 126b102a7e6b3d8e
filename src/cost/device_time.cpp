// Roofline time of GPU operators (Williams, Waterman & Patterson 2009:
// time >= max(FLOPs / peak, bytes / bandwidth)) with the two losses that make
// small GEMMs slower than their FLOPs say:
//  - tile and wave quantisation: a GEMM is cut into output tiles (CUTLASS /
//    cuBLAS use 256x128, 128x128, 128x64, 64x64 ...) scheduled in waves of one
//    tile per SM; a partly filled last wave or partly filled edge tiles waste
//    the remainder (NVIDIA, "Matrix Multiplication Background User's Guide",
//    sections "Tile quantization" and "Wave quantization");
//  - a short k loop: each tile pays a prologue/epilogue, modelled as
//    k / (k + k_half) of the main-loop rate.
// Kernel launch overhead is counted apart (estimate: kernels per layer).
#include "cost/device_time.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace lostflops {

namespace {

struct Tile {
    double m, n;
    double rate;  // main-loop efficiency of this tile shape relative to the largest
};

// Relative rates of smaller tiles: less operand reuse per loaded byte, so lower
// throughput (CUTLASS profiler tables show ~10-30 % loss from 128x128 to 64x64).
constexpr Tile kTiles[] = {
    {256, 128, 1.00}, {128, 256, 1.00}, {128, 128, 0.95}, {128, 64, 0.85}, {64, 128, 0.85}, {64, 64, 0.70},
};

}  // namespace

DeviceModel make_device_model(const Gpu& gpu, Precision p, const Calibration& cal) {
    DeviceModel d;
    const DeviceFactors& f = cal.device(gpu.arch);
    d.peak_flops = gpu.peak_tflops(p) * 1e12;
    // fp8 training (Transformer Engine) runs only the GEMMs with weights in
    // fp8; attention and everything else stay in bf16.
    d.attention_peak_flops = (p == Precision::fp8 ? gpu.peak_tflops(Precision::bf16) : gpu.peak_tflops(p)) * 1e12;
    d.hbm_Bps = gpu.hbm_GBps * 1e9;
    d.sms = std::max(1, gpu.sm_count);
    d.bytes_per_element = p == Precision::fp8 ? 1.0 : 2.0;
    d.gemm_max = f.gemm_max;
    d.attention_fwd = f.attention_fwd;
    d.attention_bwd = f.attention_bwd;
    d.memory_bound = f.memory_bound;
    d.gemm_k_half = cal.gemm_k_half;
    d.kernel_overhead_s = cal.kernel_overhead_us * 1e-6;
    return d;
}

namespace {

double tile_efficiency(int sms, double m, double n) {
    double best = 0;
    for (const Tile& t : kTiles) {
        const double tiles = std::ceil(m / t.m) * std::ceil(n / t.n);
        const double waves = std::ceil(tiles / sms);
        const double filled = (m * n) / (waves * sms * t.m * t.n);
        best = std::max(best, filled * t.rate);
    }
    return std::min(best, 1.0);
}

}  // namespace

double gemm_tile_efficiency(const DeviceModel& d, double m, double n) {
    // A search asks for the same few shapes millions of times: a small
    // per-thread memo of this pure function (same value, no allocation).
    struct Entry {
        double m = -1, n = -1;
        int sms = 0;
        double eff = 0;
    };
    if (!(m >= 0 && m < 1e15 && n >= 0 && n < 1e15)) return tile_efficiency(d.sms, m, n);
    static thread_local Entry memo[64];
    const uint64_t key = static_cast<uint64_t>(m) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(n) * 0xC2B2AE3D27D4EB4Full;
    const auto h = static_cast<size_t>(key >> 58);  // top 6 bits: 64 entries
    Entry& e = memo[h];
    if (e.m == m && e.n == n && e.sms == d.sms) return e.eff;
    e = {m, n, d.sms, tile_efficiency(d.sms, m, n)};
    return e.eff;
}

double gemm_time_s(const DeviceModel& d, double m, double n, double k) {
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    const double flops = 2.0 * m * n * k;
    const double eff = d.gemm_max * gemm_tile_efficiency(d, m, n) * (k / (k + d.gemm_k_half));
    const double compute_s = flops / (d.peak_flops * eff);
    const double bytes = d.bytes_per_element * (m * k + k * n) + 2.0 * m * n;
    const double memory_s = bytes / (d.hbm_Bps * d.memory_bound);
    return std::max(compute_s, memory_s);
}

double flash_attention_fwd_s(const DeviceModel& d, double flops) {
    if (flops <= 0) return 0;
    return flops / (d.attention_peak_flops * d.gemm_max * d.attention_fwd);
}

double flash_attention_bwd_s(const DeviceModel& d, double flops) {
    if (flops <= 0) return 0;
    return 2.5 * flops / (d.attention_peak_flops * d.gemm_max * d.attention_bwd);
}

double memory_time_s(const DeviceModel& d, double bytes) {
    return bytes / (d.hbm_Bps * d.memory_bound);
}

}  // namespace lostflops
