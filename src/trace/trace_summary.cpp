// Per-rank summaries (compact JSON, so that at thousands of ranks each node
// summarises its own traces and only summaries travel), their merge, and
// stragglers: ranks whose compute time or waiting time (idle + exposed
// communication) deviate most from the median over all ranks (the median, not
// the mean, so that one slow rank does not move the reference). Summaries are
// read bounded (src/spec/text_input.h, kMaxSummaryBytes) with a leading UTF-8
// byte-order mark skipped; every number is checked (finite, not negative,
// ranks in [0, kMaxRank]) before use.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "spec/text_input.h"

namespace lostflops::trace {
namespace {

using nlohmann::json;
constexpr int kSummaryVersion = 1;
constexpr const char* kSummaryTag = "lostflops-trace-summary";

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

json rank_to_json(const RankReport& r) {
    json j;
    j["rank"] = r.rank;
    j["source"] = r.source;
    j["hta_compatible"] = r.hta_compatible;
    j["kernels"] = r.kernels;
    j["kernel_span_us"] = r.kernel_span_us;
    j["compute_us"] = r.compute_us;
    j["non_compute_us"] = r.non_compute_us;
    j["idle_us"] = r.idle_us;
    j["comm_us"] = r.comm_us;
    j["memory_us"] = r.memory_us;
    j["exposed_comm_us"] = r.exposed_comm_us;
    j["exposed_memory_us"] = r.exposed_memory_us;
    j["matmul_us"] = r.matmul_us;
    j["comm_comp_overlap_pct"] = r.comm_comp_overlap_pct ? json(*r.comm_comp_overlap_pct) : json(nullptr);
    j["mean_step_us"] = r.mean_step_us;
    j["skipped_events"] = r.skipped_events;
    json cats = json::array();
    for (const auto& c : r.categories) {
        cats.push_back({{"name", c.name}, {"category", to_string(c.category)},
                        {"count", c.count}, {"time_us", c.time_us}});
    }
    j["categories"] = cats;
    json its = json::array();
    for (const auto& i : r.iterations) {
        its.push_back({{"number", i.number}, {"cpu_us", i.cpu_us}, {"kernels", i.kernels},
                       {"gpu_span_us", i.gpu_span_us}, {"compute_us", i.compute_us},
                       {"comm_us", i.comm_us}, {"idle_us", i.idle_us},
                       {"first_comm_start_us", i.first_comm_start_us ? json(*i.first_comm_start_us) : json(nullptr)}});
    }
    j["iterations"] = its;
    json idle = json::array();
    for (const auto& x : r.idle_breakdown) {
        idle.push_back({{"stream", x.stream}, {"kernels", x.kernels}, {"host_wait_us", x.host_wait_us},
                        {"kernel_wait_us", x.kernel_wait_us}, {"other_us", x.other_us}});
    }
    j["idle_breakdown"] = idle;
    const LaunchStats& l = r.launches;
    json lk = json::array();
    for (const auto& k : l.kernels) {
        lk.push_back({{"name", k.name}, {"count", k.count}, {"launch_us", k.launch_us}, {"gpu_us", k.gpu_us},
                      {"delay_us", k.delay_us}, {"launch_bound", k.launch_bound}});
    }
    j["launch_stats"] = {{"launched", l.launched},           {"mean_launch_us", l.mean_launch_us},
                         {"mean_gpu_us", l.mean_gpu_us},     {"mean_delay_us", l.mean_delay_us},
                         {"median_delay_us", l.median_delay_us}, {"launch_bound", l.launch_bound},
                         {"launch_bound_gpu_us", l.launch_bound_gpu_us}, {"kernels", lk}};
    json colls = json::array();
    for (const auto& c : r.collectives) {
        colls.push_back({{"collective", c.collective}, {"calls", c.calls}, {"group_size", c.group_size},
                         {"bytes", c.bytes}, {"time_us", c.time_us}, {"algbw_gbps", c.algbw_gbps},
                         {"busbw_gbps", c.busbw_gbps}});
    }
    j["collectives"] = colls;
    j["warnings"] = r.warnings;
    return j;
}

KernelCategory category_from(const std::string& s, const std::string& source) {
    for (auto c : {KernelCategory::gemm, KernelCategory::attention, KernelCategory::norm_elementwise,
                   KernelCategory::other_compute, KernelCategory::communication,
                   KernelCategory::memcpy, KernelCategory::memset, KernelCategory::sync}) {
        if (s == to_string(c)) return c;
    }
    throw InputError(source, "categories", "unknown kernel category \"" + s + "\"");
}

template <typename T>
T field(const json& j, const char* key, const std::string& source, const std::string& where) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        throw InputError(source, where + "." + key, "missing");
    }
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        throw InputError(source, where + "." + key, "has the wrong type");
    }
}

// An integer in [lo, hi] (nlohmann's get<int> would wrap a larger one).
int64_t int_field(const json& j, const char* key, const std::string& source, const std::string& where,
                  int64_t lo, int64_t hi) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) throw InputError(source, where + "." + key, "missing");
    const bool ok = it->is_number_integer() &&
                    (it->is_number_unsigned() ? it->get<uint64_t>() <= static_cast<uint64_t>(hi)
                                              : it->get<int64_t>() >= lo && it->get<int64_t>() <= hi);
    if (!ok) {
        throw InputError(source, where + "." + key,
                         "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return it->get<int64_t>();
}

// A time or share: a finite number, >= 0 unless `signed_ok` (HTA's rounded
// intervals can make a sum slightly negative).
double num_field(const json& j, const char* key, const std::string& source, const std::string& where,
                 bool signed_ok = false) {
    const double v = field<double>(j, key, source, where);
    if (!std::isfinite(v) || (!signed_ok && v < 0)) {
        throw InputError(source, where + "." + key,
                         signed_ok ? "expected a finite number" : "expected a finite number >= 0");
    }
    return v;
}

constexpr int64_t kMaxCount = int64_t{1} << 53;

RankReport rank_from_json(const json& j, const std::string& source, const std::string& where) {
    if (!j.is_object()) throw InputError(source, where, "expected an object");
    RankReport r;
    r.rank = static_cast<int>(int_field(j, "rank", source, where, 0, kMaxRank));
    r.source = field<std::string>(j, "source", source, where);
    r.hta_compatible = field<bool>(j, "hta_compatible", source, where);
    r.kernels = int_field(j, "kernels", source, where, 0, kMaxCount);
    r.kernel_span_us = num_field(j, "kernel_span_us", source, where);
    r.compute_us = num_field(j, "compute_us", source, where);
    r.non_compute_us = num_field(j, "non_compute_us", source, where, true);
    r.idle_us = num_field(j, "idle_us", source, where, true);
    r.comm_us = num_field(j, "comm_us", source, where, true);
    r.memory_us = num_field(j, "memory_us", source, where, true);
    r.exposed_comm_us = num_field(j, "exposed_comm_us", source, where, true);
    r.exposed_memory_us = num_field(j, "exposed_memory_us", source, where, true);
    r.matmul_us = num_field(j, "matmul_us", source, where, true);
    const auto ov = j.find("comm_comp_overlap_pct");
    if (ov != j.end() && ov->is_number()) r.comm_comp_overlap_pct = num_field(j, "comm_comp_overlap_pct", source, where, true);
    r.mean_step_us = num_field(j, "mean_step_us", source, where);
    if (j.contains("skipped_events")) r.skipped_events = static_cast<uint64_t>(int_field(j, "skipped_events", source, where, 0, kMaxCount));
    const auto cats = field<json>(j, "categories", source, where);
    if (!cats.is_array()) throw InputError(source, where + ".categories", "expected an array");
    for (const auto& c : cats) {
        CategoryTotal t;
        t.name = field<std::string>(c, "name", source, where + ".categories");
        t.category = category_from(field<std::string>(c, "category", source, where + ".categories"), source);
        t.count = int_field(c, "count", source, where + ".categories", 0, kMaxCount);
        t.time_us = num_field(c, "time_us", source, where + ".categories", true);
        r.categories.push_back(t);
    }
    const auto its = j.find("iterations");
    if (its != j.end() && its->is_array()) {
        for (const auto& i : *its) {
            const std::string w = where + ".iterations";
            Iteration it;
            it.number = int_field(i, "number", source, w, 0, std::numeric_limits<int64_t>::max());
            it.cpu_us = num_field(i, "cpu_us", source, w);
            it.kernels = int_field(i, "kernels", source, w, 0, kMaxCount);
            it.gpu_span_us = num_field(i, "gpu_span_us", source, w, true);
            it.compute_us = num_field(i, "compute_us", source, w, true);
            it.comm_us = num_field(i, "comm_us", source, w, true);
            it.idle_us = num_field(i, "idle_us", source, w, true);
            const auto fc = i.find("first_comm_start_us");  // absent or null: none
            if (fc != i.end() && !fc->is_null()) it.first_comm_start_us = num_field(i, "first_comm_start_us", source, w, true);
            r.iterations.push_back(it);
        }
    }
    const auto idle = j.find("idle_breakdown");  // absent in summaries written before it existed
    if (idle != j.end()) {
        const std::string w = where + ".idle_breakdown";
        if (!idle->is_array()) throw InputError(source, w, "expected an array");
        for (const auto& x : *idle) {
            StreamIdle s;
            s.stream = int_field(x, "stream", source, w, std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::max());
            s.kernels = int_field(x, "kernels", source, w, 0, kMaxCount);
            s.host_wait_us = num_field(x, "host_wait_us", source, w, true);
            s.kernel_wait_us = num_field(x, "kernel_wait_us", source, w, true);
            s.other_us = num_field(x, "other_us", source, w, true);
            r.idle_breakdown.push_back(s);
        }
    }
    const auto ls = j.find("launch_stats");  // absent in summaries written before it existed
    if (ls != j.end()) {
        const std::string w = where + ".launch_stats";
        if (!ls->is_object()) throw InputError(source, w, "expected an object");
        LaunchStats& l = r.launches;
        l.launched = int_field(*ls, "launched", source, w, 0, kMaxCount);
        l.mean_launch_us = num_field(*ls, "mean_launch_us", source, w);
        l.mean_gpu_us = num_field(*ls, "mean_gpu_us", source, w, true);
        l.mean_delay_us = num_field(*ls, "mean_delay_us", source, w, true);
        l.median_delay_us = num_field(*ls, "median_delay_us", source, w, true);
        l.launch_bound = int_field(*ls, "launch_bound", source, w, 0, kMaxCount);
        l.launch_bound_gpu_us = num_field(*ls, "launch_bound_gpu_us", source, w, true);
        const auto ks = field<json>(*ls, "kernels", source, w);
        if (!ks.is_array()) throw InputError(source, w + ".kernels", "expected an array");
        for (const auto& k : ks) {
            const std::string wk = w + ".kernels";
            l.kernels.push_back({field<std::string>(k, "name", source, wk), int_field(k, "count", source, wk, 0, kMaxCount),
                                 num_field(k, "launch_us", source, wk), num_field(k, "gpu_us", source, wk, true),
                                 num_field(k, "delay_us", source, wk, true),
                                 int_field(k, "launch_bound", source, wk, 0, kMaxCount)});
        }
    }
    const auto cs = j.find("collectives");  // absent in summaries written before it existed
    if (cs != j.end()) {
        const std::string w = where + ".collectives";
        if (!cs->is_array()) throw InputError(source, w, "expected an array");
        for (const auto& c : *cs) {
            CollectiveStats s;
            s.collective = field<std::string>(c, "collective", source, w);
            s.calls = int_field(c, "calls", source, w, 0, kMaxCount);
            s.group_size = int_field(c, "group_size", source, w, 0, kMaxRank + 1);
            s.bytes = num_field(c, "bytes", source, w);
            s.time_us = num_field(c, "time_us", source, w, true);
            s.algbw_gbps = num_field(c, "algbw_gbps", source, w, true);
            s.busbw_gbps = num_field(c, "busbw_gbps", source, w, true);
            r.collectives.push_back(s);
        }
    }
    const auto ws = j.find("warnings");
    if (ws != j.end() && ws->is_array()) {
        for (const auto& w : *ws) if (w.is_string()) r.warnings.push_back(w.get<std::string>());
    }
    return r;
}

}  // namespace

std::vector<Straggler> find_stragglers(const std::vector<RankReport>& ranks, std::size_t max_per_metric) {
    std::vector<Straggler> out;
    if (ranks.size() < 2) return out;
    const auto pick = [&](const char* metric, auto value_of) {
        std::vector<double> v;
        for (const auto& r : ranks) v.push_back(value_of(r));
        const double med = median(v);
        std::vector<Straggler> s;
        for (const auto& r : ranks) {
            const double x = value_of(r);
            if (x == med) continue;
            const double dev = med != 0 ? (x - med) / med * 100.0 : (x > med ? 100.0 : -100.0);
            s.push_back({r.rank, metric, x, med, dev});
        }
        std::stable_sort(s.begin(), s.end(), [](const Straggler& a, const Straggler& b) {
            return std::fabs(a.deviation_pct) > std::fabs(b.deviation_pct);
        });
        if (s.size() > max_per_metric) s.resize(max_per_metric);
        out.insert(out.end(), s.begin(), s.end());
    };
    pick("compute", [](const RankReport& r) { return r.compute_us; });
    pick("waiting", [](const RankReport& r) { return r.idle_us + r.exposed_comm_us; });
    return out;
}

std::string summary_to_json(const std::vector<RankReport>& ranks) {
    json j;
    j["format"] = kSummaryTag;
    j["version"] = kSummaryVersion;
    json arr = json::array();
    for (const auto& r : ranks) arr.push_back(rank_to_json(r));
    j["ranks"] = arr;
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<RankReport> summary_from_json(const std::string& text, const std::string& source) {
    std::string_view body(text);
    if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // UTF-8 byte-order mark
    const json j = json::parse(body, nullptr, false);
    if (j.is_discarded()) throw InputError(source, "", "not valid JSON (expected a trace summary)");
    if (!j.is_object() || j.value("format", std::string()) != kSummaryTag) {
        throw InputError(source, "format", std::string("not a trace summary (expected \"format\": \"") +
                                               kSummaryTag + "\")");
    }
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kSummaryVersion) {
        throw InputError(source, "version", "unsupported summary version (expected 1)");
    }
    const auto it = j.find("ranks");
    if (it == j.end() || !it->is_array()) throw InputError(source, "ranks", "expected an array");
    std::vector<RankReport> out;
    for (std::size_t i = 0; i < it->size(); ++i) {
        out.push_back(rank_from_json((*it)[i], source, "ranks[" + std::to_string(i) + "]"));
    }
    return out;
}

std::vector<RankReport> load_summary(const std::string& path) {
    const std::string text = read_file_bounded(path, kMaxSummaryBytes, "trace summary");
    return summary_from_json(text, input_name(path));
}

void assign_missing_ranks(std::vector<RankReport>& ranks) {
    std::set<int> taken;
    for (const auto& r : ranks)
        if (r.rank >= 0) taken.insert(r.rank);
    int free_rank = 0;
    for (auto& r : ranks) {
        if (r.rank >= 0) continue;
        while (taken.count(free_rank) > 0) ++free_rank;
        r.rank = free_rank;
        taken.insert(free_rank);
        r.warnings.push_back("rank " + std::to_string(free_rank) + " assigned by file order");
    }
}

std::vector<RankReport> merge_summaries(const std::vector<std::vector<RankReport>>& parts) {
    std::vector<RankReport> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
    for (std::size_t i = 1; i < out.size(); ++i) {
        if (out[i].rank == out[i - 1].rank) {
            throw InputError(out[i].source, "rank",
                             "rank " + std::to_string(out[i].rank) + " appears twice: in " + out[i - 1].source +
                                 " and in " + out[i].source + " (each rank must come from one file)");
        }
    }
    return out;
}

}  // namespace lostflops::trace
