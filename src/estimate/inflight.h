// Activations alive at the peak of Megatron-LM's pipeline schedules: how many
// forward chunk passes a rank has run before its first backward. Internal.
#pragma once

#include <cstdint>

#include "lostflops/spec.h"

namespace lostflops {

struct InFlight {
    int64_t warmup = 0;       // forward chunk passes before the first backward
    int64_t alive = 0;        // chunk passes whose activations are alive at the peak
    double stage_units = 0;   // the same in micro-batches of the rank's whole stage (layer-weighted)
    double first_chunk = 0;   // of them, passes of chunk 0 (the embedding's, on rank 0)
};

// Rank `rank` of job's pipeline (1F1B, or interleaved 1F1B when vpp > 1).
InFlight inflight_passes(const Job& job, int rank);

}  // namespace lostflops
