// Time of operators on one GPU: GEMMs (roofline with tile and wave
// quantisation), flash attention, and memory-bound kernels. Seconds.
//
// Every efficiency comes from the GPU's device family in the calibration
// profile (calibration.h DeviceFamily), itself calibrated on component
// micro-benchmarks: GEMM efficiency per operand format, attention curves per
// kernel, pass, causal mask, head dimension and sequence length, the
// streaming-kernel bandwidth fraction, and the power model.
#pragma once

#include <array>

#include "lostflops/calibration.h"
#include "lostflops/spec.h"

namespace lostflops {

// What the attention kernel sees and which stack runs it: the kernel is the
// family's choice for the framework (DeviceFamily::attention_kernel), its
// efficiency read at this shape. seq = keys each query block attends over in
// one kernel call (the sequence, or its context-parallel chunk).
struct DeviceUse {
    Framework framework = Framework::megatron_core;
    double seq = 4096;
    int head_dim = 128;
    bool causal = true;
    GemmDtype fp8 = GemmDtype::fp8_tensor;  // the GEMM format of precision fp8
    // A Hugging Face model in eager PyTorch in 16-bit (framework hf, not
    // compiled: bf16 autocast over fp32 weights, or FSDP2's bf16 parameters):
    // its kernels get the calibration's hf_kernel_gap_us and eager class rates.
    bool eager_hf = false;
    // Attention over the whole square with an explicit boolean mask (hf_attention.h
    // masked_square_attention): the unmasked curves (causal false) at the
    // calibration's hf_masked_attention_{fwd,bwd}_fraction of their rate.
    bool masked_square = false;
    // A transformers model under torch.compile (framework hf), CUDA graphs
    // (training.cuda_graphs) or not: Inductor's kernels and cuBLAS's, queued
    // from its wrapper or replayed, with the GPU's gap between them
    // (hf_kernel_gap_us) in place of kernel_overhead_us: 1.4-1.8 us on the
    // compiled traces of data/measured/h200-steps.
    bool compiled_hf = false;
};
// The use of a job: its framework, sequence over context parallelism, head
// dimension, the causal mask (decoder LLMs) and fp8 format.
DeviceUse device_use(const Job& job);

struct DeviceModel {
    double peak_flops = 0;       // dense, of the training precision (GEMMs)
    double attention_peak_flops = 0;  // attention runs in 16-bit even in fp8 training
    double hbm_Bps = 0;
    int sms = 1;
    double bytes_per_element = 2;  // operands of GEMMs (bf16/fp16; fp8: 1; fp32: 4)
    double out_bytes_per_element = 2;  // GEMM outputs (fp32 training: 4, else 16-bit)
    double gemm_max = 0.8;         // the family's large-GEMM efficiency of the format, with power
    double attention_fwd = 0.35;   // of attention_peak_flops, at the use's shape, with power
    double attention_bwd = 0.3;
    // A Hugging Face job's SDPA over the whole square with an explicit
    // boolean mask (LayerWork::attention_masked_flops_fwd): the unmasked
    // curves (causal false) at the calibration's
    // hf_masked_attention_{fwd,bwd}_fraction, with power; under torch.compile
    // the rates above already are these. 0 outside framework hf.
    double attention_masked_fwd = 0;
    double attention_masked_bwd = 0;
    double memory_bound = 0.7;
    double gemm_k_half = 64;       // in k, for this GPU and precision (gemm_k_half() above)
    double kernel_overhead_s = 4e-6;
    // The eager stack's slower elementwise paths (DeviceUse::eager_hf;
    // 0 elsewhere: their bytes are priced at memory_bound like the rest):
    // bf16-to-fp32 copies, fp32 broadcasts, rotary's mixed and strided ones.
    double upcast_Bps = 0, broadcast_Bps = 0, strided_Bps = 0;
    double power_factor = 1;       // power model x sustained_compute (1 = the components' rate)
    AttentionImpl attention_kernel = AttentionImpl::fa2;
    // fp32 GEMMs on the CUDA cores (TF32 off): the catalog's fp32 peak times
    // calibration fp32_gemm_efficiency; 0 when the GPU has no fp32 figure.
    double fp32_gemm_flops = 0;
    // Systolic matrix units (TPU MXUs): the array's side, 0 on tile-and-wave
    // GPUs. A GEMM's rows are padded to kSystolicRows, its contracting and
    // output dimensions to mxu_dim; no tile waves, no short-k loss.
    int mxu_dim = 0;
};

// Throws InputError when no family of `cal` lists gpu.arch, or the family has
// no measurement of the GEMM format the precision needs.
DeviceModel make_device_model(const Gpu& gpu, Precision p, const Calibration& cal, const DeviceUse& use = {});

// `d` (a model of `gpu` under `cal`) pricing 16-bit GEMMs instead: the bf16
// dense peak, the family's bf16 gemm_max times d's power factor, the bf16
// gemm_k_half and 2-byte operands; attention, memory and overheads kept. The
// GEMMs fp8 training leaves in bf16 (the output layer: stage_time.cpp).
// Throws InputError like make_device_model when the family has no bf16
// measurement.
DeviceModel bf16_gemm_model(const DeviceModel& d, const Gpu& gpu, const Calibration& cal);

// Sustained-compute factor of a board below its family's reference power per
// dense TFLOP/s (DeviceFamily power model); 1 at or above it.
double power_factor(const Gpu& gpu, const DeviceFamily& family);

// Efficiency (fraction of the bf16 dense peak, before the power factor) of
// `kernel` at one shape from `family`'s curves: the nearest measured head
// dimension, log-linear in seq between measured lengths and flat outside;
// a causal curve not measured is the non-causal one times the family's
// causal/non-causal forward ratio, a backward curve not measured is the
// forward one times the family's backward/forward ratio of the kernels
// measured both ways. 0 when the family has no curve of the kernel.
double attention_efficiency(const DeviceFamily& family, AttentionImpl kernel, bool backward, bool causal,
                            int head_dim, double seq);

// The forward and backward efficiency (with d's power factor) of d's
// attention kernel at another shape than d's own `use` (the ring's
// off-diagonal blocks, cost/cp_attention.h), through make_device_model's
// memoised lookup.
std::array<double, 2> attention_efficiency_at(const Gpu& gpu, const Calibration& cal, const DeviceModel& d,
                                              const DeviceUse& use);

// The k at which a GEMM's main loop runs at half its rate on this GPU and
// precision: a tile's prologue/epilogue takes a fixed time, so in k units it
// grows with the SM's speed. `k_half_per_tflops_sm` (calibration
// gemm_k_half) is the value for an SM of 1 dense TFLOP/s; A100 bf16 SMs run
// 2.9, H100 7.5 (fp8 15), B200 15.2 (fp8 30.4).
double gemm_k_half(double k_half_per_tflops_sm, double peak_flops, int sms);

// One GEMM kernel C[m,n] = A[m,k] B[k,n]; without the launch overhead.
// Systolic units (d.mxu_dim > 0): FLOPs over peak x gemm_max x the padded
// fraction of m, n and k, or the HBM roofline when that is longer.
double gemm_time_s(const DeviceModel& d, double m, double n, double k);

// Fraction of the SMs' tile slots a GEMM fills (tile and wave quantisation),
// with the tile shape cuBLAS/CUTLASS would pick; on systolic units the
// fraction of the padded m x n the real one fills; in (0, 1].
double gemm_tile_efficiency(const DeviceModel& d, double m, double n);

// Flash attention over `flops` of score+value work (already halved for the
// causal mask when the kernel skips masked blocks). Backward does 2.5x the
// forward FLOPs (FlashAttention-2: five matmuls against two). `masked`, of
// `flops`, runs at the masked rates (DeviceModel::attention_masked_fwd).
double flash_attention_fwd_s(const DeviceModel& d, double flops, double masked = 0);
double flash_attention_bwd_s(const DeviceModel& d, double flops, double masked = 0);

// Fraction of x padded up to a multiple of `unit` that x fills; 1 for x <= 0.
double padded_fraction(double x, double unit);

// Memory-bound kernels moving `bytes` in total (launch overhead apart).
double memory_time_s(const DeviceModel& d, double bytes);
// The time the eager stack's slower elementwise paths add to memory_time_s
// of their bytes (already counted there): each class's bytes at its own rate
// less the same bytes at memory_bound; 0 for a class without a rate.
double eager_class_extra_s(const DeviceModel& d, double upcast_bytes, double broadcast_bytes, double strided_bytes);

}  // namespace lostflops
