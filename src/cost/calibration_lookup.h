// The calibration profile as the cost model reads it (lostflops/calibration.h):
// the names of its enums, a device family by architecture, a family's attention
// curves indexed once. The profile's reader and writer, which build these
// values, are calibrate/'s (calibration_io.cpp, calibration_write.cpp).
#pragma once

#include <vector>

#include "lostflops/calibration.h"

namespace lostflops::calib {

// Sorts by kernel, pass, causal, head_dim, seq (the lookup's order).
void sort_attention_points(std::vector<AttentionPoint>& v);

}  // namespace lostflops::calib
