// The ranking's total order and what is read off a ranked plan
// (include/lostflops/search.h): the order, the exact prefix of a listing, a
// whole ranking streamed chunk by chunk, and a plan's figures and job.
#include <algorithm>

#include "lostflops/search.h"
#include "search/enumerate.h"
#include "search/knobs.h"
#include "workload/flops.h"

namespace lostflops {

const char* to_string(RankBy by) {
    switch (by) {
        case RankBy::throughput: return "throughput";
        case RankBy::time_to_train: return "time-to-train";
        case RankBy::cost: return "cost";
        case RankBy::memory: return "memory";
    }
    return "?";
}

bool ranks_before(const RankedPlan& a, const RankedPlan& b, RankBy by) {
    // With the GPUs fixed, time to train and cost are proportional to the step time.
    if (by == RankBy::memory && a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
    if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
    return a.order < b.order;
}

size_t exact_prefix(const SearchResult& r, RankBy by) {
    if (!r.first_dropped) return r.sorted;
    const auto end = r.ranked.begin() + static_cast<std::ptrdiff_t>(r.sorted);
    return static_cast<size_t>(std::lower_bound(r.ranked.begin(), end, *r.first_dropped,
                                                [by](const RankedPlan& a, const RankedPlan& b) {
                                                    return ranks_before(a, b, by);
                                                }) -
                               r.ranked.begin());
}

void for_each_ranked(const Job& job, const Calibration& cal, const SearchOptions& options, const SearchResult& first,
                     size_t chunk, const std::function<void(const SearchResult&, size_t)>& emit) {
    size_t n = exact_prefix(first, options.by);
    emit(first, n);
    if (!first.first_dropped || first.cancelled || n == 0) return;
    SearchOptions o = options;
    o.keep_best = std::max<size_t>(chunk, 1);
    o.sort_top = 0;
    o.shape_ranks = 0;
    o.progress = {};
    o.record_spans = false;
    if (first.spans.size() == first.layouts.size()) o.spans = &first.spans;
    RankedPlan last = first.ranked[n - 1];
    for (;;) {
        o.after = last;
        const SearchResult r = search_plans(job, cal, o);
        n = exact_prefix(r, o.by);
        emit(r, n);
        if (!r.first_dropped || r.cancelled || n == 0) return;
        last = r.ranked[n - 1];
    }
}

Job job_with_plan(const Job& job, const PlanScore& score) {
    Job out = job;
    out.plan = score.plan;
    out.training.micro_batch = score.micro_batch;
    return out;
}

PlanScore plan_score(const Job& job, const SearchResult& result, const RankedPlan& plan) {
    const SearchLayout& l = result.layouts[plan.order >> 32];
    PlanScore s;
    s.plan = job.plan;
    search::apply_layout(s.plan, l);
    search::apply_knob_code(s.plan, static_cast<uint32_t>(plan.order & 0xffffffffu));
    s.micro_batch = l.micro_batch;
    s.step_time_s = plan.step_time_s;
    s.peak_bytes = plan.peak_bytes;
    // As estimate.cpp finish_time computes them (no Job copy: a JSON ranking
    // decodes millions of plans).
    const Training& tr = job.training;
    const double tokens_per_step = static_cast<double>(tr.global_batch) * tr.seq_length;
    const double gpus = job.cluster.num_gpus;
    s.tokens_per_s_per_gpu = tokens_per_step / s.step_time_s / gpus;
    // Model FLOPs do not depend on recomputation (flops.h): no per-stage count needed.
    const FlopsPerToken fpt = flops_per_token(job.model, tr, s.plan.recompute, 1.0, moe_kept_share(s.plan));
    const double model_tflops = fpt.model * tokens_per_step / s.step_time_s / gpus / 1e12;
    s.mfu = model_tflops / job.cluster.gpu.peak_tflops(tr.precision);
    return s;
}

}  // namespace lostflops
