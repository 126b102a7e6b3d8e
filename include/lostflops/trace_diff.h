// Two traces (two runs, or two ranks) compared kernel by kernel and by
// category: which got slower or faster, by how much of the step, which are
// new or vanished — the question after every change.
//
// Kernels are those the convention analyses (trace.h; `hta_compatible` as in
// AnalyzeOptions), grouped by name. Times are per step: the sum of the
// kernels' durations divided by the trace's steps (its CPU ProfilerStep
// annotations, less the dropped last one in HTA-compatible mode; 1 without
// annotations). A kernel in both traces is "slower" when its mean duration per
// call rose by more than `threshold_pct` and its time per step rose too,
// "faster" when both fell; "more calls" or "fewer calls" when its calls per
// step changed and its mean or its time per step moved beyond the threshold
// otherwise (more calls of a shorter kernel, fewer of a longer one: never
// "slower" with less time); else "same". One in only B is "new", in only A
// "vanished". step_share_pct = (time_b - time_a)
// per step / A's step time (mean ProfilerStep duration, else the kernel
// span), in percent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lostflops/trace.h"

namespace lostflops::trace {

enum class Change { same, slower, faster, added, vanished, more_calls, fewer_calls };
// "same", "slower", "faster", "new", "vanished", "more calls", "fewer calls"
const char* to_string(Change c);

struct KernelDiff {
    std::string name;       // kernel name, or category name ("gemm", "comm:all_reduce", ...)
    std::string category;   // the kernel's category (for a category: itself)
    double count_a = 0, count_b = 0;       // calls per step
    double time_a_us = 0, time_b_us = 0;   // sum of durations per step
    double mean_a_us = 0, mean_b_us = 0;   // mean duration per call (0 when absent)
    double delta_us = 0;                   // time_b_us - time_a_us
    double mean_change_pct = 0;            // (mean_b / mean_a - 1) * 100, 0 unless in both
    double step_share_pct = 0;             // delta_us / step_a_us * 100
    Change change = Change::same;
};

struct TraceDiff {
    std::string source_a, source_b;
    double steps_a = 1, steps_b = 1;
    double step_a_us = 0, step_b_us = 0;   // mean ProfilerStep duration, else kernel span
    double threshold_pct = 0;
    // Changed kernels first, by |delta_us| (largest first), then the rest by name.
    std::vector<KernelDiff> kernels;
    std::vector<KernelDiff> categories;    // same order
    std::vector<std::string> warnings;     // "SOURCE: duplicate-events: ..." of either trace
};

struct DiffOptions {
    bool hta_compatible = false;
    double threshold_pct = 5.0;  // a mean duration change below this is noise ("same")
};

// Throws InputError (naming the trace) when a trace has no kernels.
TraceDiff diff_traces(const TraceData& a, const TraceData& b, const DiffOptions& opts = {});

// Renderings: JSON {"a", "b", "steps_a", ..., "kernels": [...], "categories": [...]};
// text: the categories and the changed kernels (at most `max_rows`).
std::string diff_json(const TraceDiff& d);
std::string diff_table(const TraceDiff& d, std::size_t max_rows = 40);

}  // namespace lostflops::trace
