// The *fitted* factors of a calibration profile and the physically plausible
// range each may take: the one table `lostflops calibrate runs` searches and
// data/calibration/default.yaml documents ("fitted (range lo-hi)"). Every
// other factor of the profile is taken from a measurement and never fitted.
// Key paths are those of calibration_fields.h ("section.key" for the
// per-architecture factors); a test holds the two tables together and checks
// that every default lies inside its range.
#pragma once

#include <array>

#include "lostflops/calibration.h"

namespace lostflops::calib {

struct FittedField {
    const char* key;                       // "ampere.gemm_max", "gemm_k_half", ...
    DeviceFactors Calibration::*section;   // per-architecture factor: its section, else nullptr
    double DeviceFactors::*device_member;  // with section
    double Calibration::*member;           // without section
    double lo;                             // inclusive range searched
    double hi;
};

inline constexpr std::array<FittedField, 8> kFittedFields{{
    // cuBLAS reaches ~0.75-0.85 of dense peak on large bf16/fp16 shapes.
    {"ampere.gemm_max", &Calibration::ampere, &DeviceFactors::gemm_max, nullptr, 0.72, 0.85},
    {"hopper.gemm_max", &Calibration::hopper, &DeviceFactors::gemm_max, nullptr, 0.72, 0.85},
    {"gemm_k_half", nullptr, nullptr, &Calibration::gemm_k_half, 64, 256},
    // A launch alone is ~3-5 us on CUDA 12; ramp-up and tail add to it.
    {"kernel_overhead_us", nullptr, nullptr, &Calibration::kernel_overhead_us, 4, 16},
    {"overlap_slowdown", nullptr, nullptr, &Calibration::overlap_slowdown, 0.1, 0.3},
    // NDR/HDR InfiniBand all-reduce busbw ~0.85-0.95 of line rate.
    {"bus_eff_inter", nullptr, nullptr, &Calibration::bus_eff_inter, 0.85, 0.95},
    // PyTorch eager: ~10-20 us of CPU per forward operator; autograd C++ engine less.
    {"host_op_us", nullptr, nullptr, &Calibration::host_op_us, 5, 40},
    {"host_bwd_op_us", nullptr, nullptr, &Calibration::host_bwd_op_us, 3, 20},
}};

inline double& fitted_value(Calibration& c, const FittedField& f) {
    return f.section ? (c.*f.section).*f.device_member : c.*f.member;
}
inline double fitted_value(const Calibration& c, const FittedField& f) {
    return f.section ? (c.*f.section).*f.device_member : c.*f.member;
}

}  // namespace lostflops::calib
