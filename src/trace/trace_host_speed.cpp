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
#include <utility>
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

double host_speed(const TraceData& d) {
    std::vector<double> ratios;
    for (int thread = 0; thread < 2; ++thread)
        for (int op = 0; op < kHostOps; ++op) {
            const std::vector<float>& v = d.host_op_us[static_cast<size_t>(thread * kHostOps + op)];
            const double ref = kReferenceUs[thread][op];
            if (ref > 0 && v.size() >= kHostOpSamplesMin) ratios.push_back(median(v) / ref);
        }
    return ratios.empty() ? 0.0 : median(std::move(ratios));
}

std::vector<StepHostSpeed> step_host_speeds(const TraceData& d) {
    // The CPU-side steps in time order (the file may hold them in any), as
    // [start, end) microseconds.
    std::vector<std::pair<double, double>> steps;
    for (const StepMark& s : d.steps)
        if (s.on_cpu) steps.emplace_back(s.ts_us, s.ts_us + s.dur_us);
    std::sort(steps.begin(), steps.end());
    // Each sample goes to the last step that starts at or before it, when it
    // starts before that step's end: one pass over the samples, however many
    // steps (O(samples x log steps)).
    std::vector<std::array<std::vector<double>, 2>> ratios(steps.size());  // [step][thread]
    std::vector<std::vector<float>> in(steps.size());
    for (int thread = 0; thread < 2; ++thread)
        for (int op = 0; op < kHostOps; ++op) {
            const auto i = static_cast<size_t>(thread * kHostOps + op);
            const std::vector<float>& v = d.host_op_us[i];
            const std::vector<double>& ts = d.host_op_ts_us[i];
            const double ref = kReferenceUs[thread][op];
            if (!(ref > 0) || v.size() < kHostOpSamplesMin) continue;
            for (auto& b : in) b.clear();
            for (size_t k = 0; k < v.size() && k < ts.size(); ++k) {
                const auto after = std::upper_bound(steps.begin(), steps.end(), ts[k],
                                                    [](double t, const std::pair<double, double>& s) { return t < s.first; });
                if (after == steps.begin()) continue;
                const auto step = static_cast<size_t>(after - steps.begin()) - 1;
                if (ts[k] < steps[step].second) in[step].push_back(v[k]);
            }
            for (size_t s = 0; s < steps.size(); ++s)
                if (in[s].size() >= kHostOpSamplesMin)
                    ratios[s][static_cast<size_t>(thread)].push_back(median(in[s]) / ref);
        }
    std::vector<StepHostSpeed> out;
    out.reserve(steps.size());
    for (auto& r : ratios)
        out.push_back({r[0].empty() ? 0.0 : median(std::move(r[0])), r[1].empty() ? 0.0 : median(std::move(r[1]))});
    return out;
}

}  // namespace lostflops::trace::detail
