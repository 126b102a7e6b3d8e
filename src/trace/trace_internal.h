// Internals shared by the trace reader, the analysis and the tests: what is
// kept of each event, kernel-name rules, and HTA's interval arithmetic.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lostflops/trace.h"
#include "trace/trace_event.h"
#include "trace/trace_memory.h"

namespace lostflops::trace::detail {

// A GPU label as a hash key: (name << 32 | collective), (stream index << 8 |
// kind << 1 | has_stream).
struct LabelKey {
    uint64_t a = 0, b = 0;
    bool operator==(const LabelKey& o) const { return a == o.a && b == o.b; }
};
struct LabelKeyHash {
    std::size_t operator()(const LabelKey& k) const {
        return std::hash<uint64_t>()(k.a * 0x9E3779B97F4A7C15ULL ^ k.b);
    }
};

// Reader-side state while events stream by.
struct KeepState {
    // The host's operators (trace_host_speed.h keep_host_op): calls seen and
    // the stride of those kept, per thread and operator (0: not yet 1).
    std::array<uint64_t, 2 * kHostOps> host_op_seen{}, host_op_stride{};
    std::deque<std::string> names;  // stable storage for the interning map's keys
    std::unordered_map<std::string_view, uint32_t> name_ids;
    std::size_t name_bytes = 0;
    std::unordered_map<LabelKey, uint32_t, LabelKeyHash> label_ids;
    std::unordered_map<int64_t, uint32_t> stream_ids;  // distinct stream values -> small index
    std::unordered_map<int64_t, uint32_t> pid_ids;     // distinct pids of GPU events -> small index
    int64_t last_pid = -1;                             // the last GPU event's pid and its index
    uint32_t last_pid_index = 0;
    std::unordered_map<int64_t, uint32_t> odd_correlations;  // correlation keys from 2^31 on
    std::vector<CpuLaunch> cpu_launches;  // every CPU row with its correlation; reduced at the end
    std::set<std::string> step_names;
    double cpu_min_ts = std::numeric_limits<double>::infinity();
    double no_correlation_ts = std::numeric_limits<double>::infinity();  // earliest CPU row without one
    uint64_t kept = 0;  // GPU events + step marks + CPU launches
    std::size_t launches_reduced = 0;  // cpu_launches' size after its last reduction
    std::vector<GpuEvent> last_of_label;  // the last GPU event kept of each label (duplicates)
    std::unordered_map<std::string, uint32_t> group_ids;  // name \x1f desc \x1f ranks -> TraceData::groups index
    uint64_t bad_sizes = 0;       // NCCL kernels whose recorded sizes were out of range
    std::string first_bad_size;   // the first of them, for the warning
    uint64_t unknown_dtypes = 0;  // NCCL kernels with sizes of a dtype dtype_bytes does not know
    std::string first_unknown_dtype;
    uint64_t unnumbered_steps = 0;  // "ProfilerStep#..." names without a step number
    std::string first_unnumbered_step;
    MemoryReader memory;          // [memory] events of CUDA devices
};

// Applies HTA's row rules (rows need "cat" and "dur"; cat "Trace" and
// "gpu_user_annotation" dropped; "[memory]" instant events get dur 0, and
// go to KeepState::memory as well),
// skips implausible GPU events and step marks (trace.h) counting why, and
// keeps what the analysis needs. Throws InputError (naming `out.source`)
// past the limits of trace.h.
void keep_event(const EventFields& f, TraceData& out, KeepState& st);
// Counts the event in out.stack_markers when its name is a stack marker (trace_stack.cpp).
void keep_stack_marker(const EventFields& f, TraceData& out);
// Reduces the CPU launches, skips events far from the median start.
void finish_trace(TraceData& out, KeepState& st);

// The 32-bit key of a correlation id (trace.h kNoCorrelation).
uint32_t correlation_key(int64_t correlation, KeepState& st);

// "ProfilerStep#N" (HTA: ^ProfilerStep#(\d+)); sets n.
bool is_profiler_step(std::string_view name, int64_t& n);

struct Interval {
    double start = 0;
    double end = 0;
};

// One kernel as the analysis sees it (trace_analyze.cpp): 24 bytes.
struct Picked {
    Interval iv;      // after the convention's rounding
    uint32_t ev;      // index into TraceData::gpu
    KernelCategory cat;
    uint16_t group = 0;  // its label's process group (kMaxProcessGroups < 2^16)
};

// HTA: ceil the start, floor the end, when the file has fractional "ts"
// (trace_parser.py round_down_time_stamps).
struct Rounding {
    bool on = false;
    double start(double ts) const { return on ? std::ceil(ts) : ts; }
    double end(double ts, double dur) const { return on ? std::floor(ts + dur) : ts + dur; }
};

// Start of the CPU launch of a correlation key (TraceData::cpu_launches);
// found = false when no CPU event carries it.
inline double launch_ts(const TraceData& d, uint32_t correlation, bool& found) {
    const auto it = std::lower_bound(
        d.cpu_launches.begin(), d.cpu_launches.end(), correlation,
        [](const CpuLaunch& l, uint32_t c) { return l.correlation < c; });
    found = it != d.cpu_launches.end() && it->correlation == correlation;
    return found ? it->ts_us : 0.0;
}

// The kernels a convention analyses (trace.h), in start order (stable: file
// order among equal starts), duplicates left out; warnings of the choice
// (HTA-compatible with too few steps, duplicate events) are appended.
std::vector<Picked> pick_kernels(const TraceData& d, bool hta_compatible, std::vector<std::string>& warnings);

// The CPU launch of a correlation key, or nullptr.
inline const CpuLaunch* find_launch(const TraceData& d, uint32_t correlation) {
    const auto it = std::lower_bound(
        d.cpu_launches.begin(), d.cpu_launches.end(), correlation,
        [](const CpuLaunch& l, uint32_t c) { return l.correlation < c; });
    return it != d.cpu_launches.end() && it->correlation == correlation ? &*it : nullptr;
}

// Launch statistics of the analysed kernels (trace_launch.cpp).
LaunchStats launch_stats(const TraceData& d, const std::vector<Picked>& ks, const Rounding& r);

// Bytes per element of a PyTorch dtype name as Kineto writes it ("Float",
// "BFloat16", ...); 0 when unknown (trace_comm.cpp).
double dtype_bytes(std::string_view dtype);
// Achieved bandwidth per collective (trace_comm.cpp).
std::vector<CollectiveStats> collective_stats(const TraceData& d, const std::vector<Picked>& ks);

// Idle time of each stream split by cause (trace_idle.cpp); `ks` in start
// order (stable), as analyze() holds them.
std::vector<StreamIdle> idle_breakdown(const TraceData& d, const std::vector<Picked>& ks, const Rounding& r,
                                       bool hta_compatible);
// HTA's merge_kernel_intervals: sort by start; a new group begins when a start
// exceeds the largest end so far; each group is (min start, max end).
std::vector<Interval> merge_intervals(std::vector<Interval> v);
// The same merge over intervals already in that (stable) order, one at a
// time, without a copy: the total length of the groups, the first start and
// the last group's end; the groups themselves only when `keep` is given.
class GroupMerger {
public:
    explicit GroupMerger(std::vector<Interval>* keep = nullptr) : keep_(keep) {}
    void add(const Interval& k) {
        if (!any_) {
            cur_ = k;
            max_end_ = k.end;
            first_start_ = k.start;
            any_ = true;
        } else if (k.start > max_end_) {
            close();
            cur_ = k;
        } else {
            cur_.start = std::min(cur_.start, k.start);
            cur_.end = std::max(cur_.end, k.end);
        }
        max_end_ = std::max(max_end_, k.end);
    }
    // Ends the last group; call once, after the last add.
    void finish() { if (any_) close(); }
    bool any() const { return any_; }
    double total() const { return total_; }
    double span() const { return last_end_ - first_start_; }

private:
    void close() {
        total_ += cur_.end - cur_.start;
        last_end_ = cur_.end;
        if (keep_) keep_->push_back(cur_);
    }
    std::vector<Interval>* keep_;
    Interval cur_;
    double max_end_ = 0, first_start_ = 0, last_end_ = 0, total_ = 0;
    bool any_ = false;
};
double total_length(const std::vector<Interval>& merged);
// Time covered by both merged lists (HTA's running-sum sweep: +1/-1 for a,
// +2/-2 for b, summing the stretches where the sum is 3).
double overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace lostflops::trace::detail
