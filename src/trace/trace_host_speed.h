// The host's own speed in a trace (RankReport::host_speed): the median, over
// operators that launch and allocate nothing, of each one's median CPU time
// against the calibration trace's, thread by thread (scripts/host_speed.py
// does the same step by step). Internal to src/trace.
#pragma once

#include <string_view>
#include <vector>

#include "lostflops/trace.h"
#include "lostflops/trace_read.h"
#include "trace/trace_event.h"
#include "trace/trace_internal.h"

namespace lostflops::trace::detail {

// Keeps the CPU time of a complete cpu_op event (`f`, `dur` microseconds) of
// one of the operators measured (as_strided, view, t, transpose, reshape,
// detach) in out.host_op_us, at most kHostOpSamplesMax per operator and
// thread: past them every other one kept is dropped and the stride doubles,
// so the samples stay spread over the whole trace (calls 0, s, 2s, ...).
void keep_host_op(const EventFields& f, double dur, TraceData& out, KeepState& st);

// The host's speed relative to the calibration trace's (> 1: slower): the
// median of the ratios median(trace) / median(reference) over the
// (thread, operator) pairs with at least kHostOpSamplesMin calls; 0 when none
// has.
double host_speed(const TraceData& d);

// The same for each CPU-side ProfilerStep window, in time order, the Python
// thread's operators and the others' apart: each step's median over the
// operators with at least kHostOpSamplesMin calls in it (so two steps may
// be read off different operators); 0 for a thread none of whose operators
// has that many.
std::vector<StepHostSpeed> step_host_speeds(const TraceData& d);

}  // namespace lostflops::trace::detail
