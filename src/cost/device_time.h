// Time of operators on one GPU: GEMMs (roofline with tile and wave
// quantisation), flash attention, and memory-bound kernels. Seconds.
#pragma once

#include "lostflops/calibration.h"
#include "lostflops/spec.h"

namespace lostflops {

struct DeviceModel {
    double peak_flops = 0;       // dense, of the training precision (GEMMs)
    double attention_peak_flops = 0;  // attention runs in 16-bit even in fp8 training
    double hbm_Bps = 0;
    int sms = 1;
    double bytes_per_element = 2;  // operands of GEMMs (bf16/fp16; fp8: 1)
    double gemm_max = 0.8;
    double attention_fwd = 0.7;
    double attention_bwd = 0.55;
    double memory_bound = 0.7;
    double gemm_k_half = 64;
    double kernel_overhead_s = 4e-6;
};

DeviceModel make_device_model(const Gpu& gpu, Precision p, const Calibration& cal);

// One GEMM kernel C[m,n] = A[m,k] B[k,n]; without the launch overhead.
double gemm_time_s(const DeviceModel& d, double m, double n, double k);

// Fraction of the SMs' tile slots a GEMM fills (tile and wave quantisation),
// with the tile shape cuBLAS/CUTLASS would pick; in (0, 1].
double gemm_tile_efficiency(const DeviceModel& d, double m, double n);

// Flash attention over `flops` of score+value work (already halved for the
// causal mask when the kernel skips masked blocks). Backward does 2.5x the
// forward FLOPs (FlashAttention-2: five matmuls against two).
double flash_attention_fwd_s(const DeviceModel& d, double flops);
double flash_attention_bwd_s(const DeviceModel& d, double flops);

// Memory-bound kernels moving `bytes` in total (launch overhead apart).
double memory_time_s(const DeviceModel& d, double bytes);

}  // namespace lostflops
