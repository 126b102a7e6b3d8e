// Activations alive at the peak of Megatron-LM's pipeline schedules (and
// MaxText's scan on a TPU): how many
// forward chunk passes a rank has run before its first backward. Internal.
#pragma once

#include <algorithm>
#include <cstdint>

#include "lostflops/spec.h"

namespace lostflops {

struct InFlight {
    int64_t warmup = 0;       // forward chunk passes before the first backward
    int64_t alive = 0;        // chunk passes whose activations are alive at the peak
    double stage_units = 0;   // the same in micro-batches of the rank's whole stage (layer-weighted)
    double first_chunk = 0;   // of them, passes of the chunk holding the embedding
    // dualpipe / dualpipev: the alive passes of chunk 0 and chunk 1 (-1: the
    // 1F1B family's rule below).
    int64_t dual_chunk[2] = {-1, -1};
    // MaxText's scan (training.xla): the alive passes of every chunk, all
    // the same (-1: the rules above).
    int64_t every_chunk = -1;
};

// A TPU job with a pipeline runs MaxText's pipeline scan: every micro-batch's
// forward through every chunk before the first backward (inflight.cpp's header).
inline bool maxtext_scan(const Job& job) { return job.training.xla && job.plan.pp > 1; }

// Rank `rank` of job's pipeline under its schedule (lostflops/pipeline_schedules.h).
InFlight inflight_passes(const Job& job, int rank);

// Of the alive passes, those of chunk `chunk` (forward pass k runs chunk
// (k mod pp*vpp) / pp): pp per full group of pp*vpp passes plus the rest's share.
inline double chunk_alive(const InFlight& f, int chunk, int pp, int vpp) {
    if (f.dual_chunk[0] >= 0) return static_cast<double>(f.dual_chunk[chunk]);
    if (f.every_chunk >= 0) return static_cast<double>(f.every_chunk);
    const int64_t group = static_cast<int64_t>(pp) * vpp;
    const int64_t full = f.alive / group, rest = f.alive % group;
    const int64_t extra = std::clamp<int64_t>(rest - static_cast<int64_t>(chunk) * pp, 0, pp);
    return static_cast<double>(full * pp + extra);
}

}  // namespace lostflops
