// Search output: the ranked plans with their costliest wall (a fresh
// estimate() of each listed plan: same figures, plus the breakdown), the
// runner-ups of other shapes, the counts; JSON and CSV list the first plans
// or stream the whole ranking chunk by chunk (search.h for_each_ranked); the sweep's scaling efficiency is throughput per GPU relative to
// the smallest size that fits (strong scaling: same global batch).
#include "lostflops/run_report.h"
#include "lostflops/search_report.h"
#include "report/near_identical.h"
#include "report/runner_up.h"
#include "lostflops/prediction_interval.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "lostflops/report.h"
#include "lostflops/terminal_text.h"
#include "lostflops/walls.h"
#include "lostflops/pipeline_schedules.h"
#include "job/human_format.h"
#include "report/plan_cells.h"

namespace lostflops {

namespace {

std::string grouped(int64_t n) { return lostflops::grouped(static_cast<double>(n)); }

std::string recompute_text(const ParallelPlan& p) {
    if (p.recompute == Recompute::full && p.recompute_layers >= 0) return fmt::format("full x{}", p.recompute_layers);
    return to_string(p.recompute);
}

std::string row(size_t rank, const PlanScore& s, const Wall& w, bool tie) {
    const ParallelPlan& p = s.plan;
    return fmt::format("{:>5} {:>3} {:>3} {:>3} {:>3} {:>5} {:>3} {:>4} {:>4} {:<10} {:>2} {:>3} {:>3} {:>8.3f} {:>9.0f} {:>5.1f}% "
                       "{:>7.1f}  {} {:.2f} s{}\n",
                       rank, p.tp, p.cp, pp_cell(p), vpp_cell(p), p.dp, p.ep, s.micro_batch, p.zero, recompute_text(p),
                       p.sequence_parallel ? "y" : "-", p.tp_comm_overlap ? "y" : "-", p.overlap_grad_reduce ? "y" : "-",
                       s.step_time_s, s.tokens_per_s_per_gpu, 100 * s.mfu, s.peak_bytes / (1024.0 * 1024 * 1024),
                       w.name, w.seconds, tie ? "  = tie of the best" : "");
}

const char* kHeader =
    " rank  tp  cp  pp vpp    dp  ep  mbs zero recompute  sp tpo dpo   step s tok/s/GPU    MFU peak GiB  costliest wall\n";
// "= tie of the best" at the end of a row: a tie of the best plan (Ties below).

// The rank of other shape i: counted by the search, or in the plans kept.
size_t rank_of(const SearchResult& r, size_t i, RankBy by) {
    if (i < r.other_shape_ranks.size()) return r.other_shape_ranks[i];
    const RankedPlan& p = r.other_shapes[i];
    size_t n = 1;
    for (const RankedPlan& q : r.ranked) n += ranks_before(q, p, by) ? 1 : 0;
    return n;
}

void plan_fields(fmt::memory_buffer& b, const PlanScore& s) {
    const ParallelPlan& p = s.plan;
    // The schedule and the stage layout tell a schedule twin or a stage
    // variant from its layout's base plan (null: the even split).
    const auto layers = [](int n) { return n >= 0 ? std::to_string(n) : std::string("null"); };
    fmt::format_to(std::back_inserter(b),
                   "\"parallel\": {{\"tp\": {}, \"cp\": {}, \"pp\": {}, \"dp\": {}, \"vpp\": {}, "
                   "\"pipeline_schedule\": \"{}\", \"first_stage_layers\": {}, \"last_stage_layers\": {}, "
                   "\"ep\": {}, \"etp\": {}, "
                   "\"moe_dispatcher\": \"{}\", \"moe_a2a_overlap\": {}, \"cp_comm_type\": \"{}\", \"zero\": {}, "
                   "\"sequence_parallel\": {}, \"recompute\": \"{}\", \"recompute_layers\": {}, \"tp_comm_overlap\": {}, "
                   "\"overlap_grad_reduce\": {}}}, \"micro_batch_size\": {}, \"tokens_per_s_per_gpu\": {}, "
                   "\"step_time_s\": {}, \"mfu\": {}, \"peak_bytes\": {}",
                   p.tp, p.cp, p.pp, p.dp, p.vpp, schedule_info(effective_schedule(p)).name,
                   layers(p.first_stage_layers), layers(p.last_stage_layers), p.ep, p.expert_tp(),
                   to_string(p.moe_dispatcher),
                   p.moe_a2a_overlap, to_string(p.cp_comm_type), p.zero,
                   p.sequence_parallel, to_string(p.recompute),
                   p.recompute == Recompute::full && p.recompute_layers >= 0 ? std::to_string(p.recompute_layers) : "null",
                   p.tp_comm_overlap, p.overlap_grad_reduce, s.micro_batch, s.tokens_per_s_per_gpu, s.step_time_s, s.mfu,
                   s.peak_bytes);
}

// Ties of the best plan: plans whose 80 % interval of tokens/s per GPU
// overlaps the best plan's (lostflops/prediction_interval.h). The plans of one
// search share the job's regime, so each interval is the plan's own
// throughput times the same [1 / (1 + e90), 1 / (1 + e10)]: plan i ties when
// its upper end reaches the best plan's lower end,
// tokens_i >= tokens_best * (1 + e10) / (1 + e90).
struct Ties {
    double min_tokens = 0;  // 0: no interval (nothing is a tie but the best itself)
    PredictionInterval interval;
    bool of(const PlanScore& s) const { return min_tokens > 0 && s.tokens_per_s_per_gpu >= min_tokens; }
};

Ties ties_of_best(const Job& job, const Calibration& cal, const SearchResult& r, RankBy by) {
    Ties t;
    if (r.ranked.empty() || by == RankBy::memory) return t;
    const PlanScore best = plan_score(job, r, r.ranked.front());
    const Job j = job_with_plan(job, best);
    t.interval = prediction_interval(j, estimate(j, cal), cal);
    if (t.interval.residuals == 0) return t;
    t.min_tokens = best.tokens_per_s_per_gpu * (1 + t.interval.error_p10_pct / 100) /
                   (1 + t.interval.error_p90_pct / 100);
    return t;
}

// `plans`, or the result's own first v.limit plans.
PlanChunks chunks_of(const SearchResult& r, const SearchView& v, const PlanChunks& plans) {
    if (plans) return plans;
    return [&r, &v](const PlanSink& sink) { sink(r, v.limit == 0 ? r.sorted : std::min(v.limit, r.sorted)); };
}

// Writes the buffer out once it holds a MiB.
void flush_over(fmt::memory_buffer& b, const std::function<void(std::string_view)>& write) {
    if (b.size() <= (1 << 20)) return;
    write(std::string_view(b.data(), b.size()));
    b.clear();
}

nlohmann::json detail_json(const Job& job, const Calibration& cal, const SearchResult& r, const RankedPlan& rp,
                           size_t rank, const Ties& ties, const std::vector<std::string>& set_first) {
    const PlanScore s = plan_score(job, r, rp);
    const Job j = job_with_plan(job, s);
    const Wall w = costliest_wall(estimate(j, cal).breakdown);
    return {{"rank", rank},
            {"tie_of_best", ties.of(s)},
            {"parallel", parallel_json(j)},
            {"micro_batch_size", s.micro_batch},
            {"tokens_per_s_per_gpu", s.tokens_per_s_per_gpu},
            {"step_time_s", s.step_time_s},
            {"mfu", s.mfu},
            {"peak_bytes", s.peak_bytes},
            {"costliest_wall", {{"name", w.json_key}, {"seconds", w.seconds}}},
            {"set", [&] {
                 std::vector<std::string> set = set_first;
                 for (std::string& a : plan_set_arguments(job, s)) set.push_back(std::move(a));
                 return set;
             }()}};
}

}  // namespace

Wall costliest_wall(const Breakdown& b) {
    Wall w;
    for (const WallInfo& info : kWalls)
        if (info.seconds != &Breakdown::compute_s && b.*info.seconds > w.seconds) w = {info.name, info.search_key, b.*info.seconds};
    return w;
}

std::string search_table(const Job& job, const Calibration& cal, const SearchResult& r, const SearchView& v) {
    const SearchCounts& c = r.counts;
    std::string out = fmt::format("search: {} on {} x {}, seq {}, global batch {}; ranked by {}\n",
                                  terminal_text(job.model.name), job.cluster.num_gpus, terminal_text(job.cluster.gpu.name), job.training.seq_length,
                                  job.training.global_batch, to_string(v.by));
    // Skipped plans (a floor above the kept plans, search/step_floor.h) are named only where there are some.
    const std::string skipped = c.skipped > 0 ? fmt::format(" + {} skipped (floor)", grouped(c.skipped)) : "";
    out += fmt::format("plans: {} enumerated = {} pruned (divisibility) + {} pruned (memory) + {} evaluated{}; "
                       "{} layouts; {:.2f} s{}\n",
                       grouped(c.enumerated), grouped(c.pruned_divisibility), grouped(c.pruned_memory),
                       grouped(c.evaluated), skipped, grouped(c.layouts), r.wall_s,
                       r.cancelled ? " (interrupted: best found so far)" : "");
    if (r.ranked.empty() && c.pruned_memory == 0 && c.evaluated == 0)
        return out + "no valid plan: the fixed settings (the job's parallel keys, --fix) and the divisibility rules "
                     "leave no layout to evaluate; lostflops estimate on a fixed plan names the rule it breaks\n";
    if (r.ranked.empty()) return out + "no plan fits in GPU memory\n";
    const auto wall_of = [&](const PlanScore& s) {
        return costliest_wall(estimate(job_with_plan(job, s), cal).breakdown);
    };
    const Ties ties = ties_of_best(job, cal, r, v.by);
    out += std::string("\n") + kHeader;
    size_t tied = 0;
    std::vector<PlanScore> listed;
    for (size_t i = 0; i < std::min(v.top, r.sorted); ++i) {
        listed.push_back(plan_score(job, r, r.ranked[i]));
        const PlanScore& s = listed.back();
        const bool tie = i > 0 && ties.of(s);
        tied += tie ? 1 : 0;
        out += row(i + 1, s, wall_of(s), tie);
    }
    if (ties.min_tokens > 0)
        out += fmt::format("  tie of the best: its 80 % interval overlaps the best plan's ({:.0f}–{:.0f} tokens/s "
                           "per GPU; {} held-out runs, {}); {} of the plans listed\n",
                           ties.interval.tokens_per_s_per_gpu_lo, ties.interval.tokens_per_s_per_gpu_hi,
                           ties.interval.residuals, ties.interval.regime, tied);
    for (const ScheduleInfo& si : kSchedules)  // the schedules with a note (DualPipeV's 2V) that the table lists
        for (const PlanScore& s : listed)
            if (si.search_note != nullptr && effective_schedule(s.plan) == si.id) {
                out += fmt::format("  vpp {}{}: {}\n", si.search_twin_vpp, si.vpp_suffix, si.search_note);
                break;
            }
    // A note for each stage layout listed (its ranks), the first three.
    std::vector<std::pair<const ParallelPlan*, std::string>> stages;
    for (size_t i = 0; i < listed.size(); ++i) {
        const ParallelPlan& p = listed[i].plan;
        if (!stage_layout_given(p)) continue;
        auto it = std::find_if(stages.begin(), stages.end(), [&](const auto& s) {
            return s.first->pp == p.pp && s.first->first_stage_layers == p.first_stage_layers &&
                   s.first->last_stage_layers == p.last_stage_layers;
        });
        if (it == stages.end()) it = stages.insert(stages.end(), {&p, ""});
        it->second += fmt::format("{}#{}", it->second.empty() ? "" : ", ", i + 1);
    }
    for (size_t i = 0; i < stages.size() && i < 3; ++i) out += stage_note(job, stages[i].second, *stages[i].first);
    if (ties.min_tokens > 0 && listed.size() >= 2)
        out += near_identical(job, listed, ties.min_tokens / listed.front().tokens_per_s_per_gpu);
    if (listed.size() >= 2) out += "  " + runner_up_line(job, cal, listed[0], listed[1]);
    std::vector<RankedScore> candidates;
    for (size_t i = 1; i < listed.size(); ++i) candidates.push_back({i + 1, listed[i]});
    // The other shapes, best first, while within reach of the best's step (at
    // most kSimplerShapesMax of them); ranked by memory, simpler_line checks
    // the reach in peak bytes.
    for (size_t i = 0; i < r.other_shapes.size() && i < kSimplerShapesMax && !listed.empty(); ++i) {
        if (v.by != RankBy::memory &&
            r.other_shapes[i].step_time_s > listed.front().step_time_s * (1 + kSimplerWithin))
            break;
        candidates.push_back({rank_of(r, i, v.by), plan_score(job, r, r.other_shapes[i])});
    }
    if (!listed.empty())
        if (const std::string line = simpler_line(listed.front(), candidates, v.by); !line.empty()) out += "  " + line;
    if (!r.other_shapes.empty() && v.other_shapes > 0) {
        out += "\nbest plan of each other shape (tp x cp x pp x ep):\n";
        out += kHeader;
        for (size_t i = 0; i < std::min(v.other_shapes, r.other_shapes.size()); ++i) {
            const PlanScore s = plan_score(job, r, r.other_shapes[i]);
            out += row(rank_of(r, i, v.by), s, wall_of(s), ties.of(s));
        }
    }
    const PlanScore best = plan_score(job, r, r.ranked.front());
    if (v.by == RankBy::cost || v.by == RankBy::time_to_train) {
        const double gpu_s_per_btok = 1e9 / best.tokens_per_s_per_gpu;
        out += fmt::format("\nbest: {} GPU-hours per billion tokens", grouped(gpu_s_per_btok / 3600));
        if (v.gpu_hour_price > 0) out += fmt::format(" ({} per billion tokens at {} per GPU-hour)",
                                                     money(gpu_s_per_btok / 3600 * v.gpu_hour_price),
                                                     money(v.gpu_hour_price));
        if (job.training.train_tokens > 0)
            out += fmt::format("; {} for {:.3g} tokens without failures",
                               human_duration(job.training.train_tokens /
                                              (best.tokens_per_s_per_gpu * job.cluster.num_gpus)),
                               job.training.train_tokens);
        out += "\n";
        if (!v.runs.empty()) {
            const RunCost& run = v.runs.front();
            out += fmt::format("whole run (first {} plans re-ranked by it, run: section): {}, goodput {:.1f} %, "
                               "{} expected failures, {} GPU-hours",
                               v.runs.size(), human_duration(run.wall_time_s), 100 * run.goodput,
                               grouped(run.expected_failures, run.expected_failures < 10 ? 1 : 0), grouped(run.gpu_hours));
            if (run.cost_given) out += fmt::format(", cost {}", money(run.cost));
            out += "\n";
        }
    }
    return out;
}

void keep_for_listing(SearchOptions& o, size_t top, size_t other_shapes) {
    o.sort_top = top;
    o.keep_best = std::max(top, kKeepBest);
    o.shape_ranks = other_shapes;
    o.record_spans = top == 0;  // for_each_ranked streams the rest
}

PlanChunks every_plan(const Job& job, const Calibration& cal, const SearchOptions& o, const SearchResult& first) {
    return [&job, &cal, o, &first](const PlanSink& sink) { for_each_ranked(job, cal, o, first, kStreamChunk, sink); };
}

void search_json(const Job& job, const Calibration& cal, const SearchResult& r, const SearchView& v,
                 const std::function<void(std::string_view)>& write, const PlanChunks& plans) {
    const SearchCounts& c = r.counts;
    nlohmann::json head = {{"schema_version", kJsonSchemaVersion},
                           {"ranked_by", to_string(v.by)},
                           {"enumerated", c.enumerated},
                           {"pruned_divisibility", c.pruned_divisibility},
                           {"pruned_memory", c.pruned_memory},
                           {"evaluated", c.evaluated},
                           {"skipped", c.skipped},
                           {"layouts", c.layouts},
                           {"wall_s", r.wall_s},
                           {"cancelled", r.cancelled}};
    const Ties ties = ties_of_best(job, cal, r, v.by);
    if (ties.min_tokens > 0)
        head["best_interval"] = {{"tokens_per_s_per_gpu_range",
                                  {ties.interval.tokens_per_s_per_gpu_lo, ties.interval.tokens_per_s_per_gpu_hi}},
                                 {"step_time_s_range", {ties.interval.step_time_s_lo, ties.interval.step_time_s_hi}},
                                 {"regime", ties.interval.regime},
                                 {"residuals", ties.interval.residuals},
                                 {"tie_min_tokens_per_s_per_gpu", ties.min_tokens}};
    nlohmann::json top = nlohmann::json::array(), others = nlohmann::json::array();
    for (size_t i = 0; i < std::min(v.top, r.sorted); ++i)
        top.push_back(detail_json(job, cal, r, r.ranked[i], i + 1, ties, v.set_first));
    for (size_t i = 0; i < std::min(v.other_shapes, r.other_shapes.size()); ++i)
        others.push_back(detail_json(job, cal, r, r.other_shapes[i], rank_of(r, i, v.by), ties, v.set_first));
    head["top"] = top;
    if (!v.runs.empty()) {
        head["run_rescored_plans"] = v.runs.size();
        head["run"] = run_json(v.runs.front());
    }
    head["other_shapes"] = others;
    std::string text = json_text(head);
    text.pop_back();  // the closing brace: "plans" follows
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    write(text);
    write(",\n  \"plans\": [");
    fmt::memory_buffer b;
    size_t rank = 0;
    chunks_of(r, v, plans)([&](const SearchResult& c, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            ++rank;
            const PlanScore s = plan_score(job, c, c.ranked[i]);
            fmt::format_to(std::back_inserter(b), "{}\n    {{\"rank\": {}, \"tie_of_best\": {}, ", rank == 1 ? "" : ",",
                           rank, ties.of(s));
            plan_fields(b, s);
            b.push_back('}');
            flush_over(b, write);
        }
    });
    write(std::string_view(b.data(), b.size()));
    write(rank > 0 ? "\n  ]\n}\n" : "]\n}\n");
}

void search_csv(const Job& job, const SearchResult& r, const SearchView& v,
                const std::function<void(std::string_view)>& write, const PlanChunks& plans) {
    write("rank,tp,cp,pp,dp,vpp,ep,micro_batch_size,zero,recompute,recompute_layers,sequence_parallel,"
          "tp_comm_overlap,overlap_grad_reduce,step_time_s,tokens_per_s_per_gpu,mfu,peak_bytes,etp,moe_dispatcher,cp_comm_type,"
          "moe_a2a_overlap,pipeline_schedule,first_stage_layers,last_stage_layers\n");
    fmt::memory_buffer b;
    size_t rank = 0;
    chunks_of(r, v, plans)([&](const SearchResult& c, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            const PlanScore s = plan_score(job, c, c.ranked[i]);
            const ParallelPlan& p = s.plan;
            const auto stage = [](int n) { return n >= 0 ? std::to_string(n) : std::string(); };
            fmt::format_to(std::back_inserter(b), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", ++rank, p.tp,
                           p.cp, p.pp, p.dp, p.vpp, p.ep, s.micro_batch, p.zero, to_string(p.recompute),
                           p.recompute == Recompute::full && p.recompute_layers >= 0 ? std::to_string(p.recompute_layers)
                                                                                      : "",
                           p.sequence_parallel, p.tp_comm_overlap, p.overlap_grad_reduce, s.step_time_s,
                           s.tokens_per_s_per_gpu, s.mfu, s.peak_bytes, p.expert_tp(), to_string(p.moe_dispatcher),
                           to_string(p.cp_comm_type), p.moe_a2a_overlap, schedule_info(effective_schedule(p)).name,
                           stage(p.first_stage_layers), stage(p.last_stage_layers));
            flush_over(b, write);
        }
    });
    write(std::string_view(b.data(), b.size()));
}

}  // namespace lostflops
