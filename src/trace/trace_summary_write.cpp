// Writing per-rank summaries (format: include/lostflops/trace_summary.h and
// docs/trace-summary-format.md): JSON text appended field by field (no
// document tree, so memory is the text), each rank first cut to the bounds
// the reader accepts. Names longer than kMaxSummaryNameBytes keep their
// first bytes and "...#" + the 64-bit FNV-1a hash of the whole name (Fowler,
// Noll, Vo), so that two long names stay two.
#include <fmt/format.h>

#include <algorithm>

#include "lostflops/error.h"
#include "lostflops/trace_summary.h"
#include "job/text_input.h"
#include "trace/trace_text.h"

namespace lostflops::trace {
namespace {

uint64_t fnv1a(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

std::string cut(const std::string& s, std::size_t max = kMaxSummaryNameBytes) {
    if (s.size() <= max) return s;
    return s.substr(0, max - 24) + fmt::format("...#{:016x}", fnv1a(s));
}

// A small JSON object writer: {"k": v, ...}.
class Obj {
public:
    explicit Obj(std::string& out) : out_(out) { out_ += '{'; }
    Obj& str(const char* k, std::string_view v) { key(k), append_json_string(out_, v); return *this; }
    Obj& num(const char* k, double v) { key(k), append_json_number(out_, v); return *this; }
    Obj& opt(const char* k, const std::optional<double>& v) {
        key(k);
        if (v) append_json_number(out_, *v);
        else out_ += "null";
        return *this;
    }
    Obj& integer(const char* k, int64_t v) { key(k), fmt::format_to(std::back_inserter(out_), "{}", v); return *this; }
    Obj& boolean(const char* k, bool v) { key(k), out_ += v ? "true" : "false"; return *this; }
    // "k": [each item written by f(item)]
    template <typename T, typename F>
    Obj& list(const char* k, const std::vector<T>& v, F&& f) {
        key(k);
        out_ += '[';
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out_ += ", ";
            f(v[i]);
        }
        out_ += ']';
        return *this;
    }
    std::string& raw(const char* k) { key(k); return out_; }
    void close() { out_ += '}'; }

private:
    void key(const char* k) {
        if (!first_) out_ += ", ";
        first_ = false;
        append_json_string(out_, k);
        out_ += ": ";
    }
    std::string& out_;
    bool first_ = true;
};

void write_rank(std::string& out, const RankReport& r) {
    Obj o(out);
    o.integer("rank", r.rank).str("source", cut(r.source)).boolean("hta_compatible", r.hta_compatible);
    o.str("host", r.host).integer("gpus_per_node", r.gpus_per_node).integer("kernels", r.kernels);
    o.num("kernel_span_us", r.kernel_span_us).num("compute_us", r.compute_us).num("non_compute_us", r.non_compute_us);
    o.num("idle_us", r.idle_us).num("comm_us", r.comm_us).num("memory_us", r.memory_us);
    o.num("exposed_comm_us", r.exposed_comm_us).num("exposed_memory_us", r.exposed_memory_us);
    o.num("matmul_us", r.matmul_us).opt("comm_comp_overlap_pct", r.comm_comp_overlap_pct);
    o.num("mean_step_us", r.mean_step_us).integer("steps_total", r.steps_total);
    o.integer("skipped_events", static_cast<int64_t>(r.skipped_events));
    o.list("categories", r.categories, [&](const CategoryTotal& c) {
        Obj(out).str("name", c.name).str("category", to_string(c.category)).integer("count", c.count)
            .num("time_us", c.time_us).close();
    });
    o.list("top_kernels", r.top_kernels, [&](const TopKernel& k) {
        Obj(out).str("name", cut(k.name)).str("category", k.category).integer("count", k.count)
            .num("time_us", k.time_us).close();
    });
    o.list("process_groups", r.process_groups, [&](const ProcessGroup& g) {
        Obj(out).str("name", cut(g.name, 256)).str("desc", cut(g.desc, 256)).str("ranks", cut(g.ranks)).close();
    });
    o.list("iterations", r.iterations, [&](const Iteration& i) {
        Obj it(out);
        it.integer("number", i.number).num("cpu_us", i.cpu_us).integer("kernels", i.kernels);
        it.num("gpu_span_us", i.gpu_span_us).num("compute_us", i.compute_us).num("comm_us", i.comm_us);
        it.num("idle_us", i.idle_us).num("matmul_us", i.matmul_us).num("exposed_comm_us", i.exposed_comm_us);
        it.num("exposed_memory_us", i.exposed_memory_us).opt("first_comm_start_us", i.first_comm_start_us);
        it.list("group_comm_start_us", i.group_comm_start_us, [&](const std::optional<double>& t) {
            if (t) append_json_number(out, *t);
            else out += "null";
        });
        it.close();
    });
    o.list("idle_breakdown", r.idle_breakdown, [&](const StreamIdle& x) {
        Obj(out).integer("stream", x.stream).integer("kernels", x.kernels).num("host_wait_us", x.host_wait_us)
            .num("kernel_wait_us", x.kernel_wait_us).num("other_us", x.other_us).close();
    });
    const LaunchStats& l = r.launches;
    Obj ls(o.raw("launch_stats"));
    ls.integer("launched", l.launched).num("mean_launch_us", l.mean_launch_us).num("mean_gpu_us", l.mean_gpu_us);
    ls.num("mean_delay_us", l.mean_delay_us).num("median_delay_us", l.median_delay_us);
    ls.integer("launch_bound", l.launch_bound).num("launch_bound_gpu_us", l.launch_bound_gpu_us);
    ls.list("kernels", l.kernels, [&](const LaunchKernel& k) {
        Obj(out).str("name", cut(k.name)).integer("count", k.count).num("launch_us", k.launch_us)
            .num("gpu_us", k.gpu_us).num("delay_us", k.delay_us).integer("launch_bound", k.launch_bound).close();
    });
    ls.close();
    o.list("collectives", r.collectives, [&](const CollectiveStats& c) {
        Obj(out).str("collective", c.collective).integer("calls", c.calls).integer("group_size", c.group_size)
            .num("bytes", c.bytes).num("time_us", c.time_us).num("algbw_gbps", c.algbw_gbps)
            .num("busbw_gbps", c.busbw_gbps).close();
    });
    o.list("warnings", r.warnings, [&](const std::string& w) { append_json_string(out, cut(w, 1024)); });
    o.close();
}

}  // namespace

RankReport bounded_for_summary(const RankReport& in) {
    RankReport r = in;
    std::vector<std::string> cuts;
    if (r.iterations.size() > kMaxSummarySteps) {
        cuts.push_back(fmt::format("the first {} of {} iterations", kMaxSummarySteps, r.iterations.size()));
        r.iterations.resize(kMaxSummarySteps);
    }
    if (r.idle_breakdown.size() > kMaxSummaryStreams) {
        cuts.push_back(fmt::format("the {} streams of {} with the most idle time", kMaxSummaryStreams,
                                   r.idle_breakdown.size()));
        std::stable_sort(r.idle_breakdown.begin(), r.idle_breakdown.end(),
                         [](const StreamIdle& a, const StreamIdle& b) { return a.idle_us() > b.idle_us(); });
        r.idle_breakdown.resize(kMaxSummaryStreams);
        std::sort(r.idle_breakdown.begin(), r.idle_breakdown.end(),
                  [](const StreamIdle& a, const StreamIdle& b) { return a.stream < b.stream; });
    }
    if (r.process_groups.size() > kMaxSummaryGroups) {
        cuts.push_back(fmt::format("the first {} of {} process groups", kMaxSummaryGroups, r.process_groups.size()));
        r.process_groups.resize(kMaxSummaryGroups);
        for (auto& it : r.iterations)
            if (it.group_comm_start_us.size() > kMaxSummaryGroups) it.group_comm_start_us.resize(kMaxSummaryGroups);
    }
    if (!cuts.empty()) {
        std::string w = "summary-bounds: the summary keeps ";
        for (std::size_t i = 0; i < cuts.size(); ++i) w += (i ? ", " : "") + cuts[i];
        r.warnings.push_back(w);
    }
    if (r.warnings.size() > kMaxSummaryWarnings) {
        const std::size_t n = r.warnings.size();
        r.warnings.resize(kMaxSummaryWarnings - 1);
        r.warnings.push_back(fmt::format("summary-bounds: {} more warnings left out", n - r.warnings.size()));
    }
    return r;
}

std::string rank_json(const RankReport& r) {
    std::string out;
    write_rank(out, r);
    return out;
}

std::string summary_to_json(const std::vector<RankReport>& ranks, const std::string& dest) {
    std::string out = fmt::format("{{\"format\": \"{}\", \"version\": {}, \"ranks\": [", kSummaryFormat, kSummaryVersion);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i].rank < 0 || ranks[i].rank > kMaxRank) {
            throw InputError(dest, "rank", fmt::format("{}: rank {} is not in [0, {}] (give each trace its rank: "
                                                       "distributedInfo.rank, or rank<N> in the file name)",
                                                       ranks[i].source, ranks[i].rank, kMaxRank));
        }
        out += i ? ",\n" : "\n";
        write_rank(out, bounded_for_summary(ranks[i]));
        if (out.size() > kMaxSummaryBytes) {
            throw InputError(dest, "",
                             fmt::format("the summary of {} ranks would be over {} MiB (the most `trace merge` reads "
                                         "from one file): write one summary per rank or per node (one `lostflops "
                                         "trace --summary-out` per Slurm array task, or lostflops.trace_summaries)",
                                         ranks.size(), kMaxSummaryBytes >> 20));
        }
    }
    out += "\n]}\n";
    return out;
}

}  // namespace lostflops::trace
