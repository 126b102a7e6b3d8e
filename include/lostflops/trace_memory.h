// Measured memory: what a trace recorded with `profile_memory=True` says of
// the CUDA caching allocator. PyTorch's profiler writes one "[memory]"
// instant event ("ph": "i", "cat": "cpu_instant_event") per allocation and
// free, on the thread that made it, with args "Total Allocated" and "Total
// Reserved" (the allocator's running totals in bytes after it, everything
// allocated before the profiler started included), "Bytes" (+ allocated, -
// freed), "Addr", "Device Id" and "Device Type" (torch/csrc/profiler/
// kineto_shim and the Kineto exporter, PyTorch 2.x).
//
// Per (pid, CUDA device) of a file the reader keeps the peaks of both totals
// with their times, the thread of the allocated peak, and a timeline
// downsampled as it streams (a bounded number of time buckets whose width
// doubles when they run out, each keeping the largest totals in it and the
// time of its largest allocated total, so the peak survives every merge);
// the events themselves are not kept, so millions of them cost no memory.
// A second reading of the file (only when it has such events, and only from
// a file or bytes in memory: standard input is read once) names the CPU
// operator at the allocated peak: the innermost "cpu_op" event of that
// thread enclosing it, and the nearest enclosing autograd node
// ("autograd::engine::evaluate_function: ..."), module ("nn.Module: ...")
// or user annotation.
//
// Malformed [memory] events are skipped and counted by reason in one
// "memory-events" warning per file: a CUDA event whose totals are missing,
// not numbers, not whole, negative, beyond kMaxAllocatorBytes, or with the
// reserved total below the allocated one (reserved segments hold every
// allocated block: c10/cuda/CUDACachingAllocator.cpp), or whose "Device Id"
// is not a whole number in [0, kMaxDeviceId]; an event whose "Device Type"
// is missing or not a whole number (no telling whose it is); one whose "ts"
// is not a number within +-2^53 us. Events of other device types (CPU = 0)
// are passed over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lostflops::trace {

// c10::DeviceType (PyTorch c10/core/DeviceType.h): CPU = 0, CUDA = 1. ROCm
// builds of PyTorch report AMD GPUs as CUDA devices too (HIP masquerading).
inline constexpr int kCudaDeviceType = 1;
// The allocator's totals live in one GPU's memory: 288 GB on the largest of
// 2025 (AMD MI355X, data/catalog/gpus.yaml; NVIDIA B300 the same), so 1 TiB
// is beyond any real device.
inline constexpr double kMaxAllocatorBytes = 1099511627776.0;  // 2^40
inline constexpr int kMaxDeviceId = 1023;                      // deviceProperties is read up to 1024 GPUs
// Bounds: the points of a timeline as reported, the buckets while
// streaming, the (pid, device) pairs of one file (more are passed over and
// counted in the warning).
inline constexpr std::size_t kMaxMemoryTimelinePoints = 512;
inline constexpr std::size_t kMaxMemoryBuckets = 1024;
inline constexpr std::size_t kMaxMemoryTracks = 256;

inline constexpr double kBytesPerGiB = 1073741824.0;  // 2^30: the text's GiB

// One point of a timeline: the largest totals within a time bucket, at the
// time of its largest allocated total (trace time stamps, us).
struct MemoryPoint {
    double ts_us = 0;
    double allocated_bytes = 0;
    double reserved_bytes = 0;
};

// One CUDA device's allocator as one process recorded it.
struct DeviceMemory {
    int64_t pid = -1;          // the events' "pid" (-1 when absent or not an integer)
    int device = 0;            // "Device Id"
    uint64_t events = 0;       // [memory] events used
    double peak_allocated_bytes = 0;
    double peak_allocated_ts_us = 0;  // the earliest event at that total
    int64_t peak_allocated_tid = -1;  // its "tid"
    double peak_reserved_bytes = 0;
    double peak_reserved_ts_us = 0;
    // The CPU ProfilerStep holding the allocated peak and the time from its
    // start (set by analyze()); none outside the steps.
    std::optional<int64_t> peak_allocated_step;
    std::optional<double> peak_allocated_step_offset_us;
    // The innermost cpu_op enclosing the allocated peak on its thread, and
    // the nearest enclosing autograd node, module or annotation; "" when none
    // (or not looked up: standard input).
    std::string peak_op;
    std::string peak_op_context;
    std::vector<MemoryPoint> timeline;  // time order, at most kMaxMemoryTimelinePoints
};

}  // namespace lostflops::trace
