// Internals shared by the trace reader, the analysis and the tests: what is
// kept of each event, kernel-name rules, and HTA's interval arithmetic.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lostflops/trace.h"
#include "trace/trace_event.h"

namespace lostflops::trace::detail {

// Reader-side state while events stream by.
struct KeepState {
    std::deque<std::string> names;  // stable storage for the interning map's keys
    std::unordered_map<std::string_view, uint32_t> name_ids;
    std::unordered_map<int64_t, double> cpu_launch_min_ts;
    std::set<std::string> step_names;
    double cpu_min_ts = std::numeric_limits<double>::infinity();
};

// Applies HTA's row rules (rows need "cat" and "dur"; cat "Trace" and
// "gpu_user_annotation" dropped; "[memory]" instant events get dur 0) and
// keeps what the analysis needs.
void keep_event(const EventFields& f, TraceData& out, KeepState& st);
void finish_trace(TraceData& out, KeepState& st);

// "ProfilerStep#N" (HTA: ^ProfilerStep#(\d+)); sets n.
bool is_profiler_step(std::string_view name, int64_t& n);

struct Interval {
    double start = 0;
    double end = 0;
};
// HTA's merge_kernel_intervals: sort by start; a new group begins when a start
// exceeds the largest end so far; each group is (min start, max end).
std::vector<Interval> merge_intervals(std::vector<Interval> v);
double total_length(const std::vector<Interval>& merged);
// Time covered by both merged lists (HTA's running-sum sweep: +1/-1 for a,
// +2/-2 for b, summing the stretches where the sum is 3).
double overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace lostflops::trace::detail
