// Reader of the `devices:` section of a calibration profile and the bridge
// from the attention component table to a family's curves. Internal to the
// calibration reader (calibration_io.cpp) and the component fit.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "calibrate/component_tables.h"
#include "cost/calibration_lookup.h"
#include "lostflops/calibration.h"

namespace lostflops::calib {

// Overlays `node` (the `devices:` mapping) onto c.devices: a known family
// gets the keys given, a new one must give archs, gemm_max,
// attention_kernel and memory_bound. Throws InputError naming
// devices.FAMILY.KEY.
void read_devices(const YAML::Node& node, Calibration& c, const std::string& file);

// The points of `rows` measured on GPUs of `family` (by catalog arch), as
// efficiencies of those GPUs' bf16 dense peak, sorted. Throws InputError for a
// row whose GPU is not in the catalog.
std::vector<AttentionPoint> attention_points_from_table(const std::vector<AttentionRow>& rows,
                                                        const DeviceFamily& family, const std::string& source);

}  // namespace lostflops::calib
