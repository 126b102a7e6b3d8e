// The keys of a calibration profile and the range each value must lie in,
// shared by the reader (calibration_io.cpp) and the writer
// (calibration_write.cpp) so that the two can never disagree.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "lostflops/calibration.h"

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

struct DeviceField {
    const char* key;
    double DeviceFactors::*member;
    Range range;
};
struct ScalarField {
    const char* key;
    double Calibration::*member;
    Range range;
    double max = 1;  // upper bound of a non_negative field (its plausible range)
};

inline constexpr std::array<DeviceField, 4> kDeviceFields{{
    {"gemm_max", &DeviceFactors::gemm_max, Range::fraction},
    {"attention_fwd", &DeviceFactors::attention_fwd, Range::fraction},
    {"attention_bwd", &DeviceFactors::attention_bwd, Range::fraction},
    {"memory_bound", &DeviceFactors::memory_bound, Range::fraction},
}};

// Upper bounds of the non_negative fields: gemm_k_half up to 65,536 (a
// GEMM depth; the catalog's largest hidden sizes are ~30,000); per-kernel,
// per-collective and per-operator host costs up to 10 ms (a kernel launch is
// ~5 us, NVIDIA CUDA C++ Best Practices Guide; 10 ms is 2,000 launches);
// optimizer state up to 64 bytes per parameter (Adam with fp32 master, two
// moments and gradients is 16, ZeRO paper Rajbhandari et al. 2020, sec. 3.1);
// reserved memory up to 1e12 bytes (more than any GPU of the catalog has).
inline constexpr std::array<ScalarField, 14> kScalarFields{{
    {"gemm_k_half", &Calibration::gemm_k_half, Range::non_negative, 65536},
    {"kernel_overhead_us", &Calibration::kernel_overhead_us, Range::non_negative, 10000},
    {"collective_launch_us", &Calibration::collective_launch_us, Range::non_negative, 10000},
    {"host_op_us", &Calibration::host_op_us, Range::non_negative, 10000},
    {"host_bwd_op_us", &Calibration::host_bwd_op_us, Range::non_negative, 10000},
    {"bus_eff_intra", &Calibration::bus_eff_intra, Range::fraction},
    {"bus_eff_inter", &Calibration::bus_eff_inter, Range::fraction},
    {"p2p_eff", &Calibration::p2p_eff, Range::fraction},
    {"dp_overlap", &Calibration::dp_overlap, Range::closed_fraction},
    {"tp_overlap", &Calibration::tp_overlap, Range::closed_fraction},
    {"overlap_slowdown", &Calibration::overlap_slowdown, Range::closed_fraction},
    {"optimizer_bytes_per_param", &Calibration::optimizer_bytes_per_param, Range::non_negative, 64},
    {"memory_usable_fraction", &Calibration::memory_usable_fraction, Range::fraction},
    {"memory_reserved_bytes", &Calibration::memory_reserved_bytes, Range::non_negative, 1e12},
}};

struct DeviceSection {
    const char* key;
    DeviceFactors Calibration::*member;
};
inline constexpr std::array<DeviceSection, 2> kDeviceSections{{
    {"ampere", &Calibration::ampere},
    {"hopper", &Calibration::hopper},
}};

// Tripwire: a field added to Calibration or DeviceFactors without a key here
// would be silently neither read nor written.
static_assert(sizeof(DeviceFactors) == kDeviceFields.size() * sizeof(double),
              "DeviceFactors has a field without a key in calibration_fields.h");
static_assert(sizeof(Calibration) == sizeof(std::string) + kDeviceSections.size() * sizeof(DeviceFactors) +
                                         kScalarFields.size() * sizeof(double) +
                                         sizeof(std::vector<BusBwCurve>),
              "Calibration has a field without a key in calibration_fields.h");

}  // namespace lostflops::calib
