// The keys of a calibration profile and the range each value must lie in,
// shared by the reader (calibration_io.cpp) and the writer
// (calibration_write.cpp) so that the two can never disagree.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/spec.h"

namespace lostflops::calib {

enum class Range {
    fraction,           // [0.01, 1]: an efficiency; below 1 % no kernel or link
                        // class runs on any GPU of the catalog (0 would mean
                        // "never finishes")
    closed_fraction,    // [0, 1]: a share that may be nothing
    non_negative,       // [0, max]: a time, a size, a count, bounded by `max`
};
inline constexpr double kMinEfficiency = 0.01;

// Plausible range of a measured nccl curve point, shared by the profile
// reader and the nccl-tests reader so that `calibrate nccl` never writes a
// profile `--calibration` refuses: nccl-tests sweeps reach a few GB per
// message (-e 16G), so 1e12 bytes is 60x beyond; 1e5 GB/s is 100x NVLink 5's
// 900 GB/s per direction; one collective of 1e9 us (17 minutes) is no
// measurement.
inline constexpr double kMaxCurveBytes = 1e12;
inline constexpr double kMaxCurveBusBwGBps = 1e5;
inline constexpr double kMaxCurveTimeUs = 1e9;

struct ScalarField {
    const char* key;
    double Calibration::*member;
    Range range;
    double max = 1;  // upper bound of a non_negative field (its plausible range)
};

// Per-family scalar factors (`devices.NAME.KEY`).
struct FamilyField {
    const char* key;
    double DeviceFamily::*member;
    Range range;
    double max = 1;
};
inline constexpr std::array<FamilyField, 3> kFamilyFields{{
    {"memory_bound", &DeviceFamily::memory_bound, Range::fraction},
    // W per dense bf16 TFLOP/s: 0.1 (10x any catalog GPU's headroom) to 10.
    {"reference_w_per_tflop", &DeviceFamily::reference_w_per_tflop, Range::non_negative, 10},
    // Exponent of the power law; 0 = no power model, 3 = cube (dynamic power
    // ~ f V^2 with V ~ f; the measured exponents are near 1).
    {"power_exponent", &DeviceFamily::power_exponent, Range::non_negative, 3},
}};

inline constexpr std::array<GemmDtype, kGemmDtypeCount> kGemmDtypes{
    GemmDtype::bf16, GemmDtype::fp8_tensor, GemmDtype::fp8_row, GemmDtype::fp8_block, GemmDtype::mxfp8};
inline constexpr std::array<AttentionImpl, kAttentionImplCount> kAttentionImpls{
    AttentionImpl::fa2, AttentionImpl::fa3, AttentionImpl::cudnn};
inline constexpr std::array<Framework, kFrameworkCount> kFrameworks{
    Framework::megatron_lm, Framework::megatron_core, Framework::fsdp, Framework::deepspeed, Framework::hf};
// The YAML key of a framework in `attention_kernel:` (to_string(Framework)
// with '-' as '_', so that keys stay identifiers).
inline const char* framework_key(Framework f) {
    switch (f) {
        case Framework::megatron_lm: return "megatron_lm";
        case Framework::megatron_core: return "megatron_core";
        case Framework::fsdp: return "fsdp";
        case Framework::deepspeed: return "deepspeed";
        case Framework::hf: return "hf";
    }
    return "?";
}

// Upper bounds of the non_negative fields: gemm_k_half up to 65,536 (k per
// TFLOP/s of an SM; the catalog's SMs run 1-31 TFLOP/s and its largest
// hidden sizes are ~30,000); per-kernel,
// per-collective and per-operator host costs up to 10 ms (a kernel launch is
// ~5 us, NVIDIA CUDA C++ Best Practices Guide; 10 ms is 2,000 launches);
// a backward call's engine start and a synchronisation's idle up to 100 ms
// (measured 1.3 ms and 0.12 ms, docs/host-time.md);
// optimizer state up to 64 bytes per parameter (Adam with fp32 master, two
// moments and gradients is 16, ZeRO paper Rajbhandari et al. 2020, sec. 3.1);
// reserved memory up to 1e12 bytes (more than any GPU of the catalog has).
inline constexpr std::array<ScalarField, 35> kScalarFields{{
    {"gemm_k_half", &Calibration::gemm_k_half, Range::non_negative, 65536},
    {"sustained_compute", &Calibration::sustained_compute, Range::fraction},
    {"kernel_overhead_us", &Calibration::kernel_overhead_us, Range::non_negative, 10000},
    {"collective_launch_us", &Calibration::collective_launch_us, Range::non_negative, 10000},
    {"host_op_us", &Calibration::host_op_us, Range::non_negative, 10000},
    {"host_bwd_op_us", &Calibration::host_bwd_op_us, Range::non_negative, 10000},
    {"hf_host_op_us", &Calibration::hf_host_op_us, Range::non_negative, 10000},
    {"hf_host_bwd_op_us", &Calibration::hf_host_bwd_op_us, Range::non_negative, 10000},
    {"hf_optimizer_tensor_us", &Calibration::hf_optimizer_tensor_us, Range::non_negative, 10000},
    {"hf_backward_call_us", &Calibration::hf_backward_call_us, Range::non_negative, 100000},
    {"hf_zero_grad_tensor_us", &Calibration::hf_zero_grad_tensor_us, Range::non_negative, 10000},
    {"hf_sync_us", &Calibration::hf_sync_us, Range::non_negative, 100000},
    {"hf_expert_loop_us", &Calibration::hf_expert_loop_us, Range::non_negative, 10000},
    {"hf_kernel_gap_us", &Calibration::hf_kernel_gap_us, Range::non_negative, 10000},
    {"hf_upcast_hbm_fraction", &Calibration::hf_upcast_hbm_fraction, Range::fraction},
    {"hf_broadcast_hbm_fraction", &Calibration::hf_broadcast_hbm_fraction, Range::fraction},
    {"hf_strided_hbm_fraction", &Calibration::hf_strided_hbm_fraction, Range::fraction},
    {"hf_power_bound_gemm_fraction", &Calibration::hf_power_bound_gemm_fraction, Range::fraction},
    {"hf_masked_attention_fwd_fraction", &Calibration::hf_masked_attention_fwd_fraction, Range::fraction},
    {"hf_masked_attention_bwd_fraction", &Calibration::hf_masked_attention_bwd_fraction, Range::fraction},
    {"fp32_gemm_efficiency", &Calibration::fp32_gemm_efficiency, Range::fraction},
    {"compiled_launch_us", &Calibration::compiled_launch_us, Range::non_negative, 10000},
    {"cuda_graph_node_us", &Calibration::cuda_graph_node_us, Range::non_negative, 10000},
    {"profiler_event_us", &Calibration::profiler_event_us, Range::non_negative, 10000},
    {"bus_eff_intra", &Calibration::bus_eff_intra, Range::fraction},
    {"bus_eff_inter", &Calibration::bus_eff_inter, Range::fraction},
    {"p2p_eff", &Calibration::p2p_eff, Range::fraction},
    {"dp_overlap", &Calibration::dp_overlap, Range::closed_fraction},
    {"tp_overlap", &Calibration::tp_overlap, Range::closed_fraction},
    {"overlap_slowdown", &Calibration::overlap_slowdown, Range::closed_fraction},
    {"optimizer_bytes_per_param", &Calibration::optimizer_bytes_per_param, Range::non_negative, 64},
    {"memory_usable_fraction", &Calibration::memory_usable_fraction, Range::fraction},
    {"memory_reserved_bytes", &Calibration::memory_reserved_bytes, Range::non_negative, 1e12},
    {"cuda_context_bytes", &Calibration::cuda_context_bytes, Range::non_negative, 1e11},
    {"workspace_bytes", &Calibration::workspace_bytes, Range::non_negative, 1e11},
}};

// Tripwire: a field added to Calibration or DeviceFactors without a key here
// would be silently neither read nor written.
static_assert(sizeof(DeviceFamily) == sizeof(std::string) + sizeof(std::vector<std::string>) +
                                          sizeof(std::array<double, kGemmDtypeCount>) +
                                          kFamilyFields.size() * sizeof(double) +
                                          // the array rounded up to AttentionCurves' alignment (padding)
                                          (sizeof(std::array<AttentionImpl, kFrameworkCount>) + alignof(AttentionCurves) - 1) /
                                              alignof(AttentionCurves) * alignof(AttentionCurves) +
                                          sizeof(AttentionCurves),
              "DeviceFamily has a field without a key in calibration_fields.h");
static_assert(sizeof(Calibration) == sizeof(std::string) + sizeof(std::vector<DeviceFamily>) +
                                         kScalarFields.size() * sizeof(double) +
                                         sizeof(std::vector<BusBwCurve>) + sizeof(std::vector<std::string>),
              "Calibration has a field without a key in calibration_fields.h");

}  // namespace lostflops::calib
