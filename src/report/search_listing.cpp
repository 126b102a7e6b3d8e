// The policy of `lostflops search` (include/lostflops/search_listing.h), moved
// out of the command line so that the Python module answers the same: a
// listing of the first N plans keeps a bounded set of them (keep_for_listing),
// a table of every plan sorts all in memory, JSON and CSV of every plan stream
// them chunk by chunk (for_each_ranked); --by time-to-train | cost with
// train_tokens re-ranks the first kRunRescored plans by the whole run
// (search_run.cpp); a sweep keeps the best plan of each cluster size.
#include "lostflops/search_listing.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "interop/maxtext_export.h"
#include "lostflops/error.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/report.h"
#include "job/hardware_bounds.h"
#include "job/human_format.h"

namespace lostflops {

Listing search_listing(const Job& job, const Calibration& cal, SearchOptions opts, const ListingRequest& req) {
    Listing l;
    const bool table = req.format == ListingFormat::table;
    const bool top_all = req.top == 0;
    const bool by_run = (req.by == RankBy::time_to_train || req.by == RankBy::cost) && job.training.train_tokens > 0;
    const size_t sorted = top_all ? 0 : by_run ? std::max(req.top, kRunRescored) : req.top;
    opts.by = req.by;
    l.view.by = req.by;
    l.view.gpu_hour_price = job.run.price_per_gpu_hour;
    l.view.top = table && top_all ? std::numeric_limits<size_t>::max() : req.top;
    l.streamed = top_all && !table && !req.keep_every_plan;
    if (req.keep_every_plan || (table && top_all)) opts.sort_top = sorted;  // every plan kept
    else keep_for_listing(opts, sorted, l.view.other_shapes);
    l.result = search_plans(job, cal, opts);
    if (by_run) l.view.runs = rescore_by_run(job, cal, l.result, kRunRescored);
    l.view.limit = l.view.top;
    if (req.format == ListingFormat::json)
        l.view.top = l.view.top == 0 ? kJsonTopDetails : std::min(l.view.top, kJsonTopDetails);
    l.options = std::move(opts);
    return l;
}

PlanChunks listing_plans(const Job& job, const Calibration& cal, const Listing& listing) {
    return listing.streamed ? every_plan(job, cal, listing.options, listing.result) : PlanChunks{};
}

SweepPoint sweep_point(const Job& job, const Calibration& cal, SearchOptions opts) {
    SweepPoint pt;
    pt.num_gpus = job.cluster.num_gpus;
    opts.sort_top = 1;
    opts.keep_best = 1;  // the best plan alone
    opts.shape_ranks = 0;
    const SearchResult r = search_plans(job, cal, opts);
    pt.counts = r.counts;
    if (!r.ranked.empty()) pt.best = plan_score(job, r, r.ranked.front());
    return pt;
}

namespace {
bool cancelled(const SearchOptions& o) { return o.cancel != nullptr && o.cancel->load(); }
}  // namespace

std::vector<SweepPoint> sweep_sizes(const JobOnGpus& job_on, const Calibration& cal, const SearchOptions& opts,
                                    const std::vector<int>& sizes, const std::function<void(size_t)>& on_size) {
    std::vector<SweepPoint> points;
    for (size_t i = 0; i < sizes.size() && !cancelled(opts); ++i) {
        if (on_size) on_size(i);
        SweepPoint pt = sweep_point(job_on(sizes[i]), cal, opts);
        pt.num_gpus = sizes[i];
        points.push_back(std::move(pt));
    }
    return points;
}

std::vector<SweepPoint> min_gpus_sweep(const Job& job, const JobOnGpus& job_on, const Calibration& cal,
                                       const SearchOptions& opts) {
    // Within a node every count from the job's own up (a cluster may hold
    // part of one node), then whole nodes (a count past one node that does
    // not fill whole nodes is refused: job/validate.cpp).
    // A count the job's own parallel keys cannot lay out holds no plan of
    // it, so it is passed over (it was refused, exit 2: tp 8 x pp 2 at 8
    // GPUs): one that tp x pp x cp does not divide (world = tp x pp x cp x
    // dp), or pp x etp x ep (the expert layers fold a stage's tp x cp x dp as
    // etp x ep x expert-dp: job/validate.cpp); and one the job's other
    // checks refuse at that count (its data-parallel ranks not dividing the
    // global batch), the job having loaded at its own count, up to
    // kMaxRefusedCounts of them in a row.
    constexpr int kMaxRefusedCounts = 1024;
    const ParallelPlan& p = job.plan;
    const int64_t model = static_cast<int64_t>(p.tp) * p.pp * p.cp;
    const int64_t expert = static_cast<int64_t>(p.pp) * p.expert_tp() * p.ep;
    int refused = 0;
    const int gpn = job.cluster.gpus_per_node;
    for (int n = std::min(gpn, job.cluster.num_gpus); n <= bounds::kMaxGpus && !cancelled(opts); n += n < gpn ? 1 : gpn) {
        if (n % model != 0 || n % expert != 0) continue;
        std::optional<Job> on;
        try {
            on = job_on(n);
        } catch (const InputError&) {
            if (++refused > kMaxRefusedCounts) throw;
            continue;
        }
        refused = 0;
        SweepPoint pt = sweep_point(*on, cal, opts);
        pt.num_gpus = n;
        if (pt.best) return {std::move(pt)};
    }
    return {};
}

std::string dropped_setting_note(const std::string& source, const UnlaunchableFix& u) {
    return source + ": --best searched without " + u.key + ": " + u.rule;
}

bool is_missing_plan(const InputError& e) {
    return e.key() == "parallel" && e.message().rfind("missing section", 0) == 0;
}

SearchedPlan searched_plan(const SearchJob& sj, const Calibration& cal, const std::string& source) {
    SearchedPlan out;
    const Job won = best_launchable_plan(sj, cal, std::nullopt, source, &out.dropped);
    out.won.plan = won.plan;
    out.won.micro_batch = won.training.micro_batch;
    out.sets = plan_set_arguments(sj.job, out.won);
    for (const UnlaunchableFix& u : out.dropped)
        if (u.key == "parallel.pipeline_schedule" && standard_mapping(out.won.plan))
            out.sets.push_back(u.key + "=null");  // the 1F1B family, as searched (a DualPipeV winner names its own)
    return out;
}

std::vector<PlanNote> searched_plan_notes(const SearchedPlan& p, const std::string& source, bool missing) {
    std::vector<PlanNote> notes;
    for (const UnlaunchableFix& u : p.dropped) notes.push_back({u.key, dropped_setting_note(source, u)});
    notes.push_back({"parallel", source + ": the plan is the search's best" +
                                     (missing ? " (the job has no parallel section)" : "") + ": " +
                                     plan_words(p.won) + " (lostflops search lists the others)"});
    return notes;
}

Job best_launchable_plan(const SearchJob& sj, const Calibration& cal, std::optional<LaunchStack> target,
                         const std::string& source, std::vector<UnlaunchableFix>* dropped, const PlanTaker& takes,
                         std::string* taken_note) {
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    if (target) o.fix.launch = *target;
    o.sort_top = takes.check ? kTakesWithin : 1;
    o.keep_best = o.sort_top;
    o.shape_ranks = 0;
    // The job's settings the stack cannot run: searched without them.
    Job job = sj.job;
    for (const UnlaunchableFix& u : unlaunchable_fixes(job, o.fix)) {
        if (u.key == "parallel.pipeline_schedule") {
            job.plan.schedule = kDefaultSchedule;  // the 1F1B family: follows vpp
            job.plan.schedule_given = false;
        } else if (u.key == "parallel.zero") {
            o.fix.zero.reset();
        } else if (u.key == "parallel.moe_a2a_overlap") {
            o.fix.moe_a2a_overlap.reset();
        }
        if (dropped) dropped->push_back(u);
    }
    const SearchResult r = search_plans(job, cal, o);
    const std::string who = takes.check ? takes.who : to_string(*o.fix.launch);
    // Nothing evaluated and nothing pruned: the job's fixed keys break a
    // divisibility rule, which is bad input (exit 2), not a job too large.
    if (r.ranked.empty() && r.counts.evaluated == 0 && r.counts.pruned_memory == 0 && !r.cancelled)
        throw InputError(source, "parallel",
                         std::string(kNoPlanCanBeSearched) +
                             "the job's parallel keys and the divisibility rules leave no layout to evaluate "
                             "(lostflops estimate with the plan given names the rule)");
    if (r.ranked.empty())
        throw NoPlanFits(source, "parallel",
                         "no plan that " + who + " can launch fits in GPU memory (lostflops search says why)");
    if (!takes.check) return job_with_plan(job, plan_score(job, r, r.ranked.front()));
    // The ranking's order: the first plan the exporter takes.
    const size_t n = std::min(exact_prefix(r, o.by), kTakesWithin);
    std::string best_why;
    for (size_t i = 0; i < n; ++i) {
        const PlanScore s = plan_score(job, r, r.ranked[i]);
        Job won = job_with_plan(job, s);
        try {
            takes.check(won);
            if (i > 0 && taken_note != nullptr) {
                const PlanScore best = plan_score(job, r, r.ranked.front());
                *taken_note = fmt::format("the plan is rank {} of the search ({} tokens/s per GPU, {:+.2f} % against "
                                          "the best): {} cannot write the {} before it (the best, {}: {})",
                                          i + 1, grouped(s.tokens_per_s_per_gpu),
                                          100 * (s.tokens_per_s_per_gpu / best.tokens_per_s_per_gpu - 1), who, i,
                                          plan_words(best), best_why);
            }
            return won;
        } catch (const InputError& e) {
            if (best_why.empty()) best_why = std::string(e.key()) + ": " + e.message();
        }
    }
    const std::string rules = "under " + std::string(to_string(*o.fix.launch)) + "'s launch rules";
    // Every plan that fits was tried: none fits that the exporter takes.
    if (!r.first_dropped && n == r.ranked.size())
        throw NoPlanFits(source, "parallel",
                         "no plan that fits (" + rules + ", " + std::to_string(n) + " of them) is one " + who +
                             " can write (the best: " + best_why + ")");
    throw InputError(source, "parallel",
                     "none of the " + std::to_string(n) + " best plans that fit (" + rules + ") is one " + who +
                         " can write (the best: " + best_why +
                         "); a plan further down the ranking may be: lostflops search --top lists them, and export " +
                         "takes a plan given with --set");
}

PlanTaker maxtext_plan_taker() {
    return {"MaxText", [](const Job& j) { (void)export_maxtext(j); }};
}

std::optional<Framework> export_framework(const std::string& kind, Framework job_framework) {
    if (kind == "torchtitan")
        return job_framework == Framework::fsdp ? std::nullopt : std::optional(Framework::fsdp);
    if (kind == "megatron")
        return job_framework == Framework::megatron_core || job_framework == Framework::megatron_lm
                   ? std::nullopt
                   : std::optional(Framework::megatron_core);
    return std::nullopt;
}

std::string sweep_json_text(const std::vector<SweepPoint>& points) {
    return json_text(nlohmann::json{{"schema_version", kJsonSchemaVersion}, {"sweep", sweep_json(points)}});
}

}  // namespace lostflops
