// The host's own speed in a trace (trace_host_speed.h). The same operator
// costs the host the same work in every run of a recipe; operators that
// launch nothing and allocate nothing (aten::as_strided, view, t,
// transpose, reshape, detach) measure the CPU alone. For each thread (the
// Python thread, pid == tid, runs the forward and the optimizer; the
// autograd engine's the backward) and operator, the median CPU time over
// the trace divided by the same operator's on the same thread of the
// calibration trace's step; the speed is the median of those ratios. Step
// by step, the same over each profiled step's window, thread by thread:
// the host's speed changes from step to step (the 1B FSDP2 trace's Python
// thread ran 1.49 then 0.95 times the reference's, its autograd thread 1.00
// then 1.48: scripts/host_speed.py).
// Reference: ../shared/traces/h200/h200-qwen05-like-s2048-b1-autocast.json.gz,
// ProfilerStep#2, the step the calibration's per-operator host costs
// (hf_host_op_us and its kin, data/calibration/default.yaml) come from; its
// medians as `scripts/host_speed.py` reads them (microseconds; 169 to 1,013
// calls each; the Python thread runs no detach there).
#include "trace/trace_host_speed.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <vector>

namespace lostflops::trace::detail {

namespace {

constexpr std::array<std::string_view, kHostOps> kOps = {"aten::as_strided", "aten::view", "aten::t",
                                                         "aten::transpose", "aten::reshape", "aten::detach"};
// [thread][operator]: 0 = the Python thread, 1 = the others; 0: none.
constexpr double kReferenceUs[2][kHostOps] = {{0.711, 2.925, 5.362, 2.627, 3.8015, 0},
                                              {0.427, 1.234, 2.661, 1.2985, 2.083, 1.4375}};

// The middle value, or the mean of the two middle ones (Python's
// statistics.median); `v` not empty.
template <class T>
double median(std::vector<T> v) {
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    double m = *mid;
    if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), mid)) / 2;
    return m;
}

}  // namespace

void keep_host_op(const EventFields& f, double dur, TraceData& out, KeepState& st) {
    if (!(dur >= 0 && dur <= kMaxEventDurUs)) return;
    const auto it = std::find(kOps.begin(), kOps.end(), f.name);
    if (it == kOps.end()) return;
    const int thread = f.pid >= 0 && f.pid == f.tid ? 0 : 1;
    const auto i = static_cast<size_t>(thread * kHostOps + (it - kOps.begin()));
    std::vector<float>& v = out.host_op_us[i];
    std::vector<double>& ts = out.host_op_ts_us[i];
    uint64_t& stride = st.host_op_stride[i];
    stride = std::max<uint64_t>(stride, 1);
    const uint64_t call = st.host_op_seen[i]++;
    if (call % stride != 0) return;
    if (v.size() >= kHostOpSamplesMax) {  // keep calls 0, 2s, 4s, ...
        size_t w = 0;
        for (size_t r = 0; r < v.size(); r += 2, ++w) {
            v[w] = v[r];
            ts[w] = ts[r];
        }
        v.resize(w);
        ts.resize(w);
        stride *= 2;
        if (call % stride != 0) return;
    }
    v.push_back(static_cast<float>(dur));
    ts.push_back(f.ts);
}

namespace {

// The median ratio over the operators of `threads` with at least
// kHostOpSamplesMin samples starting in [from_us, to_us); 0 when none has.
double speed_of(const TraceData& d, std::initializer_list<int> threads, double from_us, double to_us) {
    std::vector<double> ratios;
    std::vector<float> in;
    for (const int thread : threads)
        for (int op = 0; op < kHostOps; ++op) {
            const auto i = static_cast<size_t>(thread * kHostOps + op);
            const std::vector<float>& v = d.host_op_us[i];
            const std::vector<double>& ts = d.host_op_ts_us[i];
            const double ref = kReferenceUs[thread][op];
            if (!(ref > 0)) continue;
            in.clear();
            for (size_t k = 0; k < v.size() && k < ts.size(); ++k)
                if (ts[k] >= from_us && ts[k] < to_us) in.push_back(v[k]);
            if (in.size() >= kHostOpSamplesMin) ratios.push_back(median(in) / ref);
        }
    return ratios.empty() ? 0.0 : median(std::move(ratios));
}

constexpr double kAllTime = std::numeric_limits<double>::infinity();

}  // namespace

double host_speed(const TraceData& d) { return speed_of(d, {0, 1}, -kAllTime, kAllTime); }

std::vector<StepHostSpeed> step_host_speeds(const TraceData& d) {
    // The CPU-side step marks in time order (the file may hold them in any).
    std::vector<const StepMark*> marks;
    for (const StepMark& s : d.steps)
        if (s.on_cpu) marks.push_back(&s);
    std::sort(marks.begin(), marks.end(), [](const StepMark* a, const StepMark* b) { return a->ts_us < b->ts_us; });
    std::vector<StepHostSpeed> out;
    for (const StepMark* s : marks) {
        const double end = s->ts_us + s->dur_us;
        out.push_back({speed_of(d, {0}, s->ts_us, end), speed_of(d, {1}, s->ts_us, end)});
    }
    return out;
}

}  // namespace lostflops::trace::detail
