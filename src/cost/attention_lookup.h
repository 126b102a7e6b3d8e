// Attention kernels' efficiency read from a device family's measured curves
// (internal to src/cost): the lookup make_device_model (device_time.cpp)
// prices attention with; attention_efficiency and attention_efficiency_at
// of device_time.h read the same curves.
#pragma once

#include "cost/device_time.h"

namespace lostflops {

struct AttentionEfficiency {
    double fwd = 0, bwd = 0;
};

// The curves read at one job's shape. Every plan of a search reads the same
// few shapes: a small per-thread memo of this pure function of the curves
// (named by AttentionCurves::id, which changes with the points), the kernel
// and the shape; same values, no allocation.
AttentionEfficiency attention_at(const DeviceFamily& f, AttentionImpl kernel, const DeviceUse& use);

}  // namespace lostflops
