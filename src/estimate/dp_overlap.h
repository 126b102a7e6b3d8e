// How much of a pipeline rank's data-parallel traffic (ZeRO 0-2: the gradient
// all-reduce or reduce-scatter, the parameter all-gather) hides behind its
// compute, by the order in which the pipeline schedule finishes each model
// chunk. Seconds. Internal (estimate/estimate.cpp dp_exposed_s).
#pragma once

#include "lostflops/spec.h"

namespace lostflops {

// Where the traffic of one step can run (cost of one micro-batch's pass of
// one model chunk on the rank's first pipeline stage).
struct DpWindow {
    int chunks = 1;     // model chunks the traffic is cut into, one per chunk (vpp under
                        // Megatron-Core's interleaved schedule, else 1: the whole stage at once)
    int group = 1;      // micro-batches per chunk between two chunks' last passes
    double pass_s = 0;  // one chunk's pass over one micro-batch (backward or forward)
};

// The window of a plan: the whole rank's pass of one micro-batch (the last
// backward, the first forward; bucketed collectives overlap it layer by
// layer) or, under Megatron-Core's interleaved 1F1B with vpp > 1, each chunk
// on its own (see the .cpp). rank_pass_s: one micro-batch's pass over all the
// rank's chunks; micro_batches: per step.
DpWindow dp_window(const Job& job, double rank_pass_s, double micro_batches);

struct DpExposure {
    double exposed_s = 0;
    double hidden_s = 0;
};

// comm_s of traffic, cut into w.chunks equal pieces: piece k can start when
// chunk k's last pass does (k w.group passes after the first), the pieces run
// one after another, and each hides under its own chunk's pass as the buckets
// go (overlap = the share of a window that hides traffic, calibration
// dp_overlap):
//   exposed = max(c - min(c, a p),  C - min(C, a ((v - 1) g + 1) p)),
//   C = comm_s, v = chunks, c = C / v, g = group, p = pass_s, a = overlap.
// v = 1: C - min(C, a p), the whole stage's traffic behind one pass.
DpExposure dp_exposure(double comm_s, const DpWindow& w, double overlap);

}  // namespace lostflops
