// `search --compare` (where a given plan ranks and which walls make the
// difference) and the cluster-size sweep (`--gpus`, `--min-gpus`). Scaling
// efficiency: tokens/s per GPU at a size over that at the smallest size that
// fits (strong scaling, same global batch).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lostflops/error.h"
#include "lostflops/search_report.h"
#include "lostflops/walls.h"
#include "job/validate.h"

namespace lostflops {

namespace {

// The fixed settings on top of the job's plan (dp derived when not given).
Job job_with_fix(const Job& job, const PlanFix& f) {
    Job j = job;
    ParallelPlan& p = j.plan;
    p.tp = f.tp.value_or(p.tp);
    p.cp = f.cp.value_or(p.cp);
    p.pp = f.pp.value_or(p.pp);
    p.vpp = f.vpp.value_or(p.vpp);
    p.ep = f.ep.value_or(p.ep);
    if (f.etp) p.etp = *f.etp;
    p.moe_dispatcher = f.moe_dispatcher.value_or(p.moe_dispatcher);
    p.zero = f.zero.value_or(p.zero);
    p.recompute = f.recompute.value_or(p.recompute);
    p.recompute_layers = p.recompute == Recompute::full ? f.recompute_layers.value_or(-1) : -1;
    p.sequence_parallel = f.sequence_parallel.value_or(p.sequence_parallel);
    p.tp_comm_overlap = f.tp_comm_overlap.value_or(p.tp_comm_overlap);
    p.overlap_grad_reduce = f.overlap_grad_reduce.value_or(p.overlap_grad_reduce);
    if (f.schedule) p.schedule = *f.schedule;
    p.first_stage_layers = f.first_stage_layers.value_or(p.first_stage_layers);
    p.last_stage_layers = f.last_stage_layers.value_or(p.last_stage_layers);
    const int64_t model_par = static_cast<int64_t>(p.tp) * p.cp * p.pp;
    p.dp = f.dp.value_or(static_cast<int>(std::max<int64_t>(1, j.cluster.num_gpus / model_par)));
    j.training.micro_batch = f.micro_batch.value_or(j.training.micro_batch);
    return j;
}

}  // namespace

Comparison compare_plan(const Job& job, const Calibration& cal, const SearchResult& r, const PlanFix& fix,
                        RankBy by) {
    Comparison c;
    if (r.ranked.empty()) {
        c.not_found_reason = "no plan fits in GPU memory";
        return c;
    }
    const RankedPlan* match = nullptr;
    for (const RankedPlan& p : r.ranked)
        if ((match == nullptr || ranks_before(p, *match, by)) && plan_matches(fix, plan_score(job, r, p))) match = &p;
    if (match == nullptr) {
        const Job j = job_with_fix(job, fix);
        try {
            validate_job(j);
            const Estimate e = estimate(j, cal);
            c.not_found_reason = e.memory.fits
                ? "the search did not evaluate it (a setting outside the searched knobs)"
                : fmt::format("it does not fit: {:.1f} GiB per GPU on pipeline rank {} > {:.1f} GiB usable",
                              e.memory.peak_bytes / (1024.0 * 1024 * 1024), e.memory.worst_stage,
                              e.memory.capacity_bytes / (1024.0 * 1024 * 1024));
        } catch (const InputError& e) {
            c.not_found_reason = "it is not a valid plan: " + e.message();
        }
        return c;
    }
    c.found = true;
    size_t rank = 1;
    for (const RankedPlan& q : r.ranked) rank += ranks_before(q, *match, by) ? 1 : 0;
    c.rank = rank;
    const RankedPlan* best = &r.ranked.front();
    if (r.sorted == 0)
        for (const RankedPlan& q : r.ranked)
            if (ranks_before(q, *best, by)) best = &q;
    c.best = plan_score(job, r, *best);
    c.compared = plan_score(job, r, *match);
    c.best_estimate = estimate(job_with_plan(job, c.best), cal);
    c.compared_estimate = estimate(job_with_plan(job, c.compared), cal);
    return c;
}

std::string comparison_table(const Comparison& c) {
    if (!c.found) return "compare: no evaluated plan has these settings: " + c.not_found_reason + "\n";
    std::string out = fmt::format("compare: rank {} — {}\n", c.rank, plan_words(c.compared));
    out += fmt::format("  {:.0f} tokens/s per GPU, {:.1f}% below the best ({:.0f}: {})\n",
                       c.compared.tokens_per_s_per_gpu,
                       100 * (1 - c.compared.tokens_per_s_per_gpu / c.best.tokens_per_s_per_gpu),
                       c.best.tokens_per_s_per_gpu, plan_words(c.best));
    std::vector<std::pair<double, const char*>> diffs;
    for (const WallInfo& w : kWalls)
        diffs.emplace_back(c.compared_estimate.breakdown.*w.seconds - c.best_estimate.breakdown.*w.seconds, w.name);
    std::sort(diffs.begin(), diffs.end(), [](const auto& a, const auto& b) {
        return std::abs(a.first) > std::abs(b.first) || (std::abs(a.first) == std::abs(b.first) && a.second < b.second);
    });
    out += "  walls that differ most (this plan - best, seconds per step):";
    for (size_t i = 0; i < 4 && i < diffs.size(); ++i)
        if (diffs[i].first != 0) out += fmt::format(" {} {:+.3f};", diffs[i].second, diffs[i].first);
    return out + "\n";
}

nlohmann::json comparison_json(const Comparison& c) {
    if (!c.found) return {{"found", false}, {"reason", c.not_found_reason}};
    nlohmann::json walls = nlohmann::json::object();
    for (const WallInfo& w : kWalls)
        walls[w.search_key] = c.compared_estimate.breakdown.*w.seconds - c.best_estimate.breakdown.*w.seconds;
    return {{"found", true},
            {"rank", c.rank},
            {"plan", plan_words(c.compared)},
            {"tokens_per_s_per_gpu", c.compared.tokens_per_s_per_gpu},
            {"best_tokens_per_s_per_gpu", c.best.tokens_per_s_per_gpu},
            {"gap_fraction", 1 - c.compared.tokens_per_s_per_gpu / c.best.tokens_per_s_per_gpu},
            {"wall_difference_s", walls}};
}

std::string sweep_table(const std::vector<SweepPoint>& points) {
    std::string out = "   gpus  tok/s/GPU   tok/s (all)   step s    MFU  scaling  GPU-h/Btok  best plan\n";
    double base = 0;
    for (const SweepPoint& p : points) {
        if (!p.best) {
            out += fmt::format("{:>7}  no plan fits ({} plans pruned for memory)\n", p.num_gpus, p.counts.pruned_memory);
            continue;
        }
        if (base == 0) base = p.best->tokens_per_s_per_gpu;
        // GPU-hours per billion tokens: the cost of the size.
        out += fmt::format("{:>7} {:>10.0f} {:>13.0f} {:>8.3f} {:>5.1f}% {:>7.1f}% {:>11.0f}  {}\n", p.num_gpus,
                           p.best->tokens_per_s_per_gpu, p.best->tokens_per_s_per_gpu * p.num_gpus, p.best->step_time_s,
                           100 * p.best->mfu, 100 * p.best->tokens_per_s_per_gpu / base,
                           1e9 / p.best->tokens_per_s_per_gpu / 3600, plan_words(*p.best));
    }
    return out;
}

nlohmann::json sweep_json(const std::vector<SweepPoint>& points) {
    nlohmann::json out = nlohmann::json::array();
    double base = 0;
    for (const SweepPoint& p : points) {
        nlohmann::json o = {{"num_gpus", p.num_gpus}, {"fits", p.best.has_value()},
                            {"enumerated", p.counts.enumerated}, {"evaluated", p.counts.evaluated},
                            {"skipped", p.counts.skipped}};
        if (p.best) {
            if (base == 0) base = p.best->tokens_per_s_per_gpu;
            o["plan"] = plan_words(*p.best);
            o["tokens_per_s_per_gpu"] = p.best->tokens_per_s_per_gpu;
            o["step_time_s"] = p.best->step_time_s;
            o["mfu"] = p.best->mfu;
            o["peak_bytes"] = p.best->peak_bytes;
            o["scaling_efficiency"] = p.best->tokens_per_s_per_gpu / base;
            o["gpu_hours_per_billion_tokens"] = 1e9 / p.best->tokens_per_s_per_gpu / 3600;
        }
        out.push_back(o);
    }
    return out;
}

}  // namespace lostflops
