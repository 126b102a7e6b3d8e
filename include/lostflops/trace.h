// Measured side: PyTorch profiler (Kineto) Chrome-trace JSON -> kernel
// intervals by category -> measured breakdown per rank, stragglers across ranks.
//
// Reading is streaming (src/trace/trace_reader.cpp): the file is read in
// chunks (ISA-L's igzip for .json.gz), each object of "traceEvents" is parsed
// on its own by a hand-written strict parser, and only what the analysis
// needs is kept (per GPU event 24 bytes: start, duration, correlation and an
// index into a table of the distinct (name, collective, stream, kind) labels;
// per correlation id of CPU events: the earliest start and its duration, 16
// bytes; per NCCL kernel with recorded sizes: 24 bytes; per (pid, CUDA
// device) of [memory] events a bounded timeline, trace_memory.h). Memory is a
// small multiple of the events kept, never of the file.
//
// Limits (each a clear InputError, so that no input, endless or huge, makes
// memory grow without bound; real Kineto traces are far inside them):
//  - the path must be a regular file or "-" (standard input): directories,
//    FIFOs, devices, sockets, dangling links and link loops are rejected
//    before reading (check_input_path);
//  - one JSON value (a trace event, a string inside it, a metadata value) or
//    one run of white space: at most kMaxTraceValueBytes (16 MiB; a Kineto
//    event is well under 100 KB even with call stacks and input shapes);
//  - metadata values that are read (distributedInfo, deviceProperties,
//    displayTimeUnit): at most kMaxTraceMetadataBytes (1 MiB);
//  - events kept (GPU events + ProfilerStep marks + CPU launches): at most
//    kMaxTraceKeptEvents (200 million, ~5 GB; a large real trace holds a few
//    million); distinct labels: at most kMaxTraceLabels (1 million), distinct
//    name bytes at most kMaxTraceNameBytes (64 MiB);
//  - malformed or non-object items: more than kMaxTraceJunkItems (100 000)
//    and more of them than good events means the file is not a trace.
//
// Implausible events (skipped, counted per reason in TraceData::skipped and
// reported as one "skipped-events" warning per rank): a GPU event (kernel,
// memcpy, memset, sync, or any event with a stream) or a ProfilerStep mark
// whose
//  - "ts" is missing, not a number (a string, null) or not finite;
//  - "ts" is outside +-2^53 us (no longer a whole microsecond in a double:
//    ~285 years from the epoch, so no real clock);
//  - "dur" is missing or not a finite number (HTA drops such rows too);
//  - "dur" is negative;
//  - "dur" exceeds kMaxEventDurUs (one hour; the longest single kernels of
//    real training are seconds, a ProfilerStep minutes);
//  - start lies more than kMaxTsFromMedianUs (one day) from the median start
//    of the rank's GPU events (a profiled window lasts seconds to minutes; the
//    median is not moved by a minority of outliers).
// Duplicates: a GPU event identical to another (same name, stream, kind,
// collective, start, duration and correlation; a trace written twice over, or
// events emitted twice) is counted once, with a "duplicate-events" warning
// saying how many were left out: one equal to the last event of its label
// while reading (so a file of a few events repeated holds a few), the others
// when the kernels are picked. Identical ProfilerStep marks are kept once; two CPU
// ProfilerSteps that overlap by more than kStepOverlapToleranceUs are an
// InputError (the steps of one trace follow each other).
// NCCL sizes: "In msg nelems"/"Out msg nelems" must be whole numbers whose
// bytes are at most kMaxCommBytes and "Group size" a whole number in
// [1, kMaxRank + 1]; a kernel with others keeps no size, and a
// "comm-sizes" warning counts them.
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
// Times are microseconds (Chrome trace format: "ts" and "dur" are always in
// microseconds; "displayTimeUnit" only tells viewers how to display them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/trace_memory.h"

namespace lostflops::trace {

// What a GPU event is, as far as time accounting goes.
enum class KernelCategory {
    gemm,               // matrix multiplies (cuBLAS, CUTLASS, Tensile, convolutions)
    attention,          // fused attention (flash, fmha, memory-efficient)
    norm_elementwise,   // normalisation, softmax, elementwise, reductions
    other_compute,      // any other compute kernel (optimizer, triton, indexing...)
    communication,      // collectives and point-to-point (NCCL/RCCL/gloo)
    memcpy,
    memset,
    sync,               // stream waits / event syncs: not work, not counted
};
const char* to_string(KernelCategory c);

enum class EventKind : uint8_t { kernel, gpu_memcpy, gpu_memset, cuda_sync, other };

// What many GPU events share, stored once (TraceData::labels).
struct GpuLabel {
    uint32_t name_id = 0;        // index into TraceData::names
    uint32_t collective_id = 0;  // index into TraceData::names of args["Collective name"], 0 = none
    int64_t stream = -1;         // args.stream, -1 when absent or not an integer
    EventKind kind = EventKind::other;
    bool has_stream = false;
    uint32_t group = 0;          // index into TraceData::groups (NCCL kernels' process group), 0 = none
    int64_t pid = -1;            // the event's "pid", -1 when absent or not an integer
};

// A process group as PyTorch's profiler records it on NCCL kernels (args
// "Process Group Name", "Process Group Description", "Process Group Ranks").
// PyTorch names groups by creation order, the same on every rank, so two
// tensor-parallel groups may share a name: name and ranks together identify one.
struct ProcessGroup {
    std::string name;   // "0", "1", ...
    std::string desc;   // "default_pg", "undefined", or what the framework set
    std::string ranks;  // "[0, 1, 2, 3]" as written (global ranks)
    bool operator==(const ProcessGroup& o) const { return name == o.name && desc == o.desc && ranks == o.ranks; }
};
inline constexpr std::size_t kMaxProcessGroups = 4096;  // per trace

// Correlation ids as kept: equality-preserving 32-bit keys. 0..2^31-1 are
// kept as they are (CUPTI's ids are 32-bit counters), -1 (absent) is
// kNoCorrelation, any other value gets a key of its own from 2^31 on.
inline constexpr uint32_t kNoCorrelation = 0xFFFFFFFFu;

// One GPU event as kept by the reader (no raw JSON is kept): 24 bytes.
struct GpuEvent {
    double ts_us = 0;        // as written in the file
    double dur_us = 0;       // >= 0 and <= kMaxEventDurUs (implausible events are skipped)
    uint32_t label = 0;      // index into TraceData::labels
    uint32_t correlation = kNoCorrelation;  // key of args.correlation (see kNoCorrelation)
};

// One ProfilerStep#N annotation.
struct StepMark {
    int64_t number = 0;
    double ts_us = 0;
    double dur_us = 0;
    bool on_cpu = true;  // no stream argument (CPU-side annotation)
    int64_t pid = -1;    // the annotation's "pid", -1 when absent or not an integer
};

// CPU events that carry a correlation id: where their launch happened.
struct CpuLaunch {
    uint32_t correlation = kNoCorrelation;  // key, as GpuEvent::correlation
    float dur_us = 0;  // duration of that earliest event (the launch call itself); in the padding
    double ts_us = 0;  // earliest start among CPU events with this correlation
};

// Message size of an NCCL kernel, from the arguments Kineto records on it
// ("In msg nelems", "Out msg nelems", "Group size", "dtype"); kept only for
// kernels that have them.
struct CommSize {
    uint32_t correlation = kNoCorrelation;  // key of the kernel, as GpuEvent::correlation
    uint32_t group_size = 0;                // ranks in the group (0: not recorded)
    double in_bytes = 0;                    // In msg nelems x element size
    double out_bytes = 0;                   // Out msg nelems x element size
};

// Limits of the reader (see the top of this file).
inline constexpr std::size_t kMaxTraceValueBytes = 16u << 20;
inline constexpr std::size_t kMaxTraceMetadataBytes = 1u << 20;
inline constexpr uint64_t kMaxTraceKeptEvents = 200'000'000;
inline constexpr std::size_t kMaxTraceLabels = 1'000'000;
inline constexpr std::size_t kMaxTraceNameBytes = 64u << 20;
inline constexpr uint64_t kMaxTraceJunkItems = 100'000;
// Plausibility bounds of one event (see the top of this file).
inline constexpr double kMaxEventDurUs = 3600e6;        // one hour
inline constexpr double kMaxTsFromMedianUs = 86400e6;   // one day
inline constexpr double kMaxAbsTsUs = 9007199254740992.0;  // 2^53
// A collective's buffer lives in one GPU's memory (192 GB on the largest of
// 2024, AMD MI300X and NVIDIA B200): 1 TiB is beyond any real message.
inline constexpr double kMaxCommBytes = 1099511627776.0;  // 2^40
// Kineto's step marks follow each other; converted or rounded traces may
// overlap them by a rounding step.
inline constexpr double kStepOverlapToleranceUs = 1.0;

// Why implausible events were skipped; counts per reason.
enum class SkipReason : uint8_t {
    ts_not_number, ts_out_of_range, dur_not_number, dur_negative, dur_too_long, ts_far_from_median,
};
inline constexpr std::size_t kSkipReasons = 6;
const char* to_string(SkipReason r);  // "ts not a number", "dur negative", ...
struct SkippedEvents {
    uint64_t count[kSkipReasons] = {};
    uint64_t total() const;
    // "ts not a number (1), dur negative (1)"; empty when none.
    std::string describe() const;
};

struct TraceData {
    std::string source;            // file name as given
    std::optional<int> rank;       // distributedInfo.rank
    std::optional<int> world_size; // distributedInfo.world_size
    std::string display_time_unit; // "ms", "ns", ... (display only)
    std::string device_name;       // deviceProperties[0].name when present
    std::string host;              // top-level "host_name" when the trace has one
    int gpus_per_node = 0;         // deviceProperties entries (the GPUs the process saw), 0 unknown
    std::vector<std::string> names;  // interned strings; names[0] == ""
    std::vector<GpuLabel> labels;    // distinct labels of the GPU events
    std::vector<ProcessGroup> groups;  // groups[0] is "none"
    std::vector<GpuEvent> gpu;     // events with a stream or a GPU category
    std::vector<StepMark> steps;   // ProfilerStep annotations, file order
    std::vector<CpuLaunch> cpu_launches;  // sorted by correlation, unique
    std::vector<CommSize> comm_sizes;     // sorted by correlation
    std::vector<std::string> step_names;  // distinct ProfilerStep#N names
    // Each (pid, CUDA device) of its [memory] events (trace_memory.h), by pid then device.
    std::vector<DeviceMemory> memory;
    double cpu_min_ts_us = 0;      // earliest CPU event (for HTA's fallback)
    bool has_cpu_events = false;
    // Top-level "ranksByPid": true (lostflops' own timelines, `estimate
    // --timeline-out`): one file holds several ranks, the "pid" of each event
    // is its rank; split_ranks() cuts the file into one TraceData per rank.
    bool ranks_by_pid = false;
    // HTA rounds all times when pandas reads "ts" as float64: some event has a
    // fractional or missing "ts".
    bool fractional_ts = false;
    uint64_t bytes = 0;            // uncompressed JSON bytes read
    uint64_t events = 0;           // traceEvents items read
    SkippedEvents skipped;         // implausible events left out
    uint64_t duplicates = 0;       // GPU events identical to the one before them, and step marks, left out
    std::vector<std::string> warnings;  // named: "truncated: ...", "control-characters: ..."
    const GpuLabel& label(const GpuEvent& g) const { return labels[g.label]; }
};

// A file with ranks_by_pid: one TraceData per pid of its GPU events and
// step marks (rank = pid, world_size = the largest pid + 1 unless the file
// says otherwise, source "FILE (pid N)"), in pid order, each with the memory
// of its pid; names, labels, groups and CPU launches are shared by copy. Any
// other file: itself, alone.
// Throws InputError (naming the file) for a pid outside [0, kMaxRank].
std::vector<TraceData> split_ranks(TraceData&& data);

struct ReadOptions {
    // Called from the reading thread after each chunk with the number of
    // (uncompressed) bytes read since the previous call; may be empty.
    std::function<void(uint64_t)> on_bytes;
};

// Reads one trace file (.json or .json.gz; gzip is detected from the bytes).
// Throws InputError for a file that cannot be read or is not a Chrome trace;
// a file cut short keeps what was read and adds a "truncated" warning.
// The path goes through check_input_path ("-" reads standard input).
TraceData read_trace(const std::string& path, const ReadOptions& opts = {});
// Same, from bytes in memory (uncompressed or gzip); `source` names it.
TraceData read_trace_bytes(std::string_view bytes, const std::string& source);

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

struct RankReport {
    int rank = 0;
    std::string source;
    bool hta_compatible = false;
    std::string host;               // TraceData::host
    int gpus_per_node = 0;          // TraceData::gpus_per_node
    int64_t steps_total = 0;        // CPU ProfilerSteps in the trace (iterations may hold fewer: summaries)
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
