// What the reader keeps of each event, following HTA's parser
// (hta/common/trace_parser.py _compress_df and trace.py): rows without "cat"
// or "dur" are dropped, as are cat "Trace" and GPU user annotations
// (ParserConfig.drop_gpu_user_annotation); "[memory]" instant events get a
// zero duration; args.stream defaults to -1 and non-integers become -1
// (normalize_gpu_stream_numbers). Rows with stream -1 are CPU rows: for them
// only the earliest start per correlation id is kept (HTA keeps a GPU kernel
// when some CPU row with its correlation starts before the last ProfilerStep).
#include <algorithm>
#include <charconv>

#include "trace/trace_internal.h"

namespace lostflops::trace::detail {
namespace {

EventKind kind_of(std::string_view cat) {
    if (cat == "kernel") return EventKind::kernel;
    if (cat == "gpu_memcpy") return EventKind::gpu_memcpy;
    if (cat == "gpu_memset") return EventKind::gpu_memset;
    if (cat == "cuda_sync") return EventKind::cuda_sync;
    return EventKind::other;
}

uint32_t intern(std::string_view s, TraceData& out, KeepState& st) {
    if (s.empty()) return 0;
    const auto it = st.name_ids.find(s);
    if (it != st.name_ids.end()) return it->second;
    st.names.emplace_back(s);
    const auto id = static_cast<uint32_t>(st.names.size());  // 0 is ""
    st.name_ids.emplace(std::string_view(st.names.back()), id);
    (void)out;
    return id;
}

}  // namespace

bool is_profiler_step(std::string_view name, int64_t& n) {
    constexpr std::string_view prefix = "ProfilerStep#";
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return false;
    const char* p = name.data() + prefix.size();
    const char* e = name.data() + name.size();
    const char* q = p;
    while (q < e && *q >= '0' && *q <= '9') ++q;
    if (q == p) return false;
    n = 0;
    const auto r = std::from_chars(p, q, n);
    if (r.ec != std::errc()) n = std::numeric_limits<int64_t>::max();
    return true;
}

void keep_event(const EventFields& f, TraceData& out, KeepState& st) {
    if (!f.has_cat) return;
    const bool memory_instant =
        f.ph == "i" && f.name == "[memory]" && f.cat == "cpu_instant_event";
    if (!f.has_dur && !memory_instant) return;
    if (f.cat == "Trace" || f.cat == "gpu_user_annotation") return;
    if (!f.has_ts) return;
    const double dur = memory_instant ? 0.0 : f.dur;
    const EventKind kind = kind_of(f.cat);
    const bool cpu_row = f.stream == -1;

    int64_t step = 0;
    if (is_profiler_step(f.name, step)) {
        if (st.step_names.size() < 100000) st.step_names.emplace(f.name);
        out.steps.push_back(StepMark{step, f.ts, dur, cpu_row});
    }
    if (cpu_row) {
        out.has_cpu_events = true;
        st.cpu_min_ts = std::min(st.cpu_min_ts, f.ts);
        const auto [it, inserted] = st.cpu_launch_min_ts.try_emplace(f.correlation, f.ts);
        if (!inserted && f.ts < it->second) it->second = f.ts;
    }
    if (cpu_row && kind == EventKind::other) return;
    GpuEvent g;
    g.ts_us = f.ts;
    g.dur_us = dur;
    g.correlation = f.correlation;
    g.stream = f.stream;
    g.has_stream = f.has_stream;
    g.kind = kind;
    g.name_id = intern(f.name, out, st);
    g.collective_id = intern(f.collective, out, st);
    out.gpu.push_back(g);
}

void finish_trace(TraceData& out, KeepState& st) {
    out.names.reserve(st.names.size() + 1);
    for (auto& s : st.names) out.names.push_back(std::move(s));
    st.name_ids.clear();
    st.names.clear();
    out.cpu_launches.reserve(st.cpu_launch_min_ts.size());
    for (const auto& [corr, ts] : st.cpu_launch_min_ts) out.cpu_launches.push_back({corr, ts});
    std::sort(out.cpu_launches.begin(), out.cpu_launches.end(),
              [](const CpuLaunch& a, const CpuLaunch& b) { return a.correlation < b.correlation; });
    out.step_names.assign(st.step_names.begin(), st.step_names.end());
    out.cpu_min_ts_us = out.has_cpu_events ? st.cpu_min_ts : 0.0;
}

}  // namespace lostflops::trace::detail
