// What the reader keeps of each event, following HTA's parser
// (hta/common/trace_parser.py _compress_df and trace.py): rows without "cat"
// or "dur" are dropped, as are cat "Trace" and GPU user annotations
// (ParserConfig.drop_gpu_user_annotation); "[memory]" instant events get a
// zero duration; args.stream defaults to -1 and non-integers become -1
// (normalize_gpu_stream_numbers). Rows with stream -1 are CPU rows: for them
// only the earliest start per correlation id is kept (HTA keeps a GPU kernel
// when some CPU row with its correlation starts before the last ProfilerStep).
// GPU events and step marks with implausible times are skipped and counted
// (rules in include/lostflops/trace_read.h); the median start for the "far from
// the median" rule is taken from an evenly strided sample (at most 2^20
// starts) so that the check needs no copy of every event.
#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "trace/trace_host_speed.h"
#include "trace/trace_internal.h"

namespace lostflops::trace {

const char* to_string(SkipReason r) {
    switch (r) {
        case SkipReason::ts_not_number: return "ts not a number";
        case SkipReason::ts_out_of_range: return "ts out of range";
        case SkipReason::dur_not_number: return "dur not a number";
        case SkipReason::dur_negative: return "dur negative";
        case SkipReason::dur_too_long: return "dur over one hour";
        case SkipReason::ts_far_from_median: return "ts over a day from the median";
    }
    return "?";
}

uint64_t SkippedEvents::total() const {
    uint64_t n = 0;
    for (auto c : count) n += c;
    return n;
}

std::string SkippedEvents::describe() const {
    std::string out;
    for (std::size_t i = 0; i < kSkipReasons; ++i) {
        if (count[i] == 0) continue;
        if (!out.empty()) out += ", ";
        out += std::string(to_string(static_cast<SkipReason>(i))) + " (" + std::to_string(count[i]) + ")";
    }
    return out;
}

namespace detail {
namespace {

constexpr std::size_t kMedianSample = 1u << 20;

EventKind kind_of(std::string_view cat) {
    if (cat == "kernel") return EventKind::kernel;
    if (cat == "gpu_memcpy") return EventKind::gpu_memcpy;
    if (cat == "gpu_memset") return EventKind::gpu_memset;
    if (cat == "cuda_sync") return EventKind::cuda_sync;
    return EventKind::other;
}

void count_kept(TraceData& out, KeepState& st) {
    if (++st.kept > kMaxTraceKeptEvents) {
        throw InputError(out.source, "traceEvents",
                         "more than " + std::to_string(kMaxTraceKeptEvents) +
                             " GPU events, step marks and CPU launches to keep (the reader's limit)");
    }
}

uint32_t intern(std::string_view s, TraceData& out, KeepState& st) {
    if (s.empty()) return 0;
    const auto it = st.name_ids.find(s);
    if (it != st.name_ids.end()) return it->second;
    st.name_bytes += s.size();
    if (st.name_bytes > kMaxTraceNameBytes) {
        throw InputError(out.source, "traceEvents",
                         "distinct kernel names exceed " + std::to_string(kMaxTraceNameBytes >> 20) +
                             " MiB (the reader's limit)");
    }
    st.names.emplace_back(s);
    const auto id = static_cast<uint32_t>(st.names.size());  // 0 is ""
    st.name_ids.emplace(std::string_view(st.names.back()), id);
    return id;
}

uint32_t group_of(const EventFields& f, TraceData& out, KeepState& st) {
    if (f.pg_name.empty() && f.pg_ranks.empty()) return 0;
    std::string key;
    key.reserve(f.pg_name.size() + f.pg_desc.size() + f.pg_ranks.size() + 2);
    key.append(f.pg_name).append(1, '\x1f').append(f.pg_desc).append(1, '\x1f').append(f.pg_ranks);
    const auto [it, inserted] = st.group_ids.try_emplace(std::move(key), static_cast<uint32_t>(out.groups.size()));
    if (inserted) {
        if (out.groups.size() > kMaxProcessGroups) {
            throw InputError(out.source, "traceEvents",
                             "more than " + std::to_string(kMaxProcessGroups) +
                                 " distinct process groups on NCCL kernels (the reader's limit)");
        }
        out.groups.push_back(ProcessGroup{std::string(f.pg_name), std::string(f.pg_desc), std::string(f.pg_ranks)});
    }
    return it->second;
}

uint32_t label_of(const EventFields& f, EventKind kind, TraceData& out, KeepState& st) {
    const uint32_t name = intern(f.name, out, st);
    const uint32_t coll = intern(f.collective, out, st);
    const uint32_t group = group_of(f, out, st);
    const auto sit = st.stream_ids.try_emplace(f.stream, static_cast<uint32_t>(st.stream_ids.size())).first;
    if (sit->second >= (1u << 20)) {
        throw InputError(out.source, "traceEvents", "more than 2^20 distinct streams (the reader's limit)");
    }
    if (f.pid != st.last_pid || st.pid_ids.empty()) {  // a trace's GPU events mostly share one pid
        const auto pit = st.pid_ids.try_emplace(f.pid, static_cast<uint32_t>(st.pid_ids.size())).first;
        if (pit->second >= (1u << 19)) {
            throw InputError(out.source, "traceEvents",
                             "more than 2^19 distinct pids on GPU events (the reader's limit)");
        }
        st.last_pid = f.pid;
        st.last_pid_index = pit->second;
    }
    // Bits: pid index 45..63, group 32..44 (kMaxProcessGroups = 2^12), stream index 8..27, kind, has_stream.
    const LabelKey key{(static_cast<uint64_t>(name) << 32) | coll,
                       (static_cast<uint64_t>(st.last_pid_index) << 45) | (static_cast<uint64_t>(group) << 32) |
                           (static_cast<uint64_t>(sit->second) << 8) | (static_cast<uint64_t>(kind) << 1) |
                           (f.has_stream ? 1u : 0u)};
    const auto [it, inserted] = st.label_ids.try_emplace(key, static_cast<uint32_t>(out.labels.size()));
    if (inserted) {
        if (out.labels.size() >= kMaxTraceLabels) {
            throw InputError(out.source, "traceEvents",
                             "more than " + std::to_string(kMaxTraceLabels) +
                                 " distinct (name, stream, collective) labels (the reader's limit)");
        }
        out.labels.push_back(GpuLabel{name, coll, f.stream, kind, f.has_stream, group, f.pid});
    }
    return it->second;
}

// The earliest row per correlation key, sorted by key.
void reduce_launches(std::vector<CpuLaunch>& v) {
    std::sort(v.begin(), v.end(), [](const CpuLaunch& a, const CpuLaunch& b) {
        return a.correlation != b.correlation ? a.correlation < b.correlation : a.ts_us < b.ts_us;
    });
    v.erase(std::unique(v.begin(), v.end(),
                        [](const CpuLaunch& a, const CpuLaunch& b) { return a.correlation == b.correlation; }),
            v.end());
}

bool whole_in(double x, double lo, double hi) { return x >= lo && x <= hi && x == std::floor(x); }

// An NCCL kernel's recorded sizes (trace_read.h: whole numbers, at most
// kMaxCommBytes, a group of 1 to kMaxRank + 1 ranks; -1, as PyTorch writes
// it, or an absent key = not recorded).
void keep_size(const EventFields& f, double elem_bytes, uint32_t correlation, TraceData& out, KeepState& st) {
    const double in = f.in_nelems, o = f.out_nelems, g = f.group_size;
    const char* bad = nullptr;
    double value = 0;
    const auto size_ok = [&](double n) { return n == -1 || (whole_in(n, 0, kMaxCommBytes) && n * elem_bytes <= kMaxCommBytes); };
    if (!size_ok(in)) bad = "In msg nelems", value = in;
    else if (!size_ok(o)) bad = "Out msg nelems", value = o;
    else if (g != -1 && !whole_in(g, 1, kMaxRank + 1.0)) bad = "Group size", value = g;
    if (bad != nullptr) {
        if (st.bad_sizes++ == 0) st.first_bad_size = fmt::format("{} = {:g}", bad, value);
        return;
    }
    out.comm_sizes.push_back(CommSize{correlation, static_cast<uint32_t>(std::max(g, 0.0)), std::max(in, 0.0) * elem_bytes,
                                      std::max(o, 0.0) * elem_bytes});
}

// Why a GPU event or step mark is implausible, or nothing.
bool implausible(const EventFields& f, double dur, bool memory_instant, SkipReason& why) {
    if (!f.has_ts) { why = SkipReason::ts_not_number; return true; }
    if (std::fabs(f.ts) > kMaxAbsTsUs) { why = SkipReason::ts_out_of_range; return true; }
    if (!f.has_dur && !memory_instant) { why = SkipReason::dur_not_number; return true; }
    if (dur < 0) { why = SkipReason::dur_negative; return true; }
    if (dur > kMaxEventDurUs) { why = SkipReason::dur_too_long; return true; }
    return false;
}

}  // namespace

uint32_t correlation_key(int64_t c, KeepState& st) {
    if (c == -1) return kNoCorrelation;
    if (c >= 0 && c < (int64_t{1} << 31)) return static_cast<uint32_t>(c);
    const auto [it, inserted] =
        st.odd_correlations.try_emplace(c, static_cast<uint32_t>((1u << 31) + st.odd_correlations.size()));
    return it->second;  // bounded by the kept-event limit, far below 2^31 - 1
}

constexpr std::string_view kProfilerStep = "ProfilerStep#";

bool is_profiler_step(std::string_view name, int64_t& n) {
    constexpr std::string_view prefix = kProfilerStep;
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
    if (f.cat == "Trace" || f.cat == "gpu_user_annotation") return;
    const bool memory_instant =
        f.ph == "i" && f.name == "[memory]" && f.cat == "cpu_instant_event";
    if (memory_instant) st.memory.add(f);
    keep_stack_marker(f, out);
    const EventKind kind = kind_of(f.cat);
    const bool cpu_row = f.stream == -1;
    const bool gpu_event = !cpu_row || kind != EventKind::other;
    int64_t step = 0;
    const bool step_mark = is_profiler_step(f.name, step);
    if (!step_mark && f.name.starts_with(kProfilerStep) && st.unnumbered_steps++ == 0)
        st.first_unnumbered_step = std::string(f.name.substr(0, 64));
    const double dur = memory_instant ? 0.0 : f.dur;
    if (gpu_event || step_mark) {
        SkipReason why{};
        if (implausible(f, dur, memory_instant, why)) {
            ++out.skipped.count[static_cast<std::size_t>(why)];
            return;
        }
    } else if (!f.has_ts || (!f.has_dur && !memory_instant)) {
        return;  // HTA drops rows without "dur"; CPU rows without a time say nothing
    }
    if (cpu_row && f.ph == "X") {
        if (f.cat == "cpu_op" || f.cat == "cuda_runtime" || f.cat == "cuda_driver") {
            ++out.host_events;
            if (f.cat == "cpu_op") keep_host_op(f, dur, out, st);
        } else if (f.cat == "overhead" && (f.name == "Activity Buffer Request" || f.name == "Buffer Flush") &&
                   dur >= 0 && dur <= kMaxEventDurUs) {
            // CUPTI's own buffer handling; not "Command Buffer Full", the
            // host blocked in a launch by a full GPU queue (a GPU-bound step).
            out.profiler_overhead_us += dur;
        }
    }
    if (step_mark) {
        if (st.step_names.size() < 100000) st.step_names.emplace(f.name);
        count_kept(out, st);
        out.steps.push_back(StepMark{step, f.ts, dur, cpu_row, f.pid});
    }
    if (cpu_row) {
        out.has_cpu_events = true;
        st.cpu_min_ts = std::min(st.cpu_min_ts, f.ts);
        count_kept(out, st);
        const uint32_t key = correlation_key(f.correlation, st);
        if (key == kNoCorrelation) {
            // Rows without a correlation share one key: only the earliest is kept.
            st.no_correlation_ts = std::min(st.no_correlation_ts, f.ts);
        } else if (st.cpu_launches.empty() || st.cpu_launches.back().correlation != key ||
                   st.cpu_launches.back().ts_us != f.ts) {  // a row right after its twin says nothing new
            st.cpu_launches.push_back(CpuLaunch{key, static_cast<float>(dur), f.ts});
            // Only the earliest row per correlation is kept in the end: reduce
            // as rows pile up, so repeated rows cannot grow memory.
            if (st.cpu_launches.size() >= 2 * st.launches_reduced + (1u << 20)) {
                reduce_launches(st.cpu_launches);
                st.launches_reduced = st.cpu_launches.size();
            }
        }
    }
    if (!gpu_event) return;
    GpuEvent g;
    g.ts_us = f.ts;
    g.dur_us = dur;
    g.correlation = correlation_key(f.correlation, st);
    g.label = label_of(f, kind, out, st);
    // The same event as the last one of its label (twice in a row, or
    // interleaved with others): kept once, so repeats cannot grow memory.
    if (g.label < st.last_of_label.size()) {
        const GpuEvent& last = st.last_of_label[g.label];
        if (last.ts_us == g.ts_us && last.dur_us == g.dur_us && last.correlation == g.correlation) {
            ++out.duplicates;
            return;
        }
        st.last_of_label[g.label] = g;
    } else {
        st.last_of_label.push_back(g);  // labels are numbered in order of appearance
    }
    count_kept(out, st);
    out.gpu.push_back(g);
    if ((f.in_nelems != -1 || f.out_nelems != -1) && g.correlation != kNoCorrelation) {
        const double size = dtype_bytes(f.dtype);
        if (size > 0) keep_size(f, size, g.correlation, out, st);
        else if (st.unknown_dtypes++ == 0) st.first_unknown_dtype = std::string(f.dtype.substr(0, 64));
    }
}

namespace {

// Identical steps kept once (by start, then number), then CPU steps in start
// order must not overlap (trace_read.h); with ranks_by_pid, each pid's apart.
void check_steps(TraceData& out) {
    auto& v = out.steps;
    const bool by_pid = out.ranks_by_pid;
    const auto rank_of = [by_pid](const StepMark& m) { return by_pid ? m.pid : int64_t{0}; };
    std::stable_sort(v.begin(), v.end(), [&](const StepMark& a, const StepMark& b) {
        return rank_of(a) != rank_of(b) ? rank_of(a) < rank_of(b) : a.ts_us < b.ts_us;
    });
    const auto same = [&](const StepMark& a, const StepMark& b) {
        return a.number == b.number && a.ts_us == b.ts_us && a.dur_us == b.dur_us && a.on_cpu == b.on_cpu &&
               rank_of(a) == rank_of(b);
    };
    const std::size_t before = v.size();
    v.erase(std::unique(v.begin(), v.end(), same), v.end());
    out.duplicates += before - v.size();
    const StepMark* prev = nullptr;
    for (const StepMark& m : v) {
        if (!m.on_cpu) continue;
        if (prev != nullptr && rank_of(*prev) != rank_of(m)) prev = nullptr;
        if (prev != nullptr && m.ts_us < prev->ts_us + prev->dur_us - kStepOverlapToleranceUs) {
            throw InputError(out.source, "traceEvents: ProfilerStep#" + std::to_string(m.number),
                             fmt::format("starts at {:.3f} us, {:.3f} us before ProfilerStep#{} (from {:.3f} us) "
                                         "ends: a trace's profiler steps follow each other (was it put together "
                                         "from several traces?)",
                                         m.ts_us, prev->ts_us + prev->dur_us - m.ts_us, prev->number, prev->ts_us));
        }
        prev = &m;
    }
}

// Drops GPU events and step marks whose start is over a day from the median
// GPU start (median of an evenly strided sample).
void skip_far_from_median(TraceData& out) {
    if (out.gpu.empty()) return;
    const std::size_t n = out.gpu.size();
    const std::size_t stride = (n + kMedianSample - 1) / kMedianSample;
    std::vector<double> sample;
    sample.reserve(n / stride + 1);
    for (std::size_t i = 0; i < n; i += stride) sample.push_back(out.gpu[i].ts_us);
    auto mid = sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2);
    std::nth_element(sample.begin(), mid, sample.end());
    const double median = *mid;
    const auto far = [&](double ts) { return std::fabs(ts - median) > kMaxTsFromMedianUs; };
    uint64_t dropped = 0;
    const auto gpu_end = std::remove_if(out.gpu.begin(), out.gpu.end(), [&](const GpuEvent& g) {
        const bool f = far(g.ts_us);
        dropped += f ? 1 : 0;
        return f;
    });
    out.gpu.erase(gpu_end, out.gpu.end());
    const auto step_end = std::remove_if(out.steps.begin(), out.steps.end(), [&](const StepMark& s) {
        const bool f = far(s.ts_us);
        dropped += f ? 1 : 0;
        return f;
    });
    out.steps.erase(step_end, out.steps.end());
    out.skipped.count[static_cast<std::size_t>(SkipReason::ts_far_from_median)] += dropped;
}

}  // namespace

void finish_trace(TraceData& out, KeepState& st) {
    out.names.reserve(st.names.size() + 1);
    for (auto& s : st.names) out.names.push_back(std::move(s));
    st.name_ids.clear();
    st.names.clear();
    st.label_ids.clear();
    // Earliest start per correlation key, sorted by key.
    auto& v = st.cpu_launches;
    if (st.no_correlation_ts < std::numeric_limits<double>::infinity()) {
        v.push_back(CpuLaunch{kNoCorrelation, 0.0f, st.no_correlation_ts});
    }
    reduce_launches(v);
    v.shrink_to_fit();
    out.cpu_launches = std::move(v);
    out.step_names.assign(st.step_names.begin(), st.step_names.end());
    std::stable_sort(out.comm_sizes.begin(), out.comm_sizes.end(),
                     [](const CommSize& a, const CommSize& b) { return a.correlation < b.correlation; });
    out.comm_sizes.shrink_to_fit();
    out.cpu_min_ts_us = out.has_cpu_events ? st.cpu_min_ts : 0.0;
    out.memory = st.memory.finish(out.warnings);
    skip_far_from_median(out);
    check_steps(out);
    out.gpu.shrink_to_fit();
    if (out.skipped.total() > 0) {
        out.warnings.push_back("skipped-events: skipped " + std::to_string(out.skipped.total()) +
                               " implausible events: " + out.skipped.describe());
    }
    if (st.bad_sizes > 0) {
        out.warnings.push_back(fmt::format("comm-sizes: the recorded sizes of {} NCCL kernels are out of range "
                                           "and not used (first: {}; expected whole numbers, at most 1 TiB, a "
                                           "group of 1 to {} ranks)",
                                           st.bad_sizes, st.first_bad_size, kMaxRank + 1));
    }
    // Their time is kept in the communication wall; only their bandwidth is
    // not measured.
    if (st.unknown_dtypes > 0) {
        out.warnings.push_back(fmt::format("comm-sizes: {} NCCL kernels record their sizes in a dtype lostflops does "
                                           "not know (first: '{}'): their bytes, and so their bandwidth, are not "
                                           "used; their time is",
                                           st.unknown_dtypes, st.first_unknown_dtype));
    }
    // "ProfilerStep#abc" (a renamed or hand-made annotation) is no step: said,
    // where it vanished from step_ms without a word.
    if (st.unnumbered_steps > 0) {
        out.warnings.push_back(fmt::format("steps: {} events named 'ProfilerStep#' without a step number (first: "
                                           "'{}') are not read as steps",
                                           st.unnumbered_steps, st.first_unnumbered_step));
    }
}

}  // namespace detail
}  // namespace lostflops::trace
