// Roofline time of GPU operators (Williams, Waterman & Patterson 2009:
// time >= max(FLOPs / peak, bytes / bandwidth)) with the two losses that make
// small GEMMs slower than their FLOPs say:
//  - tile and wave quantisation: a GEMM is cut into output tiles (CUTLASS /
//    cuBLAS use 256x128, 128x128, 128x64, 64x64 ...) scheduled in waves of one
//    tile per SM; a partly filled last wave or partly filled edge tiles waste
//    the remainder (NVIDIA, "Matrix Multiplication Background User's Guide",
//    sections "Tile quantization" and "Wave quantization");
//  - a short k loop: each tile pays a prologue/epilogue of fixed time,
//    modelled as k / (k + k_half) of the main-loop rate, k_half growing with
//    the SM's throughput (a faster SM runs more k in that time).
// Kernel launch overhead is counted apart (estimate: kernels per layer).
// Efficiencies per device family (calibration.h), from component
// micro-benchmarks: gemm_max per operand format (data/calibration/gemm.csv),
// attention curves by kernel, pass, mask, head dimension and sequence length
// (attention.csv; FlashAttention-3 paper figs. 5-6 and others), streaming
// bandwidth (memory_bound.csv), and a power law for capped boards (fitted on
// the gemm.csv rows measured at two powers: FBGEMM PR #2546 at 500 W against
// the 700 W rows).
#include "cost/device_time.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "lostflops/error.h"

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

DeviceUse device_use(const Job& job) {
    DeviceUse u;
    u.framework = job.training.framework;
    // Ring attention (context parallelism) calls the kernel on chunks of s/cp.
    u.seq = static_cast<double>(job.training.seq_length) / std::max(1, job.plan.cp);
    // The first attention kind's head dim (the attention curves' key); a model
    // without attention keeps the default.
    for (const auto& k : job.model.kinds())
        if (k.has_attention()) {
            u.head_dim = static_cast<int>(k.attention.head_dim);
            break;
        }
    u.causal = true;  // decoder LLMs (layer_work.cpp counts causal attention FLOPs)
    return u;
}

double gemm_k_half(double k_half_per_tflops_sm, double peak_flops, int sms) {
    return k_half_per_tflops_sm * peak_flops / 1e12 / std::max(1, sms);
}

double power_factor(const Gpu& gpu, const DeviceFamily& f) {
    if (!(f.reference_w_per_tflop > 0) || !(f.power_exponent > 0) || !(gpu.tdp_w > 0) ||
        !(gpu.peak_bf16_tflops > 0))
        return 1.0;
    const double w = gpu.tdp_w / gpu.peak_bf16_tflops;
    return w >= f.reference_w_per_tflop ? 1.0 : std::pow(w / f.reference_w_per_tflop, f.power_exponent);
}

namespace {

GemmDtype gemm_dtype(Precision p, const DeviceUse& use) {
    return p == Precision::fp8 ? use.fp8 : GemmDtype::bf16;
}

// Points of one curve: kernel, pass, causal, the head dimension nearest
// `head_dim` among those measured (ties: the larger). Empty if none.
struct Curve {
    const AttentionPoint* begin = nullptr;
    const AttentionPoint* end = nullptr;
    bool empty() const { return begin == end; }
};

Curve find_curve(const DeviceFamily& f, AttentionImpl kernel, bool backward, bool causal, int head_dim) {
    // Nearest in log(head dim): the smallest ratio max(a/b, b/a), no log
    // needed. One pass: a curve's points are one run (sorted, see
    // family_ratio), so the best run so far is kept as it is found.
    const double want = std::max(1, head_dim);
    Curve c;
    double best_d = 0;
    for (const auto& p : f.attention) {
        if (p.kernel != kernel || p.backward != backward || p.causal != causal) continue;
        if (c.begin && p.head_dim == c.begin->head_dim) {
            c.end = &p + 1;
            continue;
        }
        const double r = p.head_dim / want, d = std::max(r, 1.0 / r);
        if (!c.begin || d < best_d || (d == best_d && p.head_dim > c.begin->head_dim)) {
            c.begin = &p;
            c.end = &p + 1;
            best_d = d;
        }
    }
    return c;
}

// Log-linear in seq between points (sorted by seq), flat outside.
double curve_at(const Curve& c, double seq) {
    if (seq <= c.begin->seq) return c.begin->efficiency;
    const AttentionPoint* last = c.end - 1;
    if (seq >= last->seq) return last->efficiency;
    for (const AttentionPoint* p = c.begin; p + 1 < c.end; ++p) {
        if (seq > (p + 1)->seq) continue;
        const double w = std::log(seq / p->seq) / std::log((p + 1)->seq / p->seq);
        return p->efficiency + w * ((p + 1)->efficiency - p->efficiency);
    }
    return last->efficiency;
}

// Mean ratio num/den of the family's curve pairs (pass and mask of each) at
// the same kernel and head dimension (64, 128, 256), each at `seq` (0 if no
// pair is measured). One pass over the points: they are sorted by kernel,
// pass, mask, head dimension and seq (calibration_devices.cpp), so each
// curve is a run.
double family_ratio(const DeviceFamily& f, double seq, bool num_bwd, bool num_causal, bool den_bwd,
                    bool den_causal) {
    Curve num[kAttentionImplCount][3], den[kAttentionImplCount][3];
    for (const auto& p : f.attention) {
        const int hi = p.head_dim == 64 ? 0 : p.head_dim == 128 ? 1 : p.head_dim == 256 ? 2 : -1;
        if (hi < 0) continue;
        const bool is_num = p.backward == num_bwd && p.causal == num_causal;
        const bool is_den = p.backward == den_bwd && p.causal == den_causal;
        for (Curve* c : {is_num ? &num[static_cast<int>(p.kernel)][hi] : nullptr,
                         is_den ? &den[static_cast<int>(p.kernel)][hi] : nullptr}) {
            if (c == nullptr) continue;
            if (!c->begin) c->begin = &p;
            c->end = &p + 1;
        }
    }
    double sum = 0;
    int n = 0;
    for (int k = 0; k < kAttentionImplCount; ++k)
        for (int hi = 0; hi < 3; ++hi) {
            if (num[k][hi].empty() || den[k][hi].empty()) continue;
            sum += curve_at(num[k][hi], seq) / curve_at(den[k][hi], seq);
            ++n;
        }
    return n ? sum / n : 0.0;
}

}  // namespace

double attention_efficiency(const DeviceFamily& f, AttentionImpl kernel, bool backward, bool causal, int head_dim,
                            double seq) {
    const Curve exact = find_curve(f, kernel, backward, causal, head_dim);
    if (!exact.empty()) return curve_at(exact, seq);
    if (causal) {
        // Causal not measured: the non-causal curve times the family's causal
        // / non-causal ratio of forward passes (short sequences lose most).
        const double base = attention_efficiency(f, kernel, backward, false, head_dim, seq);
        const double r = family_ratio(f, seq, false, true, false, false);
        return base * (r > 0 ? r : 1.0);
    }
    if (backward) {
        const double fwd = attention_efficiency(f, kernel, false, false, head_dim, seq);
        const double r = family_ratio(f, seq, true, false, false, false);
        return r > 0 ? fwd * r : 0.0;
    }
    return 0.0;
}

DeviceModel make_device_model(const Gpu& gpu, Precision p, const Calibration& cal, const DeviceUse& use) {
    DeviceModel d;
    const DeviceFamily& f = cal.device(gpu.arch);
    const GemmDtype dtype = gemm_dtype(p, use);
    const double gmax = f.gemm_max[static_cast<int>(dtype)];
    if (!(gmax > 0))
        throw InputError(cal.source, "devices." + f.name + ".gemm_max." + to_string(dtype),
                         std::string("no measurement of ") + to_string(dtype) + " GEMMs on the " + f.name +
                             " family (data/calibration/gemm.csv); add one or choose another precision");
    // Compute-bound kernels run at the component rate, times the power model
    // and the sustained fraction of a training job (calibration.h).
    d.power_factor = power_factor(gpu, f) * cal.sustained_compute;
    d.peak_flops = gpu.peak_tflops(p) * 1e12;
    // fp8 training (Transformer Engine) runs only the GEMMs with weights in
    // fp8; attention and everything else stay in bf16.
    d.attention_peak_flops = (p == Precision::fp8 ? gpu.peak_tflops(Precision::bf16) : gpu.peak_tflops(p)) * 1e12;
    d.hbm_Bps = gpu.hbm_GBps * 1e9;
    d.sms = std::max(1, gpu.sm_count);
    d.bytes_per_element = p == Precision::fp8 ? 1.0 : 2.0;
    d.gemm_max = gmax * d.power_factor;
    d.attention_kernel = f.attention_kernel[static_cast<int>(use.framework)];
    d.attention_fwd = attention_efficiency(f, d.attention_kernel, false, use.causal, use.head_dim, use.seq) * d.power_factor;
    d.attention_bwd = attention_efficiency(f, d.attention_kernel, true, use.causal, use.head_dim, use.seq) * d.power_factor;
    if (!(d.attention_fwd > 0) || !(d.attention_bwd > 0))
        throw InputError(cal.source, "devices." + f.name + ".attention",
                         std::string("no ") + to_string(d.attention_kernel) + " attention curve on the " + f.name +
                             " family (data/calibration/attention.csv)");
    d.memory_bound = f.memory_bound;
    d.gemm_k_half = gemm_k_half(cal.gemm_k_half, d.peak_flops, d.sms);
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
    return flops / (d.attention_peak_flops * d.attention_fwd);
}

double flash_attention_bwd_s(const DeviceModel& d, double flops) {
    if (flops <= 0) return 0;
    return 2.5 * flops / (d.attention_peak_flops * d.attention_bwd);
}

double memory_time_s(const DeviceModel& d, double bytes) {
    return bytes / (d.hbm_Bps * d.memory_bound);
}

}  // namespace lostflops
