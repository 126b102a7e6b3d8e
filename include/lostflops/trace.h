// Measured side: PyTorch profiler (Kineto) Chrome-trace JSON -> kernel
// intervals by category -> measured breakdown per rank, stragglers across ranks.
// Reading (TraceData, read_trace, its limits and skipped events) is
// lostflops/trace_read.h, included here.
//
// Two conventions (AnalyzeOptions::hta_compatible):
//  - native: every kernel/gpu_memcpy/gpu_memset event counts, at full
//    (sub-microsecond) resolution; communication is recognised by the
//    "Collective name" argument or an NCCL/RCCL/gloo kernel name.
//  - HTA-compatible: the conventions of Meta's Holistic Trace Analysis
//    (hta/common/trace.py, trace_parser.py, analyzers/breakdown_analysis.py,
//    communication_analysis.py): kernels are events with a stream argument,
//    times rounded to whole microseconds when the file has fractional
//    timestamps (start rounded up, end rounded down), kernels launched in the
//    last ProfilerStep or not correlated with a CPU event dropped when the
//    trace holds two or more ProfilerStep annotations, communication = name
//    starting with "nccl" (or containing "ncclKernel" or "gloo:"), memory =
//    name containing Memcpy/Memset, computation = the rest.
//
// Times are microseconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/trace_read.h"

namespace lostflops::trace {

struct AnalyzeOptions {
    bool hta_compatible = false;
};

struct CategoryTotal {
    std::string name;       // "gemm", "attention", ..., "comm:all_reduce", "memcpy"
    KernelCategory category = KernelCategory::other_compute;
    int64_t count = 0;
    double time_us = 0;     // sum of durations (not a union)
};

struct Iteration {
    int64_t number = 0;       // N of ProfilerStep#N
    double cpu_us = 0;        // duration of the CPU annotation
    int64_t kernels = 0;      // GPU events launched from inside it
    double gpu_span_us = 0;   // first start to last end of those
    double compute_us = 0;    // union of their compute kernels
    double comm_us = 0;       // union of their communication kernels
    double idle_us = 0;       // gpu span minus union of all of them
    // Start of its first communication kernel (trace time stamps, us); none without one.
    std::optional<double> first_comm_start_us;
    double matmul_us = 0;        // union of its GEMM and attention kernels
    double exposed_comm_us = 0;  // its communication while none of its compute kernels runs
    double exposed_memory_us = 0;  // its memcpy/memset while neither compute nor communication runs
    // Start of its first communication kernel of each process group, by
    // RankReport::process_groups index; none where the group had none.
    std::vector<std::optional<double>> group_comm_start_us;
};

// The costliest kernels of a category, by summed duration.
struct TopKernel {
    std::string name;
    std::string category;  // CategoryTotal::name: "gemm", "comm:all_reduce", ...
    int64_t count = 0;
    double time_us = 0;
};
inline constexpr std::size_t kTopKernelsPerCategory = 5;

// GPU idle time of one stream split by cause, as Holistic Trace Analysis
// defines it (hta/analyzers/breakdown_analysis.py _analyze_idle_time_for_stream):
// the stream's kernels in start order; each gap from the previous kernel's end
// to a kernel's start is
//  - host wait when the kernel's CPU launch started after the previous kernel
//    ended (the GPU had nothing queued: the CPU was late);
//  - else kernel wait when the gap is shorter than kKernelWaitThresholdUs (the
//    overhead of running back-to-back kernels);
//  - else other (the kernel was queued but waited, e.g. on another stream).
// HTA-compatible: HTA's rounded times, gaps summed as they are (a kernel
// starting before the previous one ended adds a negative gap, as in HTA), a
// kernel with no CPU launch is never host wait. Native: full resolution,
// negative gaps count as zero.
inline constexpr double kKernelWaitThresholdUs = 30;  // HTA get_idle_time_breakdown consecutive_kernel_delay default
struct StreamIdle {
    int64_t stream = -1;
    int64_t kernels = 0;        // kernels on the stream
    double host_wait_us = 0;
    double kernel_wait_us = 0;
    double other_us = 0;
    double idle_us() const { return host_wait_us + kernel_wait_us + other_us; }
};

// CUDA launches (trace_launch.cpp): for every analysed kernel whose CPU launch
// is in the trace (the CPU event with its correlation id: cudaLaunchKernel,
// cudaMemcpyAsync, ...), the launch call's duration on the CPU, the kernel's
// duration on the GPU, and the launch delay (kernel start - launch start:
// the time the kernel waited in the stream's queue). A kernel is "launch
// bound" when it ran on the GPU for less time than its launch took on the
// CPU: back to back, such kernels leave the GPU waiting for the CPU (HTA's
// cuda_kernel_analysis compares the same two durations).
struct LaunchKernel {
    std::string name;
    int64_t count = 0;
    double launch_us = 0;   // mean CPU duration of the launch call
    double gpu_us = 0;      // mean GPU duration
    double delay_us = 0;    // mean launch delay
    int64_t launch_bound = 0;  // calls with gpu duration < launch duration
};
struct LaunchStats {
    int64_t launched = 0;          // kernels with their CPU launch in the trace
    double mean_launch_us = 0;
    double mean_gpu_us = 0;
    double mean_delay_us = 0;
    double median_delay_us = 0;
    int64_t launch_bound = 0;      // kernels shorter on the GPU than their launch on the CPU
    double launch_bound_gpu_us = 0;  // their summed GPU time
    // Kernel names with the most launch-bound calls (then the most calls), at most kMaxLaunchKernels.
    std::vector<LaunchKernel> kernels;
};
inline constexpr std::size_t kMaxLaunchKernels = 10;

// Achieved bandwidth per collective (trace_comm.cpp), for the communication
// kernels whose message size the trace records. Size and bus bandwidth follow
// nccl-tests (NVIDIA, doc/PERFORMANCE.md): size = the larger of the in and out
// messages (all-gather: the gathered output; reduce-scatter: the input);
// algorithm bandwidth = size / kernel time; bus bandwidth = algorithm
// bandwidth x 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
// reduce-scatter and all-to-all, 1 for broadcast, reduce and send/recv.
struct CollectiveStats {
    std::string collective;   // collective_of(): "all_reduce", "all_gather", ...
    int64_t calls = 0;        // kernels with a recorded size
    int64_t group_size = 0;   // ranks (the largest group seen)
    double bytes = 0;         // summed sizes
    double time_us = 0;       // summed kernel durations
    double algbw_gbps = 0;    // bytes / time, GB/s (1e9 bytes)
    double busbw_gbps = 0;    // algbw x the factor above
};

// The host's speed in one profiled step (RankReport::step_host_speeds):
// each thread's against the calibration trace's same thread; 0: too few
// calls measured.
struct StepHostSpeed {
    double python = 0;    // the Python thread's operators
    double autograd = 0;  // the other threads' (the autograd engine's)
};

struct RankReport {
    int rank = 0;
    std::string source;
    bool hta_compatible = false;
    std::string host;               // TraceData::host
    int gpus_per_node = 0;          // TraceData::gpus_per_node
    int64_t steps_total = 0;        // CPU ProfilerSteps in the trace (iterations may hold fewer: summaries)
    // The trace's host events (TraceData::host_events) and the profiler's
    // own stalls, microseconds, over its CPU ProfilerSteps; 0 without steps,
    // and in summaries (not carried there).
    double host_events_per_step = 0;
    double profiler_overhead_us_per_step = 0;
    // The host's speed against the calibration trace's (> 1: slower; 0:
    // not measured, and in summaries): the median over the operators that
    // launch and allocate nothing of their median CPU time's ratio, thread by
    // thread (src/trace/trace_host_speed.cpp).
    double host_speed = 0;
    // The same step by step (CPU ProfilerSteps in time order), the Python
    // thread (pid == tid: the forward, the optimizer) and the others (the
    // autograd engine's: the backward) apart; empty in summaries.
    std::vector<StepHostSpeed> step_host_speeds;
    // Events of each StackMarker (TraceData::stack_markers; 0 in summaries).
    std::array<uint64_t, kStackMarkers> stack_markers{};
    int64_t kernels = 0;            // GPU events analysed
    double kernel_span_us = 0;      // first kernel start to last kernel end
    double compute_us = 0;          // union of compute kernels
    double non_compute_us = 0;      // busy but not computing = span - compute - idle
    double idle_us = 0;             // span - union of all kernels
    double comm_us = 0;             // union of communication kernels
    double memory_us = 0;           // union of memcpy/memset kernels
    double exposed_comm_us = 0;     // communication while no compute runs
    double exposed_memory_us = 0;   // memcpy/memset while neither compute nor comm runs
    double matmul_us = 0;           // union of gemm + attention kernels
    std::optional<double> comm_comp_overlap_pct;  // none without communication
    std::vector<CategoryTotal> categories;  // sorted by time, largest first
    std::vector<Iteration> iterations;
    double mean_step_us = 0;        // mean ProfilerStep duration, 0 without
    std::vector<StreamIdle> idle_breakdown;  // one per stream with kernels, by stream number
    LaunchStats launches;
    std::vector<CollectiveStats> collectives;  // by summed time, largest first
    std::vector<TopKernel> top_kernels;          // per category (categories' order), at most kTopKernelsPerCategory
    std::vector<ProcessGroup> process_groups;    // groups of its communication kernels
    uint64_t skipped_events = 0;    // implausible events left out (TraceData::skipped)
    // The allocator's peaks and timeline (trace_memory.h) when the trace has
    // [memory] events of a CUDA device: of several devices or processes, the
    // one with the highest allocated peak (a warning names the others).
    std::optional<DeviceMemory> memory;
    std::vector<std::string> warnings;
};

RankReport analyze(const TraceData& data, const AnalyzeOptions& opts = {});

// Kernel classification (exposed for tests).
KernelCategory classify_kernel(std::string_view name, EventKind kind,
                               std::string_view collective_arg, bool hta_compatible);
// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
// "reduce", "send_recv" or "other", from the Collective name argument when
// given, else from the kernel name (ncclKernel_* and ncclDevKernel_*).
std::string collective_of(std::string_view name, std::string_view collective_arg);

// Across ranks, per profiler step: when each rank's first communication
// kernel of the step started (Iteration::first_comm_start_us). A collective
// cannot finish before its last rank joins, so the rank that starts last
// makes the others wait for skew_us = latest - earliest start
// (ClusterReport::step_skew, trace_cluster.h; per process group there too).
// The ranks' clocks are those of their hosts: on several nodes the skew
// includes their clock offset (NTP keeps it to about a millisecond or less).
struct StepSkew {
    int64_t step = 0;
    int64_t ranks = 0;        // ranks with a communication kernel in the step
    double skew_us = 0;
    int latest_rank = 0;      // started last: the others wait for it
    int earliest_rank = 0;
};
// Ranks lie in [0, kMaxRank] (distributedInfo, summaries).
inline constexpr int kMaxRank = 1 << 24;  // 16.7 M ranks; the largest jobs have ~10^5 GPUs

// Concatenates, sorted by rank; a rank present twice throws InputError naming
// both sources. `lostflops trace` applies the same rule to its traces, and
// `trace merge` to its summaries.
std::vector<RankReport> merge_summaries(const std::vector<std::vector<RankReport>>& parts);
// Ranks of traces without one (no distributedInfo, no rank in the name):
// the lowest rank not taken, in input order, each with a warning saying so.
void assign_missing_ranks(std::vector<RankReport>& ranks);

}  // namespace lostflops::trace
