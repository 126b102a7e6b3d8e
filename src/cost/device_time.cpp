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
// (attention.csv; FlashAttention-3 paper figs. 5-6 and others; read in
// attention_lookup.cpp), streaming bandwidth (memory_bound.csv), and a power
// law for capped boards (fitted on the gemm.csv rows measured at two powers:
// FBGEMM PR #2546 at 500 W against the 700 W rows).
// Eager PyTorch under autocast (framework hf): three elementwise paths of
// PyTorch's loops run below the streaming rate (unvectorised bf16-to-fp32
// copies, fp32 broadcasts, rotary's mixed-dtype and strided kernels), priced
// at their own fractions of HBM, and the GPU's gap between queued kernels
// replaces the fitted per-kernel overhead (calibration.h hf_kernel_gap_us;
// the H200 traces' kernels, docs/eager-gpu.md). A transformers model under
// torch.compile runs attention over the whole square with a boolean mask
// (hf_attention.h masked_square_attention): the unmasked curves at a measured
// fraction of their rate (calibration.h hf_masked_attention_*_fraction).
// Under framework hf the GEMMs run at the step's clock: the power-capped
// board clocks up while the step's memory-bound kernels draw less than a
// GEMM (calibration.h hf_power_bound_gemm_fraction).
#include "cost/device_time.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cost/attention_lookup.h"
#include "lostflops/accelerator.h"
#include "lostflops/error.h"
#include "lostflops/fp8_recipe.h"
#include "lostflops/hf_attention.h"

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
    u.fp8 = fp8_recipe_row(job.training.fp8_recipe).gemm;
    u.causal = true;  // decoder LLMs (layer_work.cpp counts causal attention FLOPs)
    u.masked_square = masked_square_attention(job.model, job.training);
    if (u.masked_square) u.causal = false;
    u.compiled_hf = job.training.framework == Framework::hf && job.training.compile && !job.training.xla;
    u.eager_hf = job.training.framework == Framework::hf && job.training.precision != Precision::fp32 &&
                 !job.training.compile && !job.training.xla;
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

}  // namespace

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
                             " family (data/calibration/gemm.csv); add one or choose another precision" +
                             (p == Precision::fp8 ? std::string(" or training.fp8_recipe") : std::string()));
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
    // A transformers step's GEMMs run at the clock the power cap leaves them
    // beside the step's other kernels, above the back-to-back components'
    // (calibration.h hf_power_bound_gemm_fraction).
    if (use.framework == Framework::hf) d.gemm_max = std::min(1.0, d.gemm_max / cal.hf_power_bound_gemm_fraction);
    d.attention_kernel = f.attention_kernel[static_cast<int>(use.framework)];
    const AttentionEfficiency a = attention_at(f, d.attention_kernel, use);
    d.attention_fwd = a.fwd * d.power_factor;
    d.attention_bwd = a.bwd * d.power_factor;
    if (use.masked_square) {  // calibration.h: cuDNN with a boolean mask, measured on the H200
        d.attention_fwd *= cal.hf_masked_attention_fwd_fraction;
        d.attention_bwd *= cal.hf_masked_attention_bwd_fraction;
        d.attention_masked_fwd = d.attention_fwd;
        d.attention_masked_bwd = d.attention_bwd;
    } else if (use.framework == Framework::hf) {
        // Eager transformers: the layers whose window or chunk SDPA gets as
        // an explicit mask (LayerWork::attention_masked_flops_fwd).
        DeviceUse square = use;
        square.causal = false;
        // A family without a non-causal curve (none measured, no pair to
        // scale from) keeps its causal rates under the fractions.
        const AttentionEfficiency m = attention_at(f, d.attention_kernel, square);
        d.attention_masked_fwd = (m.fwd > 0 ? m.fwd : a.fwd) * d.power_factor * cal.hf_masked_attention_fwd_fraction;
        d.attention_masked_bwd = (m.bwd > 0 ? m.bwd : a.bwd) * d.power_factor * cal.hf_masked_attention_bwd_fraction;
    }
    if (!(d.attention_fwd > 0) || !(d.attention_bwd > 0))
        throw InputError(cal.source, "devices." + f.name + ".attention",
                         std::string("no ") + to_string(d.attention_kernel) + " attention curve on the " + f.name +
                             " family (data/calibration/attention.csv)");
    d.memory_bound = f.memory_bound;
    d.gemm_k_half = gemm_k_half(cal.gemm_k_half, d.peak_flops, d.sms);
    d.kernel_overhead_s = cal.kernel_overhead_us * 1e-6;
    if (use.compiled_hf) d.kernel_overhead_s = cal.hf_kernel_gap_us * 1e-6;  // Inductor's kernels, queued or replayed
    if (use.eager_hf) {  // calibration.h: measured on the H200 traces' kernels
        d.kernel_overhead_s = cal.hf_kernel_gap_us * 1e-6;
        d.upcast_Bps = d.hbm_Bps * cal.hf_upcast_hbm_fraction;
        d.broadcast_Bps = d.hbm_Bps * cal.hf_broadcast_hbm_fraction;
        d.strided_Bps = d.hbm_Bps * cal.hf_strided_hbm_fraction;
    }
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

double flash_attention_fwd_s(const DeviceModel& d, double flops, double masked) {
    if (flops <= 0) return 0;
    if (masked <= 0) return flops / (d.attention_peak_flops * d.attention_fwd);
    return (flops - masked) / (d.attention_peak_flops * d.attention_fwd) +
           masked / (d.attention_peak_flops * d.attention_masked_fwd);
}

double flash_attention_bwd_s(const DeviceModel& d, double flops, double masked) {
    if (flops <= 0) return 0;
    if (masked <= 0) return 2.5 * flops / (d.attention_peak_flops * d.attention_bwd);
    return 2.5 * (flops - masked) / (d.attention_peak_flops * d.attention_bwd) +
           2.5 * masked / (d.attention_peak_flops * d.attention_masked_bwd);
}

double memory_time_s(const DeviceModel& d, double bytes) {
    return bytes / (d.hbm_Bps * d.memory_bound);
}

double eager_class_extra_s(const DeviceModel& d, double upcast_bytes, double broadcast_bytes, double strided_bytes) {
    const auto extra = [&](double bytes, double rate_Bps) {
        return rate_Bps > 0 && bytes > 0 ? bytes / rate_Bps - memory_time_s(d, bytes) : 0.0;
    };
    return extra(upcast_bytes, d.upcast_Bps) + extra(broadcast_bytes, d.broadcast_Bps) +
           extra(strided_bytes, d.strided_Bps);
}

}  // namespace lostflops
