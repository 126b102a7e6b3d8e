// Measured side, reading: PyTorch profiler (Kineto) Chrome-trace JSON ->
// the GPU events, step marks, CPU launches and NCCL sizes of each rank
// (TraceData). lostflops/trace.h analyses them.
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
// Times are microseconds (Chrome trace format: "ts" and "dur" are always in
// microseconds; "displayTimeUnit" only tells viewers how to display them).
#pragma once

#include <array>
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
// The host's speed (RankReport::host_speed): 6 operators, each measured on a
// thread with at least 20 calls (scripts/host_speed.py --min-calls), at most
// 100,000 kept per operator and thread (400 kB, and 800 kB of their start
// times: the speed step by step).
inline constexpr int kHostOps = 6;
inline constexpr size_t kHostOpSamplesMin = 20;
inline constexpr size_t kHostOpSamplesMax = 100000;
// Host events and kernels that show the training stack (lostflops/trace_stack.h;
// the table of their names: src/trace/trace_stack.cpp kStackMarkerNames).
enum StackMarker {
    kMarkFusedAdam,    // torch.optim's fused AdamW ran
    kMarkForeachAdam,  // torch.optim's foreach Adam(W) ran
    kMarkFsdp2,        // FSDP2's fully_shard hooks ran
    kMarkEagerNorm,    // a norm's eager chain ran under autograd
    kMarkTorchOptim,   // a torch.optim optimizer's step ran
    kMarkInductor,     // an Inductor Triton kernel ran
    kMarkRmsNormOp,    // torch's own RMSNorm ran (F.rms_norm: aten::rms_norm)
    kMarkCompiledStep, // Inductor's foreach kernel ran (a compiled optimizer step)
    kMarkLiftFresh,    // a tensor was made from Python data (transformers' KV cache in the forward)
    kStackMarkers
};
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
    // What the profiler recorded on the host, which costs the host its own
    // time (calibration profiler_event_us): complete ("X") events of
    // categories cpu_op, cuda_runtime and cuda_driver, and the microseconds
    // of the profiler's own buffer handling (category "overhead", names
    // "Activity Buffer Request" and "Buffer Flush", an event at most an hour).
    uint64_t host_events = 0;
    double profiler_overhead_us = 0;
    // CPU times (microseconds) of the operators that launch and allocate
    // nothing, [thread * kHostOps + operator] (thread 0: pid == tid, the
    // Python thread; 1: the others), for the host's own speed
    // (RankReport::host_speed; src/trace/trace_host_speed.cpp).
    std::array<std::vector<float>, 2 * kHostOps> host_op_us;
    // Their start times (microseconds, the trace's clock), sample by sample:
    // the speed of each profiled step (RankReport::step_host_speeds).
    std::array<std::vector<double>, 2 * kHostOps> host_op_ts_us;
    // Events of each StackMarker (lostflops/trace_stack.h).
    std::array<uint64_t, kStackMarkers> stack_markers{};
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

}  // namespace lostflops::trace
