// Measured (trace) against predicted (estimate) for the job that was traced:
// measured MFU and a side-by-side of the step time by wall.
//
// Measured MFU = model FLOPs per step / (measured step time x GPUs x dense
// peak), PaLM's definition (Chowdhery et al. 2022, Appendix B) with the
// measured step time: the mean
// ProfilerStep duration (median over ranks), or the kernel span when the
// trace has no ProfilerStep annotations.
// Memory, where the traces have [memory] events: the highest allocated and
// reserved peaks over the ranks against the estimate's predicted peak.
// Walls: each rank's kernel span is split into matmul compute (GEMM and
// attention kernels), other compute (elementwise, norms, ...) plus memory
// copies not hidden under compute or communication, communication not hidden
// under compute, and idle; the fractions, averaged over the ranks of each
// pipeline stage (global rank / ranks_per_stage, Megatron's layout: TP, CP,
// DP within a stage), of the busiest stage (the least idle: the one the
// others wait for, whose causes the estimate's breakdown charges), times the
// measured step time, are set against the estimate's compute + recompute,
// memory-bound + optimizer, the exposed communication of all groups, and
// pipeline bubble + overhead. Without a pipeline (or ranks_per_stage 0): the
// average over all ranks.
#pragma once

#include <string>
#include <vector>

#include "lostflops/estimate.h"
#include "lostflops/trace.h"

namespace lostflops::trace {

struct WallRow {
    std::string wall;       // "compute", "memory-bound", "communication", "idle/bubble"
    double measured_s = 0;  // per step
    double predicted_s = 0; // per step
    double predicted_profiled_s = 0;  // per step, of the profiled step (JobComparison::profiler_host_s > 0)
};

// A measured memory peak (trace_memory.h) against the prediction: the
// highest over the traced ranks, against the estimate's worst pipeline
// stage (Estimate::memory): peak allocated against Memory::allocated_bytes,
// peak reserved against Memory::reserved_bytes.
struct MemoryRow {
    std::string memory;          // "peak allocated", "peak reserved"
    double measured_bytes = 0;
    int rank = 0;                // the rank holding the measured peak
    double predicted_bytes = 0;
    // Under the stack the traces show (add_profiled_prediction; the host's
    // speed moves no byte); 0 where there is no profiled column.
    double predicted_profiled_bytes = 0;
};

struct JobComparison {
    double measured_step_s = 0;
    double predicted_step_s = 0;
    double measured_mfu = 0;    // fraction
    double predicted_mfu = 0;   // fraction
    std::string step_source;    // "ProfilerStep" or "kernel span"
    std::vector<WallRow> walls;
    std::vector<MemoryRow> memory;  // empty when no trace has [memory] events
    int stages = 0;          // pipeline stages among the ranks with kernels
    int measured_stage = -1; // the stage whose walls are `measured_s`
    // "job-mismatch: ..." when predicted and measured compute (GEMM and
    // attention) per step differ by more than kJobMismatchRatio either way:
    // the job probably does not describe the traced run.
    std::vector<std::string> warnings;
    // The profiler's own host time per step (profiler_host_s below; 0: the
    // traces count no host event) and the step predicted with it
    // (add_profiled_prediction): a profiled step's host is that much slower.
    double profiler_host_s = 0;
    double host_speed = 0;  // the traces' host speed (trace_host_speed), 0: not measured
    // The speeds the profiled column priced step by step, Python thread and
    // autograd engine apart (trace_step_host_speeds); empty: host_speed for
    // the whole trace.
    std::vector<StepHostSpeed> step_host_speeds;
    double predicted_profiled_step_s = 0;
    double predicted_profiled_mfu = 0;  // fraction
    // The settings the profiled column prices beyond the job's, where the
    // traces show another stack than the job says (lostflops/trace_stack.h
    // traced_settings): "training.framework=hf", ...
    std::vector<std::string> profiled_settings;
    // Whether the profiled column is filled (add_profiled_prediction).
    bool has_profiled() const { return profiler_host_s > 0 || !profiled_settings.empty(); }
};
inline constexpr double kJobMismatchRatio = 2.0;

// num_gpus and peak_flops_per_gpu (FLOP/s) are the job's, ranks_per_stage
// its tp * cp * dp (0: the ranks are not split by stage); throws InputError
// (naming `job_source`) when ranks is empty or the peak is not positive.
JobComparison compare_with_estimate(const std::vector<RankReport>& ranks, const Estimate& est,
                                    int num_gpus, double peak_flops_per_gpu,
                                    const std::string& job_source, int ranks_per_stage = 0);
// The same for `job` and its estimate: its GPUs, its dense peak at its
// precision, its tp * cp * dp ranks per stage (what `trace --job` and
// `report --trace` compare).
JobComparison compare_with_job(const std::vector<RankReport>& ranks, const Job& job, const Estimate& est,
                               const std::string& job_source);

// The profiler's host time per step the traces show, seconds: over the
// ranks that count host events, the mean of each one's host events per step
// (RankReport::host_events_per_step) times `event_us` (calibration
// profiler_event_us) plus its stalls, at most its measured step; 0 when no
// rank counts a host event.
double profiler_host_s(const std::vector<RankReport>& ranks, double event_us);

// The host's speed the traces measure: the mean of the ranks' host_speed
// where measured (RankReport::host_speed); 0 when none is.
double trace_host_speed(const std::vector<RankReport>& ranks);

// The host's speed step by step: for each CPU ProfilerStep k, the mean over
// the ranks of their step k's speeds (RankReport::step_host_speeds), thread
// by thread; empty when some rank has another number of steps or some step
// a thread without a measurement (the whole trace's speed then stands).
std::vector<StepHostSpeed> trace_step_host_speeds(const std::vector<RankReport>& ranks);

// Fills the comparison's profiled column from `profiled`, the job's estimate
// with `host_s` more host time per step on a host `host_speed` times as slow
// (lostflops/host_speed.h estimate_as_profiled), under the stack the traces
// show (`settings`, as load_job overrides; empty: the job's own): each
// wall's predicted_profiled_s and the step's. With settings, a job-mismatch
// warning goes when the profiled compute is within kJobMismatchRatio of the
// measured: the job's stack differed, not its run.
void add_profiled_prediction(JobComparison& c, const Estimate& profiled, double host_s, double host_speed = 0,
                             const std::vector<std::string>& settings = {});
// The same from one estimate per profiled step, each at that step's host
// speeds (`speeds`, as many; lostflops/host_speed.h estimate_as_profiled):
// the column is their mean, as the measured column is the steps' mean (the
// step is convex in the host's speed: a slow step's idle is not given back
// by a fast one's). `profiled` not empty.
void add_profiled_prediction(JobComparison& c, const std::vector<Estimate>& profiled,
                             const std::vector<StepHostSpeed>& speeds, double host_s, double host_speed,
                             const std::vector<std::string>& settings);

}  // namespace lostflops::trace
