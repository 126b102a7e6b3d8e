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
    fraction,           // (0, 1]: an efficiency; 0 would mean "never finishes"
    closed_fraction,    // [0, 1]: a share that may be nothing
    non_negative,       // [0, inf): a time, a size, a count
};

struct DeviceField {
    const char* key;
    double DeviceFactors::*member;
    Range range;
};
struct ScalarField {
    const char* key;
    double Calibration::*member;
    Range range;
};

inline constexpr std::array<DeviceField, 4> kDeviceFields{{
    {"gemm_max", &DeviceFactors::gemm_max, Range::fraction},
    {"attention_fwd", &DeviceFactors::attention_fwd, Range::fraction},
    {"attention_bwd", &DeviceFactors::attention_bwd, Range::fraction},
    {"memory_bound", &DeviceFactors::memory_bound, Range::fraction},
}};

inline constexpr std::array<ScalarField, 14> kScalarFields{{
    {"gemm_k_half", &Calibration::gemm_k_half, Range::non_negative},
    {"kernel_overhead_us", &Calibration::kernel_overhead_us, Range::non_negative},
    {"collective_launch_us", &Calibration::collective_launch_us, Range::non_negative},
    {"host_op_us", &Calibration::host_op_us, Range::non_negative},
    {"host_bwd_op_us", &Calibration::host_bwd_op_us, Range::non_negative},
    {"bus_eff_intra", &Calibration::bus_eff_intra, Range::fraction},
    {"bus_eff_inter", &Calibration::bus_eff_inter, Range::fraction},
    {"p2p_eff", &Calibration::p2p_eff, Range::fraction},
    {"dp_overlap", &Calibration::dp_overlap, Range::closed_fraction},
    {"tp_overlap", &Calibration::tp_overlap, Range::closed_fraction},
    {"overlap_slowdown", &Calibration::overlap_slowdown, Range::closed_fraction},
    {"optimizer_bytes_per_param", &Calibration::optimizer_bytes_per_param, Range::non_negative},
    {"memory_usable_fraction", &Calibration::memory_usable_fraction, Range::fraction},
    {"memory_reserved_bytes", &Calibration::memory_reserved_bytes, Range::non_negative},
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
