// The pipeline phase of one step as a timeline: when every forward and
// backward pass of every pipeline rank starts and ends, under the same rules
// as pipeline_simulate (lostflops/pipeline.h): the schedule's per-rank order,
// a forward after the previous virtual stage's forward + p2p, a backward after
// the next virtual stage's backward + p2p and its own forward. For pictures
// and for tests of the bubble; the estimate itself uses pipeline.h.
#pragma once

#include <vector>

#include "lostflops/pipeline.h"

namespace lostflops {

struct TimelinePass {
    int rank = 0;
    PipelineOp op;       // forward/backward, micro-batch, chunk
    double start_s = 0;  // from the first forward's start
    double end_s = 0;
};

struct PipelineTimeline {
    std::vector<TimelinePass> passes;  // every pass of every rank, rank-major, in execution order
    PipelineResult result;             // equal to pipeline_simulate(in)
};

// Throws std::invalid_argument on the preconditions of pipeline_simulate and
// when stages * chunks * micro_batches > 1e6 (a picture has no use for more).
PipelineTimeline pipeline_timeline(const PipelineInput& in);

}  // namespace lostflops
