// JSON of trace results (shape in include/lostflops/trace_report.h): the
// per-rank objects of `trace` are the summary's (trace_summary_write.cpp)
// with the rank's cross-rank figures added; `trace merge` gives the rows.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "lostflops/trace_report.h"
#include "lostflops/trace_summary.h"
#include "trace/trace_report_text.h"

namespace lostflops::trace {
namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The cross-rank figures of a row (added to the full objects of `trace`).
void add_cross_rank(json& j, const RankRow& r) {
    j["node"] = r.node;
    j["steps"] = r.steps;
    j["step_us"] = r.step_us;
    j["busy_us"] = r.busy_us;
    j["late_us"] = r.late_us;
    j["held_back_us"] = r.held_back_us;
    j["z"] = opt(r.z);
    j["phase"] = r.phase;
    j["phase_excess_us"] = r.phase_excess_us;
    j["step_cv_pct"] = r.step_cv_pct;
}

// The allocator's peaks and timeline of a rank (trace_memory.h).
json memory_json(const DeviceMemory& m) {
    json timeline = json::array();
    for (const auto& p : m.timeline) timeline.push_back({p.ts_us, p.allocated_bytes, p.reserved_bytes});
    return {{"device", m.device},
            {"events", m.events},
            {"peak_allocated_bytes", m.peak_allocated_bytes},
            {"peak_allocated_ts_us", m.peak_allocated_ts_us},
            {"peak_allocated_step", m.peak_allocated_step ? json(*m.peak_allocated_step) : json(nullptr)},
            {"peak_allocated_step_offset_us", opt(m.peak_allocated_step_offset_us)},
            {"peak_reserved_bytes", m.peak_reserved_bytes},
            {"peak_reserved_ts_us", m.peak_reserved_ts_us},
            {"peak_op", m.peak_op},
            {"peak_op_context", m.peak_op_context},
            {"timeline", std::move(timeline)}};
}

json row_json(const RankRow& r) {
    json j = {{"rank", r.rank},
              {"source", r.source},
              {"hta_compatible", r.hta_compatible},
              {"kernels", r.kernels},
              {"kernel_span_us", r.kernel_span_us},
              {"compute_us", r.compute_us},
              {"non_compute_us", r.non_compute_us},
              {"idle_us", r.idle_us},
              {"exposed_comm_us", r.exposed_comm_us},
              {"exposed_memory_us", r.exposed_memory_us},
              {"comm_comp_overlap_pct", opt(r.comm_comp_overlap_pct)},
              {"mean_step_us", r.mean_step_us},
              {"warnings", r.warnings}};
    add_cross_rank(j, r);
    return j;
}

json slow_json(const SlowOne& s) {
    json j = {{"node", s.node},         {"busy_us", s.busy_us},   {"median_busy_us", s.median_busy_us},
              {"late_us", s.late_us},   {"held_back_us", s.held_back_us}, {"z", opt(s.z)},
              {"phase", s.phase},       {"phase_excess_us", s.phase_excess_us}};
    if (s.rank >= 0) {
        j["rank"] = s.rank;
        j["on_slow_node"] = s.on_slow_node;
    } else {
        j["ranks"] = s.ranks;
    }
    return j;
}

json cluster_json(const ClusterReport& c) {
    json j;
    j["ranks"] = c.ranks;
    j["nodes"] = c.nodes;
    j["outlier_test"] = c.outlier_test;
    j["median_busy_us"] = c.median_busy_us;
    json a = json::array();
    for (const auto& s : c.slow_ranks) a.push_back(slow_json(s));
    j["slow_ranks"] = std::move(a);
    a = json::array();
    for (const auto& s : c.slow_nodes) a.push_back(slow_json(s));
    j["slow_nodes"] = std::move(a);
    a = json::array();
    for (const auto& g : c.groups) {
        a.push_back({{"group", g.group}, {"ranks", g.ranks}, {"steps", g.steps}, {"median_skew_us", g.median_skew_us},
                     {"max_skew_us", g.max_skew_us}, {"latest_rank", g.latest_rank}, {"latest_count", g.latest_count}});
    }
    j["process_groups"] = std::move(a);
    a = json::array();
    for (const auto& s : c.steps) {
        a.push_back({{"step", s.step}, {"ranks", s.ranks}, {"mean_us", s.mean_us}, {"max_us", s.max_us},
                     {"slowest_rank", s.slowest_rank}, {"max_busy_us", s.max_busy_us}, {"busiest_rank", s.busiest_rank}});
    }
    j["steps"] = std::move(a);
    j["step_spread_pct"] = c.step_spread_pct;
    a = json::array();
    for (const auto& x : c.categories)
        a.push_back({{"name", x.name}, {"category", to_string(x.category)}, {"count", x.count}, {"time_us", x.time_us}});
    j["categories"] = std::move(a);
    a = json::array();
    for (const auto& k : c.top_kernels)
        a.push_back({{"name", k.name}, {"category", k.category}, {"count", k.count}, {"time_us", k.time_us}});
    j["top_kernels"] = std::move(a);
    a = json::array();
    for (const auto& x : c.collectives) {
        a.push_back({{"collective", x.collective}, {"calls", x.calls}, {"group_size", x.group_size}, {"bytes", x.bytes},
                     {"time_us", x.time_us}, {"algbw_gbps", x.algbw_gbps}, {"busbw_gbps", x.busbw_gbps}});
    }
    j["collectives"] = std::move(a);
    j["totals"] = {{"kernel_span_us", c.span_us},         {"compute_us", c.compute_us},
                   {"matmul_us", c.matmul_us},            {"idle_us", c.idle_us},
                   {"comm_us", c.comm_us},                {"exposed_comm_us", c.exposed_comm_us},
                   {"exposed_memory_us", c.exposed_memory_us}, {"host_wait_us", c.host_wait_us},
                   {"kernel_wait_us", c.kernel_wait_us},  {"other_wait_us", c.other_wait_us},
                   {"kernels", c.kernels},                {"launched", c.launched},
                   {"launch_bound", c.launch_bound},      {"launch_bound_gpu_us", c.launch_bound_gpu_us}};
    return j;
}

}  // namespace

std::string report_json(const TraceReport& t) {
    const ClusterReport& c = *t.cluster;
    json j;
    j["convention"] = detail::convention_of(c);
    json ranks = json::array();
    if (t.ranks != nullptr) {
        for (std::size_t i = 0; i < t.ranks->size(); ++i) {
            json r = json::parse(rank_json((*t.ranks)[i]));
            const auto row = std::lower_bound(c.rows.begin(), c.rows.end(), (*t.ranks)[i].rank,
                                              [](const RankRow& x, int rank) { return x.rank < rank; });
            if (row != c.rows.end() && row->rank == (*t.ranks)[i].rank) add_cross_rank(r, *row);
            if ((*t.ranks)[i].memory) r["memory"] = memory_json(*(*t.ranks)[i].memory);
            ranks.push_back(std::move(r));
        }
    } else {
        for (const auto& row : c.rows) ranks.push_back(row_json(row));
    }
    j["ranks"] = std::move(ranks);
    j["cluster"] = cluster_json(c);
    json sk = json::array();
    for (const auto& x : c.step_skew) {
        sk.push_back({{"step", x.step}, {"ranks", x.ranks}, {"skew_us", x.skew_us}, {"latest_rank", x.latest_rank},
                      {"earliest_rank", x.earliest_rank}});
    }
    j["collective_skew"] = std::move(sk);
    json tr = json::array();
    if (t.triage != nullptr) {
        for (const auto& x : *t.triage) {
            tr.push_back({{"key", x.key}, {"what", x.what}, {"cost_pct", x.cost_pct}, {"evidence", x.evidence},
                          {"to_try", x.to_try}});
        }
    }
    j["triage"] = std::move(tr);
    if (t.cmp != nullptr) {
        const JobComparison& cmp = *t.cmp;
        json walls = json::array();
        for (const auto& w : cmp.walls) {
            walls.push_back({{"wall", w.wall}, {"measured_s", w.measured_s}, {"predicted_s", w.predicted_s}});
            if (cmp.has_profiled()) walls.back()["predicted_profiled_s"] = w.predicted_profiled_s;
        }
        json memory = json::array();
        for (const auto& m : cmp.memory) {
            memory.push_back({{"memory", m.memory}, {"measured_bytes", m.measured_bytes}, {"rank", m.rank},
                              {"predicted_bytes", m.predicted_bytes}});
            if (cmp.has_profiled()) memory.back()["predicted_profiled_bytes"] = m.predicted_profiled_bytes;
        }
        j["job"] = {{"measured_step_s", cmp.measured_step_s}, {"predicted_step_s", cmp.predicted_step_s},
                    {"measured_mfu", cmp.measured_mfu},       {"predicted_mfu", cmp.predicted_mfu},
                    {"step_source", cmp.step_source},         {"walls", walls},
                    {"pipeline_stages", cmp.stages},          {"measured_stage", cmp.measured_stage},
                    {"memory", std::move(memory)},            {"warnings", cmp.warnings}};
        if (cmp.has_profiled()) {
            j["job"]["profiler_host_s"] = cmp.profiler_host_s;
            j["job"]["host_speed"] = cmp.host_speed;
            auto steps = nlohmann::json::array();
            for (const auto& st : cmp.step_host_speeds)
                steps.push_back({{"python", st.python}, {"autograd", st.autograd}});
            j["job"]["step_host_speeds"] = std::move(steps);
            j["job"]["predicted_profiled_step_s"] = cmp.predicted_profiled_step_s;
            j["job"]["predicted_profiled_mfu"] = cmp.predicted_profiled_mfu;
            j["job"]["profiled_settings"] = cmp.profiled_settings;
        }
    }
    // Kernel names are the trace's bytes: invalid UTF-8 becomes U+FFFD, not an error.
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string report_json(const std::vector<RankReport>& ranks) {
    const ClusterReport c = cluster_report(ranks);
    const auto items = triage(c, nullptr, {});
    return report_json(TraceReport{&ranks, &c, &items, nullptr});
}

}  // namespace lostflops::trace
