// Every (pipeline rank, model chunk) pass of one micro-batch of a job, by
// cause, by estimate's pass rule (estimate_parts.h stage_pass). For the
// waterfall's split of compute time and for the timeline; internal to
// src/explain.
#pragma once

#include <cstdint>
#include <vector>

#include "estimate/estimate_parts.h"
#include "lostflops/pipeline.h"

namespace lostflops {

struct JobPasses {
    PassSetup setup;
    PipelineInput input;          // pass totals (fwd_s, bwd_s) and p2p_s, as the simulation takes them
    std::vector<PassTime> fwd, bwd;  // [rank * vpp + chunk], one micro-batch
    std::vector<int> layers;      // transformer layers of each pass
    int worst_rank = 0;           // the rank whose causes the breakdown's steady state charges
    int64_t micro_batches = 0;    // per data-parallel rank per step
};

JobPasses job_passes(const Job& job, const Calibration& cal);

// Attention core (scores + values) time of one layer, forward + backward, one
// micro-batch: the part of LayerTime::compute_s that is not GEMMs with weights.
double attention_layer_s(const PassSetup& s);

}  // namespace lostflops
