// The *fitted* factors of a calibration profile and the physically plausible
// range each may take: the one table `lostflops calibrate runs` searches and
// data/calibration/default.yaml documents ("fitted (range lo-hi)"). Every
// other factor of the profile is taken from a measurement and never fitted.
// Keys are those of calibration_fields.h; a test holds the two tables
// together and checks that every default lies inside its range.
#pragma once

#include <array>

#include "lostflops/calibration.h"

namespace lostflops::calib {

struct FittedField {
    const char* key;                       // "kernel_overhead_us", ...
    double Calibration::*member;
    double lo;                             // inclusive range searched
    double hi;
};

// Only system-level factors: every device-family factor (GEMM, attention,
// memory-bound, power) comes from component micro-benchmarks
// (calibrate_components.h) and is never fitted to runs; so do the host's
// costs per operator (host_op_us, host_bwd_op_us: default.yaml,
// docs/host-time.md).
inline constexpr std::array<FittedField, 4> kFittedFields{{
    // Sustained over micro-benchmarked compute: power and thermal limits over
    // hours, SMs shared with NCCL kernels, best-shape selection of the
    // benchmarks; 0.8-1.0.
    {"sustained_compute", &Calibration::sustained_compute, 0.8, 1.0},
    // A launch alone is ~3-5 us on CUDA 12; ramp-up and tail add to it.
    {"kernel_overhead_us", &Calibration::kernel_overhead_us, 4, 16},
    {"overlap_slowdown", &Calibration::overlap_slowdown, 0.1, 0.3},
    // NDR/HDR InfiniBand all-reduce busbw ~0.85-0.95 of line rate.
    {"bus_eff_inter", &Calibration::bus_eff_inter, 0.85, 0.95},
}};

inline double& fitted_value(Calibration& c, const FittedField& f) { return c.*f.member; }
inline double fitted_value(const Calibration& c, const FittedField& f) { return c.*f.member; }

}  // namespace lostflops::calib
