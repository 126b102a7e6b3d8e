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
// Systolic matrix units (TPU MXUs; Austin et al., "How to Scale Your Model"
// (2025), part 2 "How to Think About TPUs"): the MXU multiplies
// bf16[8,128] @ bf16[128,128] every 8 cycles (256 x 256 on v6e), so a matmul
// runs on operands padded to 8 rows and to the array's side in its
// contracting and output dimensions; the padded fraction is lost. No waves
// (XLA tiles one program over the MXUs), no per-kernel launch (XLA compiles
// the step into one program; fused elementwise work streams HBM once), the
// HBM roofline for memory-bound work. Attention without measured curves runs
// its two matmuls on the MXU: the GEMM efficiency times the padded fraction
// of the head dimension (the contracting dimension of QK^T, the output of PV).
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

#include "lostflops/accelerator.h"
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
    // Ring and all-gather context parallelism call the kernel on the rank's
    // queries, s/cp (the ring's other blocks: cost/cp_attention.h); Ulysses
    // (a2a) on the whole sequence over a share of the heads.
    const bool ulysses = job.plan.cp_comm_type == CpCommType::a2a;
    u.seq = static_cast<double>(job.training.seq_length) / (ulysses ? 1 : std::max(1, job.plan.cp));
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

// ASSUMPTION: fp32 training's TF32 GEMMs (job/gpu_parse.cpp) take the
// family's bf16 GEMM efficiency shape, scaled to the TF32 peak: no TF32 GEMM
// measurement is in data/calibration/gemm.csv.
GemmDtype gemm_dtype(Precision p, const DeviceUse& use) {
    return p == Precision::fp8 ? use.fp8 : GemmDtype::bf16;
}

// Bytes of a GEMM operand element: fp8 1, fp32 4, 16-bit 2.
double operand_bytes(Precision p) {
    return p == Precision::fp8 ? 1.0 : p == Precision::fp32 ? 4.0 : 2.0;
}

// Points of one curve: kernel, pass, causal, one head dimension, sorted by
// seq. Empty if none.
struct Curve {
    const AttentionPoint* begin = nullptr;
    const AttentionPoint* end = nullptr;
    bool empty() const { return begin == end; }
};

// Log-linear in seq between points (sorted by seq), flat outside. `weight`
// gives the interpolation weight log(seq / a) / log(b / a) between the points
// at seq a < b.
template <class Weight>
double curve_at(const Curve& c, double seq, Weight&& weight) {
    if (seq <= c.begin->seq) return c.begin->efficiency;
    const AttentionPoint* last = c.end - 1;
    if (seq >= last->seq) return last->efficiency;
    for (const AttentionPoint* p = c.begin; p + 1 < c.end; ++p) {
        if (seq > (p + 1)->seq) continue;
        const double w = weight(seq, p->seq, (p + 1)->seq);
        return p->efficiency + w * ((p + 1)->efficiency - p->efficiency);
    }
    return last->efficiency;
}

// The curves of one kernel's lookups at one head dimension, read from the
// family's index of its curves (calibration.h AttentionCurves, built when the
// profile is read):
//  - nearest(pass, mask): the kernel's curve at the head dimension nearest
//    `head_dim` in log(head dim), i.e. the smallest ratio max(a/b, b/a)
//    (ties: the larger);
//  - ratio: the family's mask ratio over every kernel's curves at the three
//    common head dimensions; the pass ratio from the kernel's own pairs when
//    the family has any (backward_ratio), else over every kernel's; kept
//    once computed (make_device_model asks for the forward and the backward
//    pass at the same seq).
class AttentionLookup {
public:
    AttentionLookup(const DeviceFamily& f, AttentionImpl kernel, int head_dim)
        : curves_(f.attention), kernel_(kernel), want_(std::max(1, head_dim)) {}

    double efficiency(bool backward, bool causal, double seq) {
        const Curve exact = nearest(backward, causal);
        if (!exact.empty()) return at(exact, seq);
        if (causal) {
            // Causal not measured: the non-causal curve times the family's
            // causal / non-causal ratio of forward passes (short sequences
            // lose most).
            const double base = efficiency(backward, false, seq);
            const double r = ratio(causal_ratio_, seq, false, true);
            return base * (r > 0 ? r : 1.0);
        }
        if (backward) {
            const double fwd = efficiency(false, false, seq);
            const double r = backward_ratio(seq);
            return r > 0 ? fwd * r : 0.0;
        }
        return 0.0;
    }

private:
    struct Ratio {
        double seq = -1;
        double value = 0;
    };

    // The curves of a family share their seq grids, so the ratios ask for
    // the same few weights over and over: kept (same value, two logs fewer).
    struct Weight {
        double seq = 0, a = 0, b = 0, w = 0;
    };

    double weight(double seq, double a, double b) {
        for (int i = 0; i < weights_used_; ++i) {
            const Weight& m = weights_[i];
            if (m.seq == seq && m.a == a && m.b == b) return m.w;
        }
        const double w = std::log(seq / a) / std::log(b / a);
        weights_[weights_next_] = {seq, a, b, w};
        weights_next_ = (weights_next_ + 1) % kWeights;
        weights_used_ = std::min(weights_used_ + 1, kWeights);
        return w;
    }

    double at(const Curve& c, double seq) {
        return curve_at(c, seq, [this](double x, double a, double b) { return weight(x, a, b); });
    }

    Curve points_of(const AttentionCurves::Curve* c) const {
        if (!c) return {};
        const AttentionPoint* p = curves_.points().data();
        return {p + c->begin, p + c->end};
    }

    Curve nearest(bool backward, bool causal) const {
        const AttentionCurves::Curve* best = nullptr;
        double best_d = 0;
        for (const AttentionCurves::Curve& c : curves_.curves(kernel_, backward, causal)) {
            const double r = c.head_dim / want_, d = std::max(r, 1.0 / r);
            if (!best || d < best_d || (d == best_d && c.head_dim > best->head_dim)) {
                best = &c;
                best_d = d;
            }
        }
        return points_of(best);
    }

    // Running sum of the ratios num / den at `seq` of the kernel's curve
    // pair at one head dimension (nothing when either is not measured).
    struct RatioSum {
        double sum = 0;
        int n = 0;
        double mean() const { return n ? sum / n : 0.0; }
    };
    void add_pair(RatioSum& r, AttentionImpl kernel, int hd, double seq, bool num_bwd, bool num_causal,
                  bool den_causal) {
        const Curve num = points_of(curves_.curve(kernel, num_bwd, num_causal, hd));
        if (num.empty()) return;
        const Curve den = points_of(curves_.curve(kernel, false, den_causal, hd));
        if (den.empty()) return;
        r.sum += at(num, seq) / at(den, seq);
        ++r.n;
    }

    // Mean ratio (num pass, num mask) / (forward, non-causal) of the
    // family's curve pairs at the same kernel and head dimension (64, 128,
    // 256), each at `seq` (0 if no pair is measured).
    double ratio(Ratio& memo, double seq, bool num_bwd, bool num_causal) {
        if (memo.seq == seq) return memo.value;
        RatioSum r;
        for (int k = 0; k < kAttentionImplCount; ++k)
            for (int hd : {64, 128, 256}) add_pair(r, static_cast<AttentionImpl>(k), hd, seq, num_bwd, num_causal, false);
        memo = {seq, r.mean()};
        return memo.value;
    }

    // Backward over forward of the same mask. A kernel's own pairs (either
    // mask, any head dimension) when the family measured any: the ratio is
    // a property of the kernel's implementation (on Blackwell, FlashAttention-2
    // runs Ampere-style MMA at ~0.88-0.96 backward/forward, cuDNN 0.78-0.80:
    // attention.csv), so the same kernel's other mask is better evidence
    // than another kernel's same mask. Else the family's mean over every
    // kernel's non-causal pairs.
    double backward_ratio(double seq) {
        if (own_backward_ratio_.seq != seq) {
            RatioSum r;
            for (bool causal : {false, true})
                for (int hd : {64, 128, 256}) add_pair(r, kernel_, hd, seq, true, causal, causal);
            own_backward_ratio_ = {seq, r.mean()};
        }
        if (own_backward_ratio_.value > 0) return own_backward_ratio_.value;
        return ratio(backward_ratio_, seq, true, false);
    }

    const AttentionCurves& curves_;
    AttentionImpl kernel_;
    double want_;
    Ratio causal_ratio_, backward_ratio_, own_backward_ratio_;
    static constexpr int kWeights = 8;
    Weight weights_[kWeights];
    int weights_used_ = 0, weights_next_ = 0;
};

struct AttentionEfficiency {
    double fwd = 0, bwd = 0;
};

// The curves read at one job's shape. Every plan of a search reads the same
// few shapes: a small per-thread memo of this pure function of the curves
// (named by AttentionCurves::id, which changes with the points), the kernel
// and the shape; same values, no allocation.
AttentionEfficiency attention_at(const DeviceFamily& f, AttentionImpl kernel, const DeviceUse& use) {
    struct Entry {
        uint64_t id = 0;
        AttentionImpl kernel{};
        int head_dim = 0;
        bool causal = false;
        double seq = -1;
        AttentionEfficiency eff;
    };
    static thread_local Entry memo[8];
    const uint64_t id = (use.seq >= 0 && use.seq < 1e15) ? f.attention.id() : 0;  // 0: not memoised
    const auto h = static_cast<size_t>((id * 0x9E3779B97F4A7C15ull ^ (id ? static_cast<uint64_t>(use.seq) : 0) * 31 ^
                                        static_cast<uint64_t>(use.head_dim) * 7 ^ static_cast<uint64_t>(kernel)) % 8);
    Entry& e = memo[h];
    if (id != 0 && e.id == id && e.kernel == kernel && e.head_dim == use.head_dim && e.causal == use.causal &&
        e.seq == use.seq)
        return e.eff;
    AttentionLookup lookup(f, kernel, use.head_dim);
    const AttentionEfficiency eff{lookup.efficiency(false, use.causal, use.seq), lookup.efficiency(true, use.causal, use.seq)};
    if (id != 0) e = {id, kernel, use.head_dim, use.causal, use.seq, eff};
    return eff;
}

}  // namespace

std::array<double, 2> attention_efficiency_at(const Gpu& gpu, const Calibration& cal, const DeviceModel& d,
                                              const DeviceUse& use) {
    const AttentionEfficiency a = attention_at(cal.device(gpu.arch), d.attention_kernel, use);
    return {a.fwd * d.power_factor, a.bwd * d.power_factor};
}

double attention_efficiency(const DeviceFamily& f, AttentionImpl kernel, bool backward, bool causal, int head_dim,
                            double seq) {
    return AttentionLookup(f, kernel, head_dim).efficiency(backward, causal, seq);
}

double padded_fraction(double x, double unit) {
    if (!(x > 0) || !(unit > 1)) return 1.0;
    return x / (std::ceil(x / unit) * unit);
}

namespace {

// A TPU family (lostflops/accelerator.h ComputeModel::systolic): the GEMM
// efficiency of the format with the padding of make_device_model's comment,
// attention from its curves when it has them, else on the MXU.
DeviceModel make_systolic_model(const Gpu& gpu, Precision p, const Calibration& cal, const DeviceFamily& f,
                                const DeviceUse& use, double gmax) {
    DeviceModel d;
    const AcceleratorTraits* t = find_accelerator(gpu.arch);
    d.mxu_dim = t && t->mxu_dim > 0 ? t->mxu_dim : 128;
    d.power_factor = power_factor(gpu, f) * cal.sustained_compute;
    d.peak_flops = gpu.peak_tflops(p) * 1e12;
    d.attention_peak_flops = (p == Precision::fp8 ? gpu.peak_tflops(Precision::bf16) : gpu.peak_tflops(p)) * 1e12;
    d.hbm_Bps = gpu.hbm_GBps * 1e9;
    d.sms = 1;
    d.bytes_per_element = operand_bytes(p);
    d.out_bytes_per_element = tensor_bytes(p);
    d.gemm_max = gmax * d.power_factor;
    d.attention_kernel = f.attention_kernel[static_cast<int>(use.framework)];
    const AttentionEfficiency a = f.attention.empty() ? AttentionEfficiency{} : attention_at(f, d.attention_kernel, use);
    const double mxu_attention = gmax * padded_fraction(use.head_dim, d.mxu_dim);
    d.attention_fwd = (a.fwd > 0 ? a.fwd : mxu_attention) * d.power_factor;
    d.attention_bwd = (a.bwd > 0 ? a.bwd : mxu_attention) * d.power_factor;
    d.memory_bound = f.memory_bound;
    d.gemm_k_half = 0;        // a weight-stationary array streams k: no per-tile prologue
    d.kernel_overhead_s = 0;  // one compiled program per step, no launches
    return d;
}

}  // namespace

DeviceModel make_device_model(const Gpu& gpu, Precision p, const Calibration& cal, const DeviceUse& use) {
    DeviceModel d;
    const DeviceFamily& f = cal.device(gpu.arch);
    const GemmDtype dtype = gemm_dtype(p, use);
    const double gmax = f.gemm_max[static_cast<int>(dtype)];
    if (!(gmax > 0))
        throw InputError(cal.source, "devices." + f.name + ".gemm_max." + to_string(dtype),
                         std::string("no measurement of ") + to_string(dtype) + " GEMMs on the " + f.name +
                             " family (data/calibration/gemm.csv); add one or choose another precision");
    // (Only TPUs have an arch name starting "tpu": the traits table is read
    // for them alone, keeping GPU estimates off the table's string scan.)
    if (gpu.arch.rfind("tpu", 0) == 0) {
        const AcceleratorTraits* t = find_accelerator(gpu.arch);
        if (t && t->compute == ComputeModel::systolic) return make_systolic_model(gpu, p, cal, f, use, gmax);
    }
    // Compute-bound kernels run at the component rate, times the power model
    // and the sustained fraction of a training job (calibration.h).
    d.power_factor = power_factor(gpu, f) * cal.sustained_compute;
    d.peak_flops = gpu.peak_tflops(p) * 1e12;
    // fp8 training (Transformer Engine) runs only the GEMMs with weights in
    // fp8; attention and everything else stay in bf16.
    d.attention_peak_flops = (p == Precision::fp8 ? gpu.peak_tflops(Precision::bf16) : gpu.peak_tflops(p)) * 1e12;
    d.hbm_Bps = gpu.hbm_GBps * 1e9;
    d.sms = std::max(1, gpu.sm_count);
    d.bytes_per_element = operand_bytes(p);
    d.out_bytes_per_element = tensor_bytes(p);
    d.gemm_max = gmax * d.power_factor;
    d.attention_kernel = f.attention_kernel[static_cast<int>(use.framework)];
    const AttentionEfficiency a = attention_at(f, d.attention_kernel, use);
    d.attention_fwd = a.fwd * d.power_factor;
    d.attention_bwd = a.bwd * d.power_factor;
    if (!(d.attention_fwd > 0) || !(d.attention_bwd > 0))
        throw InputError(cal.source, "devices." + f.name + ".attention",
                         std::string("no ") + to_string(d.attention_kernel) + " attention curve on the " + f.name +
                             " family (data/calibration/attention.csv)");
    d.memory_bound = f.memory_bound;
    d.gemm_k_half = gemm_k_half(cal.gemm_k_half, d.peak_flops, d.sms);
    d.kernel_overhead_s = cal.kernel_overhead_us * 1e-6;
    d.fp32_gemm_flops = gpu.peak_fp32_tflops * 1e12 * cal.fp32_gemm_efficiency;  // measured at the power limit
    return d;
}

DeviceModel bf16_gemm_model(const DeviceModel& d, const Gpu& gpu, const Calibration& cal) {
    const DeviceFamily& f = cal.device(gpu.arch);
    const double gmax = f.gemm_max[static_cast<int>(GemmDtype::bf16)];
    if (!(gmax > 0) || !(gpu.peak_tflops(Precision::bf16) > 0))
        throw InputError(cal.source, "devices." + f.name + ".gemm_max.bf16",
                         "no bf16 GEMM measurement on the " + f.name +
                             " family (data/calibration/gemm.csv): fp8 training runs its output layer in bf16");
    DeviceModel b = d;
    b.peak_flops = gpu.peak_tflops(Precision::bf16) * 1e12;
    b.bytes_per_element = 2.0;
    b.gemm_max = gmax * d.power_factor;
    if (d.mxu_dim == 0) b.gemm_k_half = gemm_k_half(cal.gemm_k_half, b.peak_flops, b.sms);
    return b;
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
    if (d.mxu_dim > 0) return padded_fraction(m, kSystolicRows) * padded_fraction(n, d.mxu_dim);
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
    const double eff = d.mxu_dim > 0 ? d.gemm_max * gemm_tile_efficiency(d, m, n) * padded_fraction(k, d.mxu_dim)
                                     : d.gemm_max * gemm_tile_efficiency(d, m, n) * (k / (k + d.gemm_k_half));
    const double compute_s = flops / (d.peak_flops * eff);
    const double bytes = d.bytes_per_element * (m * k + k * n) + d.out_bytes_per_element * m * n;
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
