// The roofline of one accelerator (Williams, Waterman & Patterson 2009; the
// scaling book's chapter 1): time >= max(FLOPs / peak, bytes / HBM
// bandwidth); the ridge point, peak over bandwidth, is the arithmetic
// intensity (FLOP per byte) above which work is compute-bound. Datasheet
// figures, no efficiency: the bounds the calibrated device model
// (device_time.h) sits above.
#pragma once

#include "lostflops/spec.h"

namespace lostflops {

// Dense peak FLOP/s of `p` over HBM bytes/s. Precondition: hbm_GBps > 0.
double ridge_flop_per_byte(const Gpu& gpu, Precision p);
// max(flops / peak, bytes / HBM bandwidth), seconds; infinity when the GPU
// has no peak of `p`.
double roofline_time_s(const Gpu& gpu, Precision p, double flops, double bytes);

}  // namespace lostflops
