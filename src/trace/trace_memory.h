// The reader's side of measured memory (contract and rules:
// include/lostflops/trace_memory.h): [memory] events folded into peaks and a
// bounded timeline as they stream by, the second reading that names the
// operator at each allocated peak, and the choice of a rank's device.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lostflops/trace.h"
#include "trace/trace_event.h"

namespace lostflops::trace::detail {

// A timeline downsampled as it streams: buckets of a width that doubles
// (pairs merged) whenever there are more than kMaxMemoryBuckets of them;
// each keeps its largest totals and the time of its largest allocated one.
class MemoryTimeline {
public:
    void add(const MemoryPoint& p);
    // At most max_points points in time order: the buckets merged pairwise
    // until they fit.
    std::vector<MemoryPoint> points(std::size_t max_points) const;

private:
    struct Bucket {
        int64_t index = 0;  // floor((ts - origin) / width)
        MemoryPoint p;
    };
    double origin_ = 0;
    double width_us_ = 1;
    bool any_ = false;
    std::size_t hint_ = 0;  // the bucket the last point went to (events mostly come in time order)
    std::vector<Bucket> buckets_;  // by index
};

// Why a [memory] event was skipped (counted; one warning per file).
enum class MemorySkip : uint8_t { ts, device_type, device_id, allocated, reserved, reserved_below };
inline constexpr std::size_t kMemorySkips = 6;

// The [memory] events of one file as they stream by.
class MemoryReader {
public:
    void add(const EventFields& f);
    // The tracks by pid, then device; a "memory-events" warning when events
    // were skipped or passed over.
    std::vector<DeviceMemory> finish(std::vector<std::string>& warnings);

private:
    struct Track {
        DeviceMemory m;
        MemoryTimeline timeline;
    };
    void skip(MemorySkip why) { ++skipped_[static_cast<std::size_t>(why)]; }
    std::map<std::pair<int64_t, int>, Track> tracks_;
    Track* last_ = nullptr;  // the track of the last event and its key
    std::pair<int64_t, int> last_key_{};
    uint64_t skipped_[kMemorySkips] = {};
    uint64_t over_tracks_ = 0;  // events of (pid, device) pairs beyond kMaxMemoryTracks
};

// The second reading of a file: for each track's allocated peak, the
// innermost cpu_op of its thread enclosing it and the nearest enclosing
// autograd node, module or user annotation.
class PeakOpFinder {
public:
    explicit PeakOpFinder(const std::vector<DeviceMemory>& tracks);
    bool empty() const { return targets_.empty(); }
    void visit(const EventFields& f);
    // Writes peak_op and peak_op_context into the tracks it was made from.
    void apply(std::vector<DeviceMemory>& tracks) const;

private:
    struct Hit {
        bool any = false;
        double start = 0, dur = 0;
        std::string name;
        void offer(const EventFields& f);
    };
    struct Target {
        int64_t pid = -1, tid = -1;
        double ts = 0;
        std::size_t track = 0;
        Hit op, context;
    };
    std::vector<Target> targets_;  // by (pid, tid)
    double lo_ = 0, hi_ = 0;       // the earliest and latest peak
};

// The memory a rank reports: of its tracks the one with the highest
// allocated peak (a "memory-devices" warning names the others), with the
// ProfilerStep holding the peak; none without tracks.
std::optional<DeviceMemory> rank_memory(const TraceData& d, std::vector<std::string>& warnings);

}  // namespace lostflops::trace::detail
