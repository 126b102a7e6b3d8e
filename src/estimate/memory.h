// Memory per GPU of one pipeline rank, by kind. Internal to estimate.
#pragma once

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "workload/layer_work.h"

namespace lostflops {

struct StageParams {
    double layers = 0;      // transformer layers on this rank (all chunks)
    double params = 0;      // parameters held by this rank (before ZeRO sharding)
    bool first = false;     // holds the embedding
    bool last = false;      // holds the output layer and loss
};

StageParams stage_params(const Job& job, const LayerWork& lw, const HeadWork& hw, int rank);

Memory stage_memory(const Job& job, const Calibration& cal, const LayerWork& lw,
                    const HeadWork& hw, int rank);

// Bytes per parameter of gradients as reduced (fp32 main grads or 16-bit).
double grad_bytes_per_param(const ParallelPlan& p);

}  // namespace lostflops
