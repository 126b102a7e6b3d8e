// Per-rank summaries (compact JSON, so that at thousands of ranks each node
// summarises its own traces and only summaries travel), their merge, and
// stragglers: ranks whose compute time or waiting time (idle + exposed
// communication) deviate most from the median over all ranks (the median, not
// the mean, so that one slow rank does not move the reference).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "lostflops/error.h"
#include "lostflops/trace.h"

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
                       {"comm_us", i.comm_us}, {"idle_us", i.idle_us}});
    }
    j["iterations"] = its;
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

RankReport rank_from_json(const json& j, const std::string& source, const std::string& where) {
    if (!j.is_object()) throw InputError(source, where, "expected an object");
    RankReport r;
    r.rank = field<int>(j, "rank", source, where);
    r.source = field<std::string>(j, "source", source, where);
    r.hta_compatible = field<bool>(j, "hta_compatible", source, where);
    r.kernels = field<int64_t>(j, "kernels", source, where);
    r.kernel_span_us = field<double>(j, "kernel_span_us", source, where);
    r.compute_us = field<double>(j, "compute_us", source, where);
    r.non_compute_us = field<double>(j, "non_compute_us", source, where);
    r.idle_us = field<double>(j, "idle_us", source, where);
    r.comm_us = field<double>(j, "comm_us", source, where);
    r.memory_us = field<double>(j, "memory_us", source, where);
    r.exposed_comm_us = field<double>(j, "exposed_comm_us", source, where);
    r.exposed_memory_us = field<double>(j, "exposed_memory_us", source, where);
    r.matmul_us = field<double>(j, "matmul_us", source, where);
    const auto ov = j.find("comm_comp_overlap_pct");
    if (ov != j.end() && ov->is_number()) r.comm_comp_overlap_pct = ov->get<double>();
    r.mean_step_us = field<double>(j, "mean_step_us", source, where);
    const auto cats = field<json>(j, "categories", source, where);
    if (!cats.is_array()) throw InputError(source, where + ".categories", "expected an array");
    for (const auto& c : cats) {
        CategoryTotal t;
        t.name = field<std::string>(c, "name", source, where + ".categories");
        t.category = category_from(field<std::string>(c, "category", source, where + ".categories"), source);
        t.count = field<int64_t>(c, "count", source, where + ".categories");
        t.time_us = field<double>(c, "time_us", source, where + ".categories");
        r.categories.push_back(t);
    }
    const auto its = j.find("iterations");
    if (its != j.end() && its->is_array()) {
        for (const auto& i : *its) {
            const std::string w = where + ".iterations";
            Iteration it;
            it.number = field<int64_t>(i, "number", source, w);
            it.cpu_us = field<double>(i, "cpu_us", source, w);
            it.kernels = field<int64_t>(i, "kernels", source, w);
            it.gpu_span_us = field<double>(i, "gpu_span_us", source, w);
            it.compute_us = field<double>(i, "compute_us", source, w);
            it.comm_us = field<double>(i, "comm_us", source, w);
            it.idle_us = field<double>(i, "idle_us", source, w);
            r.iterations.push_back(it);
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
    pick("compute_us", [](const RankReport& r) { return r.compute_us; });
    pick("waiting_us", [](const RankReport& r) { return r.idle_us + r.exposed_comm_us; });
    return out;
}

std::string summary_to_json(const std::vector<RankReport>& ranks) {
    json j;
    j["format"] = kSummaryTag;
    j["version"] = kSummaryVersion;
    json arr = json::array();
    for (const auto& r : ranks) arr.push_back(rank_to_json(r));
    j["ranks"] = arr;
    return j.dump(1) + "\n";
}

std::vector<RankReport> summary_from_json(const std::string& text, const std::string& source) {
    const json j = json::parse(text, nullptr, false);
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
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open summary");
    std::ostringstream ss;
    ss << in.rdbuf();
    return summary_from_json(ss.str(), path);
}

std::vector<RankReport> merge_summaries(const std::vector<std::vector<RankReport>>& parts) {
    std::vector<RankReport> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
    for (std::size_t i = 1; i < out.size(); ++i) {
        if (out[i].rank == out[i - 1].rank && out[i].rank >= 0) {
            throw InputError(out[i].source, "rank",
                             "rank " + std::to_string(out[i].rank) + " appears twice (also in " +
                                 out[i - 1].source + ")");
        }
    }
    return out;
}

}  // namespace lostflops::trace
