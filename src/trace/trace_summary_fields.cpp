// A summary's rank object to a RankReport (contract in trace_summary_fields.h;
// keys and bounds in docs/trace-summary-format.md). Version 1 objects lack the
// keys version 2 added (host, gpus_per_node, steps_total, top_kernels,
// process_groups, and per iteration matmul_us, exposed_comm_us,
// exposed_memory_us, group_comm_start_us) and the first version 1 writers
// also iterations, idle_breakdown, launch_stats and collectives: absent, each
// of those is empty (so the object does not depend on "version", which JSON
// tools may write after "ranks").
#include "trace/trace_summary_fields.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"

namespace lostflops::trace::detail {
namespace {

using nlohmann::json;
constexpr int64_t kMaxCount = int64_t{1} << 53;

struct Ctx {
    const std::string& source;
    std::string where;
    Ctx at(const std::string& sub) const { return {source, where + "." + sub}; }
    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw InputError(source, key.empty() ? where : where + "." + key, what);
    }
};

const json& object_of(const json& j, const Ctx& c, std::initializer_list<const char*> keys) {
    if (!j.is_object()) c.fail("", "expected an object");
    for (const auto& item : j.items()) {
        const std::string& k = item.key();  // a name, not a structured binding: clang 14 cannot capture those
        if (std::none_of(keys.begin(), keys.end(), [&](const char* known) { return k == known; }))
            c.fail(k, "unknown key");
    }
    return j;
}

const json* find(const json& j, const char* key) {
    const auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}

const json& need(const json& j, const char* key, const Ctx& c) {
    const json* v = find(j, key);
    if (v == nullptr || v->is_null()) c.fail(key, "missing");
    return *v;
}

std::string str(const json& j, const char* key, const Ctx& c, bool optional = false) {
    const json* v = find(j, key);
    if (optional && v == nullptr) return "";
    if (v == nullptr || v->is_null()) c.fail(key, "missing");
    if (!v->is_string()) c.fail(key, "expected a string");
    return v->get<std::string>();
}

// An integer in [lo, hi] (nlohmann's get<int> would wrap a larger one).
int64_t integer(const json& j, const char* key, const Ctx& c, int64_t lo, int64_t hi, bool optional = false) {
    const json* v = find(j, key);
    if (optional && v == nullptr) return 0;
    if (v == nullptr || v->is_null()) c.fail(key, "missing");
    const bool ok = v->is_number_integer() &&
                    (v->is_number_unsigned() ? v->get<uint64_t>() <= static_cast<uint64_t>(hi)
                                             : v->get<int64_t>() >= lo && v->get<int64_t>() <= hi);
    if (!ok) c.fail(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v->get<int64_t>();
}

// A time or share: a finite number, >= 0 unless `signed_ok` (HTA's rounded
// intervals can make a sum slightly negative; time stamps may be negative).
double number(const json& v, const std::string& key, const Ctx& c, bool signed_ok) {
    if (!v.is_number()) c.fail(key, "expected a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || (!signed_ok && x < 0))
        c.fail(key, signed_ok ? "expected a finite number" : "expected a finite number >= 0");
    return x;
}
double num(const json& j, const char* key, const Ctx& c, bool signed_ok = false, bool optional = false) {
    const json* v = find(j, key);
    if (optional && v == nullptr) return 0;
    if (v == nullptr || v->is_null()) c.fail(key, "missing");
    return number(*v, key, c, signed_ok);
}
std::optional<double> opt_num(const json& j, const char* key, const Ctx& c) {
    const json* v = find(j, key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    return number(*v, key, c, true);
}

// The array under `key` (absent: empty when optional), each item through f.
template <typename F>
void each(const json& j, const char* key, const Ctx& c, bool optional, F&& f) {
    const json* v = find(j, key);
    if (v == nullptr && optional) return;
    if (v == nullptr || !v->is_array()) c.fail(key, "expected an array");
    for (std::size_t i = 0; i < v->size(); ++i) f((*v)[i], c.at(std::string(key) + "[" + std::to_string(i) + "]"));
}

KernelCategory category_from(const std::string& s, const Ctx& c) {
    for (auto k : {KernelCategory::gemm, KernelCategory::attention, KernelCategory::norm_elementwise,
                   KernelCategory::other_compute, KernelCategory::communication, KernelCategory::memcpy,
                   KernelCategory::memset, KernelCategory::sync}) {
        if (s == to_string(k)) return k;
    }
    c.fail("category", "unknown kernel category \"" + s + "\"");
}

Iteration iteration_from(const json& i, const Ctx& c, std::size_t groups) {
    object_of(i, c, {"number", "cpu_us", "kernels", "gpu_span_us", "compute_us", "comm_us", "idle_us", "matmul_us",
                     "exposed_comm_us", "exposed_memory_us", "first_comm_start_us", "group_comm_start_us"});
    Iteration it;
    it.number = integer(i, "number", c, 0, std::numeric_limits<int64_t>::max());
    it.cpu_us = num(i, "cpu_us", c);
    it.kernels = integer(i, "kernels", c, 0, kMaxCount);
    it.gpu_span_us = num(i, "gpu_span_us", c, true);
    it.compute_us = num(i, "compute_us", c, true);
    it.comm_us = num(i, "comm_us", c, true);
    it.idle_us = num(i, "idle_us", c, true);
    it.matmul_us = num(i, "matmul_us", c, true, true);
    it.exposed_comm_us = num(i, "exposed_comm_us", c, true, true);
    it.exposed_memory_us = num(i, "exposed_memory_us", c, true, true);
    it.first_comm_start_us = opt_num(i, "first_comm_start_us", c);
    each(i, "group_comm_start_us", c, true, [&](const json& t, const Ctx& ct) {
        it.group_comm_start_us.push_back(t.is_null() ? std::nullopt : std::optional<double>(number(t, "", ct, true)));
    });
    if (it.group_comm_start_us.size() > groups)
        c.fail("group_comm_start_us", "more entries than process_groups");
    it.group_comm_start_us.resize(groups);
    return it;
}

void launches_from(const json& ls, const Ctx& c, LaunchStats& l) {
    object_of(ls, c, {"launched", "mean_launch_us", "mean_gpu_us", "mean_delay_us", "median_delay_us", "launch_bound",
                      "launch_bound_gpu_us", "kernels"});
    l.launched = integer(ls, "launched", c, 0, kMaxCount);
    l.mean_launch_us = num(ls, "mean_launch_us", c);
    l.mean_gpu_us = num(ls, "mean_gpu_us", c, true);
    l.mean_delay_us = num(ls, "mean_delay_us", c, true);
    l.median_delay_us = num(ls, "median_delay_us", c, true);
    l.launch_bound = integer(ls, "launch_bound", c, 0, kMaxCount);
    l.launch_bound_gpu_us = num(ls, "launch_bound_gpu_us", c, true);
    each(ls, "kernels", c, false, [&](const json& k, const Ctx& ck) {
        object_of(k, ck, {"name", "count", "launch_us", "gpu_us", "delay_us", "launch_bound"});
        l.kernels.push_back({str(k, "name", ck), integer(k, "count", ck, 0, kMaxCount), num(k, "launch_us", ck),
                             num(k, "gpu_us", ck, true), num(k, "delay_us", ck, true),
                             integer(k, "launch_bound", ck, 0, kMaxCount)});
    });
    if (l.kernels.size() > kMaxLaunchKernels) c.fail("kernels", "more than " + std::to_string(kMaxLaunchKernels));
}

// What a summary's figures can be, as the trace reader makes them: a rank's
// kernels start within a day of their median and last at most an hour
// (trace_read.h kMaxTsFromMedianUs, kMaxEventDurUs), so its span is at most
// two days and an hour and a step at most an hour; the temporal breakdown
// splits the span, so compute, idle and the exposed times fit in it (HTA's
// whole-microsecond rounding: 0.1 % and 1 us of slack); an overlap is a share.
constexpr double kMaxSpanUs = 2 * kMaxTsFromMedianUs + kMaxEventDurUs;

// The time of `count` kernels or calls (a category, a top kernel, a
// collective): each lasts at most an hour, so the sum is at most count hours
// either way (1 us of rounding slack). A figure past that printed a 300-digit
// time and "inf%" in `trace merge`'s table.
double summed_time_us(const json& j, const Ctx& c, int64_t count) {
    const double t = num(j, "time_us", c, true);
    if (std::abs(t) > static_cast<double>(count) * kMaxEventDurUs + 1)
        c.fail("time_us", fmt::format("{:g} us over {} kernels or calls: more than an hour each (the trace reader's "
                                      "bound, trace_read.h kMaxEventDurUs)",
                                      t, count));
    return t;
}

void check_breakdown(const Ctx& c, const char* span_key, double span,
                     std::initializer_list<std::pair<const char*, double>> parts) {
    if (span > kMaxSpanUs)
        c.fail(span_key, fmt::format("{:g} us: more than a trace can span ({:g} us: two days and an hour)", span,
                                     kMaxSpanUs));
    const double room = span * 1.001 + 1;
    for (const auto& [key, v] : parts) {
        if (v > room)
            c.fail(key, fmt::format("{:g} us is more than {} ({:g} us): the figures contradict each other", v,
                                    span_key, span));
        // A difference of totals may round below zero, by less than 1 us:
        // idle_us -1e308 printed "-inf%" as the rank's idle share in `trace merge`.
        if (v < -1)
            c.fail(key, fmt::format("{:g} us: a negative time (past 1 us of rounding)", v));
    }
}

void check_consistent(const RankReport& r, const Ctx& c) {
    check_breakdown(c, "kernel_span_us", r.kernel_span_us,
                    {{"compute_us", r.compute_us}, {"idle_us", r.idle_us}, {"compute_us + idle_us", r.compute_us + r.idle_us},
                     {"non_compute_us", r.non_compute_us}, {"comm_us", r.comm_us}, {"memory_us", r.memory_us},
                     {"matmul_us", r.matmul_us}, {"exposed_comm_us", r.exposed_comm_us},
                     {"exposed_memory_us", r.exposed_memory_us}});
    if (r.comm_comp_overlap_pct && (*r.comm_comp_overlap_pct < 0 || *r.comm_comp_overlap_pct > 100))
        c.fail("comm_comp_overlap_pct", fmt::format("{:g}: expected a percentage from 0 to 100", *r.comm_comp_overlap_pct));
    if (r.mean_step_us > kMaxEventDurUs)
        c.fail("mean_step_us", fmt::format("{:g} us: more than a step can last ({:g} us, an hour)", r.mean_step_us,
                                           kMaxEventDurUs));
    for (std::size_t i = 0; i < r.iterations.size(); ++i) {
        const Iteration& it = r.iterations[i];
        check_breakdown(c.at("iterations[" + std::to_string(i) + "]"), "gpu_span_us", it.gpu_span_us,
                        {{"compute_us", it.compute_us}, {"idle_us", it.idle_us},
                         {"exposed_comm_us", it.exposed_comm_us}, {"exposed_memory_us", it.exposed_memory_us}});
    }
}

}  // namespace

RankReport rank_from_json(const json& j, const std::string& source, const std::string& where) {
    const Ctx c{source, where};
    object_of(j, c, {"rank", "source", "hta_compatible", "host", "gpus_per_node", "kernels", "kernel_span_us",
                     "compute_us", "non_compute_us", "idle_us", "comm_us", "memory_us", "exposed_comm_us",
                     "exposed_memory_us", "matmul_us", "comm_comp_overlap_pct", "mean_step_us", "steps_total",
                     "skipped_events", "categories", "top_kernels", "process_groups", "iterations", "idle_breakdown",
                     "launch_stats", "collectives", "warnings"});
    constexpr bool optional = true;
    RankReport r;
    r.rank = static_cast<int>(integer(j, "rank", c, 0, kMaxRank));
    r.source = str(j, "source", c);
    const json& hta = need(j, "hta_compatible", c);
    if (!hta.is_boolean()) c.fail("hta_compatible", "expected true or false");
    r.hta_compatible = hta.get<bool>();
    r.host = str(j, "host", c, true);
    r.gpus_per_node = static_cast<int>(integer(j, "gpus_per_node", c, 0, 1024, true));
    r.kernels = integer(j, "kernels", c, 0, kMaxCount);
    r.kernel_span_us = num(j, "kernel_span_us", c);
    r.compute_us = num(j, "compute_us", c);
    r.non_compute_us = num(j, "non_compute_us", c, true);
    r.idle_us = num(j, "idle_us", c, true);
    r.comm_us = num(j, "comm_us", c, true);
    r.memory_us = num(j, "memory_us", c, true);
    r.exposed_comm_us = num(j, "exposed_comm_us", c, true);
    r.exposed_memory_us = num(j, "exposed_memory_us", c, true);
    r.matmul_us = num(j, "matmul_us", c, true);
    r.comm_comp_overlap_pct = opt_num(j, "comm_comp_overlap_pct", c);
    r.mean_step_us = num(j, "mean_step_us", c);
    r.steps_total = integer(j, "steps_total", c, 0, kMaxCount, true);
    r.skipped_events = static_cast<uint64_t>(integer(j, "skipped_events", c, 0, kMaxCount, true));
    each(j, "categories", c, false, [&](const json& x, const Ctx& cx) {
        object_of(x, cx, {"name", "category", "count", "time_us"});
        const int64_t count = integer(x, "count", cx, 0, kMaxCount);
        r.categories.push_back({str(x, "name", cx), category_from(str(x, "category", cx), cx), count,
                                summed_time_us(x, cx, count)});
    });
    each(j, "top_kernels", c, true, [&](const json& x, const Ctx& cx) {
        object_of(x, cx, {"name", "category", "count", "time_us"});
        const int64_t count = integer(x, "count", cx, 0, kMaxCount);
        r.top_kernels.push_back({str(x, "name", cx), str(x, "category", cx), count, summed_time_us(x, cx, count)});
    });
    each(j, "process_groups", c, true, [&](const json& x, const Ctx& cx) {
        object_of(x, cx, {"name", "desc", "ranks"});
        r.process_groups.push_back({str(x, "name", cx), str(x, "desc", cx), str(x, "ranks", cx)});
    });
    if (r.process_groups.size() > kMaxSummaryGroups) c.fail("process_groups", "more than " + std::to_string(kMaxSummaryGroups));
    each(j, "iterations", c, optional, [&](const json& x, const Ctx& cx) {
        r.iterations.push_back(iteration_from(x, cx, r.process_groups.size()));
    });
    if (r.iterations.size() > kMaxSummarySteps) c.fail("iterations", "more than " + std::to_string(kMaxSummarySteps));
    if (r.steps_total == 0) r.steps_total = static_cast<int64_t>(r.iterations.size());
    each(j, "idle_breakdown", c, optional, [&](const json& x, const Ctx& cx) {
        object_of(x, cx, {"stream", "kernels", "host_wait_us", "kernel_wait_us", "other_us"});
        StreamIdle s;
        s.stream = integer(x, "stream", cx, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
        s.kernels = integer(x, "kernels", cx, 0, kMaxCount);
        s.host_wait_us = num(x, "host_wait_us", cx, true);
        s.kernel_wait_us = num(x, "kernel_wait_us", cx, true);
        s.other_us = num(x, "other_us", cx, true);
        r.idle_breakdown.push_back(s);
    });
    if (r.idle_breakdown.size() > kMaxSummaryStreams) c.fail("idle_breakdown", "more than " + std::to_string(kMaxSummaryStreams));
    if (const json* ls = find(j, "launch_stats"); ls != nullptr) launches_from(*ls, c.at("launch_stats"), r.launches);
    each(j, "collectives", c, optional, [&](const json& x, const Ctx& cx) {
        object_of(x, cx, {"collective", "calls", "group_size", "bytes", "time_us", "algbw_gbps", "busbw_gbps"});
        CollectiveStats s;
        s.collective = str(x, "collective", cx);
        s.calls = integer(x, "calls", cx, 0, kMaxCount);
        s.group_size = integer(x, "group_size", cx, 0, kMaxRank + 1);
        s.bytes = num(x, "bytes", cx);
        s.time_us = summed_time_us(x, cx, s.calls);
        s.algbw_gbps = num(x, "algbw_gbps", cx, true);
        s.busbw_gbps = num(x, "busbw_gbps", cx, true);
        r.collectives.push_back(s);
    });
    each(j, "warnings", c, true, [&](const json& w, const Ctx& cw) {
        if (!w.is_string()) cw.fail("", "expected a string");
        r.warnings.push_back(w.get<std::string>());
    });
    if (r.warnings.size() > kMaxSummaryWarnings) c.fail("warnings", "more than " + std::to_string(kMaxSummaryWarnings));
    check_consistent(r, c);
    return r;
}

}  // namespace lostflops::trace::detail
