// What the report's charts show, computed from the model (no drawing here):
// the timeline of one step from the discrete-event simulation, the roofline
// points of the operator classes, and the memory of every pipeline rank.
// Internal to src/explain.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/explain.h"
#include "lostflops/search.h"
#include "lostflops/spec.h"

namespace lostflops {

enum class SegmentKind { forward, backward, recompute, comm, host_wait, dp_comm, optimizer };
const char* to_string(SegmentKind k);

struct Segment {
    int rank = 0;
    SegmentKind kind = SegmentKind::forward;
    double start_s = 0, end_s = 0;
    int micro_batch = -1, chunk = -1;  // -1 for dp_comm and optimizer
};

// One step: the pipeline phase as pipeline_timeline simulates it, every pass
// split into its causes (a backward: recompute, then the backward's compute;
// each pass's exposed TP/CP/EP traffic and host wait drawn after its compute,
// where in the run they interleave per layer), then the exposed data-parallel
// traffic and the optimizer step of estimate's breakdown on every rank.
struct StepTimeline {
    int stages = 1, chunks = 1;
    long long micro_batches = 1;
    double pipeline_s = 0;  // simulated makespan of the pipeline phase, with p2p
    double bubble_s = 0;    // pipeline_s - busiest rank's pass time (PipelineResult::bubble_s)
    double busy_max_s = 0;
    double step_s = 0;      // pipeline_s + dp_comm_s + optimizer_s
    std::vector<Segment> segments;
};
StepTimeline step_timeline(const Job& job, const Calibration& cal, const Estimate& e);

struct RooflinePoint {
    std::string name;            // "GEMMs", "attention", "memory-bound operators"
    double flop_per_byte = 0;    // arithmetic intensity
    double achieved_flop_per_s = 0;   // FLOP/s the model gives the class
    double time_s = 0;           // per layer and micro-batch, forward + backward
};
struct Roofline {
    double peak_flops = 0;  // FLOP/s, dense, training precision
    double hbm_Bps = 0;     // datasheet bandwidth
    double ridge_flop_per_byte() const { return peak_flops / hbm_Bps; }
    std::vector<RooflinePoint> points;
};
Roofline roofline(const Job& job, const Calibration& cal);

// Best plan by tokens/s per GPU at each GPU count (explain/scaling.cpp).
struct ScalingPoint {
    int num_gpus = 0;
    bool fits = false;  // some plan fits at this count
    PlanScore best;
};
// progress (may be empty): the share of the searches done, (count i + share
// of search i) / counts.
std::vector<ScalingPoint> scaling_curve(const JobSource& src, const Calibration& cal, const std::vector<int>& gpus,
                                        const std::function<void(double)>& progress = {});
std::string plan_words(const ParallelPlan& p, int64_t micro_batch);

// stage_memory of every pipeline rank, rank 0 first.
std::vector<Memory> memory_per_rank(const Job& job, const Calibration& cal);

// The predicted allocated memory of each rank over the step, from the
// step's timeline and the rank's ledger (estimate/memory.h): its state and
// the gradients alive from the start; each forward chunk pass's activations
// growing through the pass and shrinking through its first backward-side
// segment; on the last stage the loss's buffers from the last chunk's
// forward end to its backward's start; the last backward's gradients; the
// optimizer's temporary in the optimizer step. Points (time, bytes) in time
// order, joined by straight lines. The peak moment's bytes are estimate's.
struct MemoryCurve {
    int rank = 0;
    std::vector<std::pair<double, double>> points;
    double peak_bytes = 0;  // the curve's largest value
};
std::vector<MemoryCurve> memory_over_step(const Job& job, const Calibration& cal, const StepTimeline& tl);
// A measured allocator timeline to draw over the predicted ones: a trace's
// [memory] events (trace::DeviceMemory) within the CPU ProfilerStep that holds
// the allocated peak (the whole timeline when no step holds it), as (seconds
// from that step's start, bytes) in time order; empty: none.
struct MeasuredMemory {
    std::vector<std::pair<double, double>> allocated, reserved;
    double peak_allocated_bytes = 0, peak_reserved_bytes = 0;  // the trace's, over all its steps
    std::string source;     // the trace (RankReport::source)
    int rank = 0;
    int64_t step = -1;      // N of the ProfilerStep#N drawn; -1: the whole timeline
    double step_s = 0;      // that step's CPU duration (0: the whole timeline)
    bool empty() const { return allocated.empty(); }
};
// Of the ranks that have [memory] events, the one with the highest allocated
// peak (as `trace --job`'s rows); empty when none has them.
MeasuredMemory measured_memory(const std::vector<trace::RankReport>& ranks);

}  // namespace lostflops
