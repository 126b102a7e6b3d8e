// The estimate's step as a Chrome trace (`estimate --timeline-out FILE`), so
// that a prediction and a profiler trace open side by side in Perfetto or
// chrome://tracing, and `lostflops trace FILE` reads it back.
//
// Format (Trace Event Format, "JSON Object Format"): a top-level object with
// "traceEvents" (complete events, ph "X", with "ts" and "dur" in
// microseconds from the step's start, "pid" and "tid"; metadata events, ph
// "M", naming each process and thread), "ranksByPid": true (lostflops' trace
// reader splits the file into one rank per pid, trace.h split_ranks),
// "distributedInfo" with the job's world size, and "otherData" (the job, the
// estimate's step time). One process per pipeline rank; its pid is the global
// rank of the stage's first GPU (Megatron's layout: TP fastest, then CP, DP,
// PP), which stands for every GPU of the stage. Per rank: one
// "ProfilerStep#1" CPU annotation over the whole step, and GPU kernels named
// so that the trace reader's classification (trace_classify.cpp) puts them
// in the estimate's walls:
//   lostflops_gemm_{forward,backward,recompute}: GEMMs and attention (compute wall);
//   lostflops_elementwise_{forward,backward}: memory-bound operators;
//   ncclDevKernel_* with "Collective name" and "Process Group Description"
//     (tensor_parallel, context_parallel, expert_parallel, pipeline_parallel,
//     data_parallel): the exposed communication of each group;
//   lostflops_optimizer_step: the optimizer step;
// and gaps for the kernel overhead, host wait and pipeline bubble.
// Units: seconds in, microseconds in the file.
#pragma once

#include <string>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/spec.h"

namespace lostflops {

// The step of `job` (whose estimate is `e`) as Chrome trace JSON text. Throws
// InputError (naming the job) when the pipeline has more passes than
// kMaxTimelinePasses (pipeline_timeline.h).
std::string timeline_trace_json(const Job& job, const Calibration& cal, const Estimate& e);

}  // namespace lostflops
