// Measured side: PyTorch profiler (Kineto) Chrome-trace JSON -> kernel
// intervals by category -> measured breakdown per rank, stragglers across ranks.
//
// Reading is streaming (src/trace/trace_reader.cpp): the file is read in
// chunks (zlib for .json.gz), each object of "traceEvents" is cut out and
// parsed on its own, and only what the analysis needs is kept (per GPU event:
// start, duration, stream, correlation, interned name and collective; per CPU
// event with a correlation id: its earliest start). Memory is a small multiple
// of the events kept, never of the file.
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
// Times are microseconds (Chrome trace format: "ts" and "dur" are always in
// microseconds; "displayTimeUnit" only tells viewers how to display them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// One GPU event as kept by the reader (no raw JSON is kept).
struct GpuEvent {
    double ts_us = 0;        // as written in the file
    double dur_us = 0;
    int64_t correlation = -1;  // args.correlation, -1 when absent
    int64_t stream = -1;       // args.stream, -1 when absent or not an integer
    uint32_t name_id = 0;      // index into TraceData::names
    uint32_t collective_id = 0;  // index into TraceData::names of args["Collective name"], 0 = none
    EventKind kind = EventKind::other;
    bool has_stream = false;
};

// One ProfilerStep#N annotation.
struct StepMark {
    int64_t number = 0;
    double ts_us = 0;
    double dur_us = 0;
    bool on_cpu = true;  // no stream argument (CPU-side annotation)
};

// CPU events that carry a correlation id: where their launch happened.
struct CpuLaunch {
    int64_t correlation = -1;
    double ts_us = 0;  // earliest start among CPU events with this correlation
};

struct TraceData {
    std::string source;            // file name as given
    std::optional<int> rank;       // distributedInfo.rank
    std::optional<int> world_size; // distributedInfo.world_size
    std::string display_time_unit; // "ms", "ns", ... (display only)
    std::string device_name;       // deviceProperties[0].name when present
    std::vector<std::string> names;  // interned strings; names[0] == ""
    std::vector<GpuEvent> gpu;     // events with a stream or a GPU category
    std::vector<StepMark> steps;   // ProfilerStep annotations, file order
    std::vector<CpuLaunch> cpu_launches;  // sorted by correlation, unique
    std::vector<std::string> step_names;  // distinct ProfilerStep#N names
    double cpu_min_ts_us = 0;      // earliest CPU event (for HTA's fallback)
    bool has_cpu_events = false;
    // HTA rounds all times when pandas reads "ts" as float64: some event has a
    // fractional or missing "ts".
    bool fractional_ts = false;
    uint64_t bytes = 0;            // uncompressed JSON bytes read
    uint64_t events = 0;           // traceEvents items read
    std::vector<std::string> warnings;  // named: "truncated: ...", "control-characters: ..."
};

// Reads one trace file (.json or .json.gz; gzip is detected from the bytes).
// Throws InputError for a file that cannot be read or is not a Chrome trace;
// a file cut short keeps what was read and adds a "truncated" warning.
TraceData read_trace(const std::string& path);
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
};

struct RankReport {
    int rank = 0;
    std::string source;
    bool hta_compatible = false;
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

// Across ranks: ranks whose compute or waiting (idle + exposed communication)
// differ most from the median of all ranks.
struct Straggler {
    int rank = 0;
    std::string metric;       // "compute_us" or "waiting_us"
    double value_us = 0;
    double median_us = 0;
    double deviation_pct = 0; // (value - median) / median * 100
};
std::vector<Straggler> find_stragglers(const std::vector<RankReport>& ranks,
                                       std::size_t max_per_metric = 3);

// Compact per-rank summaries: what `merge` needs, without the traces.
std::string summary_to_json(const std::vector<RankReport>& ranks);
// Throws InputError naming `source` on a malformed summary.
std::vector<RankReport> summary_from_json(const std::string& text, const std::string& source);
std::vector<RankReport> load_summary(const std::string& path);
// Concatenates, sorted by rank; a rank present twice throws InputError.
std::vector<RankReport> merge_summaries(const std::vector<std::vector<RankReport>>& parts);

}  // namespace lostflops::trace
