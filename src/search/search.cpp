// The search driver: layouts from the enumerator (search/layout_space.h,
// shapes split across worker threads), their plans evaluated by worker
// threads that take layouts from a shared counter, the
// evaluated plans merged and ranked by a total order (include/lostflops/search.h),
// so the result does not depend on the thread count or scheduling.
#include "lostflops/search.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <chrono>
#include <thread>
#include <limits>
#include <optional>

#include "estimate/memory.h"
#include "search/enumerate.h"
#include "search/cp_comm_choice.h"
#include "search/dispatcher_choice.h"
#include "search/evaluate_layout.h"
#include "search/layout_space.h"
#include "search/screen_exact.h"
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

namespace {

search::LayoutFix layout_fix(const PlanFix& f) {
    search::LayoutFix l;
    l.tp = f.tp.value_or(0);
    l.cp = f.cp.value_or(0);
    l.pp = f.pp.value_or(0);
    l.dp = f.dp.value_or(0);
    l.vpp = f.vpp.value_or(0);
    l.ep = f.ep.value_or(0);
    l.etp = f.etp.value_or(0);
    l.dispatcher = f.moe_dispatcher ? static_cast<int>(*f.moe_dispatcher) : -1;
    l.a2a_overlap = f.moe_a2a_overlap ? static_cast<int>(*f.moe_a2a_overlap) : -1;
    l.micro_batch = f.micro_batch.value_or(0);
    if (f.launch) l.launch = static_cast<int>(*f.launch);
    return l;
}

struct Worker {
    SearchCounts counts;
    std::vector<int64_t> before;  // plans ranked before each of SearchOptions::count_before
    std::vector<RankedPlan> plans;
    std::vector<RankedPlan> layout_best;  // best plan of each layout this worker ran
    // The best SearchOptions::sort_top exact plans so far, a max-heap by rank:
    // a plan whose bound ranks at or after its top needs no exact price.
    std::vector<RankedPlan> exact_top;
    std::optional<RankedPlan> cutoff;     // keep_best: the best plan dropped so far
};

// keep_best: drop the plans from `from` on that rank after the worker's
// cutoff; when 2N are kept, keep the N best and make the next one the cutoff.
// Invariant: every plan ranked before the cutoff is kept.
void keep_best_plans(Worker& w, size_t from, size_t keep, RankBy by) {
    const auto before = [by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); };
    if (w.cutoff) {
        const RankedPlan c = *w.cutoff;
        const auto first = w.plans.begin() + static_cast<std::ptrdiff_t>(from);
        w.plans.erase(std::remove_if(first, w.plans.end(), [&](const RankedPlan& p) { return !before(p, c); }),
                      w.plans.end());
    }
    if (w.plans.size() < 2 * keep) return;
    const auto nth = w.plans.begin() + static_cast<std::ptrdiff_t>(keep);
    std::nth_element(w.plans.begin(), nth, w.plans.end(), before);
    w.cutoff = *nth;
    w.plans.resize(keep);
}

// Transparent huge pages for a large buffer, where the kernel offers them on
// request (transparent_hugepage=madvise): a ranking of millions of plans
// otherwise takes one page fault per 4 KiB. A hint; failure changes nothing.
void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;  // x86-64 transparent huge page (PMD) size
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

void add(SearchCounts& to, const SearchCounts& c) {
    to.layouts += c.layouts;
    to.enumerated += c.enumerated;
    to.pruned_divisibility += c.pruned_divisibility;
    to.pruned_memory += c.pruned_memory;
    to.evaluated += c.evaluated;
}

}  // namespace

SearchResult search_plans(const Job& job, const Calibration& cal, const SearchOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    check_fix_launchable(job, options.fix);
    const size_t keep = options.keep_best;
    SearchResult result;
    const unsigned cores = options.threads > 0 ? static_cast<unsigned>(options.threads) : std::thread::hardware_concurrency();
    // A fixed context-parallel variant is every layout's own: the framework's rules check it.
    Job fixed_cp;
    if (options.fix.cp_comm_type) {
        fixed_cp = job;
        fixed_cp.plan.cp_comm_type = *options.fix.cp_comm_type;
    }
    search::LayoutSpace space = search::layout_space(options.fix.cp_comm_type ? fixed_cp : job, options.fix,
                                                     layout_fix(options.fix), std::max(1u, cores));
    result.layouts = std::move(space.layouts);
    // MoE layouts: the fastest dispatcher of each unless fixed (search/dispatcher_choice.h).
    if (job.model.is_moe() && !options.fix.moe_dispatcher)
        for (search::Layout& l : result.layouts)
            l.dispatcher = search::fastest_dispatcher(job, cal, l, options.fix.launch);
    // Context-parallel layouts: the fastest variant the framework launches, or the fixed one.
    {
        search::CpCommChooser cp_comm(job, cal, options.fix);
        for (search::Layout& l : result.layouts) l.cp_comm_type = cp_comm(l);
    }
    const int64_t upper = space.plans;  // plans of the valid layouts: at most this many are evaluated
    result.counts.enumerated += space.rejected_plans;
    result.counts.pruned_divisibility += space.rejected_plans;

    const size_t n_layouts = result.layouts.size();
    unsigned threads = std::max(1u, std::min<unsigned>(cores, static_cast<unsigned>(std::max<size_t>(1, n_layouts / 64))));
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::atomic<bool> stopped{false};
    std::vector<Worker> workers(threads);
    // The screen (LayoutEvaluator::run) when a listing keeps its best plans
    // and only the first sort_top must be exact; a streamed chunk (after), a
    // ranking that keeps every plan (--compare, a table of all) and a count of
    // the plans before given ones (count_before) are exact throughout.
    const bool screen =
        options.sort_top > 0 && options.keep_best > 0 && !options.after && options.count_before.empty();
    for (Worker& w : workers) w.before.assign(options.count_before.size(), 0);
    result.counted_before.assign(options.count_before.size(), 0);
    if (options.record_spans) result.spans.assign(n_layouts, LayoutSpan{});
    // Room for every plan a worker could keep, reserved (not touched) up
    // front: no reallocation while the plans stream in, and the merge appends
    // in place.
    const size_t room = keep > 0 ? std::min<size_t>(static_cast<size_t>(upper), 2 * keep + (size_t{1} << 16))
                                 : static_cast<size_t>(std::min<int64_t>(upper, 2 * upper / threads + (int64_t{1} << 20)));
    for (Worker& w : workers) {
        w.plans.reserve(room);
        advise_huge_pages(w.plans.data(), w.plans.capacity() * sizeof(RankedPlan));
    }
    // A later chunk of a streamed ranking (spans and `after`): only the
    // layouts with plans ranked after `after`, in the order of their best
    // plan: the workers' cutoffs (keep_best) come early, and then every
    // layout whose best plan ranks after a worker's cutoff is skipped.
    std::vector<uint32_t> order;
    const bool ordered = options.spans && options.after;
    if (ordered) {
        const std::vector<LayoutSpan>& spans = *options.spans;
        for (size_t i = 0; i < n_layouts; ++i)
            if (spans[i].any && ranks_before(*options.after, spans[i].worst, options.by))
                order.push_back(static_cast<uint32_t>(i));
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
            return ranks_before(spans[a].best, spans[b].best, options.by);
        });
    }
    const size_t n_items = ordered ? order.size() : n_layouts;
    const auto work = [&](Worker& w) {
        search::LayoutEvaluator ev(job, cal, options.fix);
        const auto before = [&](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, options.by); };
        constexpr size_t kBlock = 16;
        for (;;) {
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
                stopped = true;
                return;
            }
            const size_t first = next.fetch_add(kBlock);
            if (first >= n_items) return;
            const size_t last = std::min(n_items, first + kBlock);
            for (size_t k = first; k < last; ++k) {
                const size_t i = ordered ? order[k] : k;
                if (options.spans) {
                    const LayoutSpan& sp = (*options.spans)[i];
                    if (!sp.any || (options.after && !ranks_before(*options.after, sp.worst, options.by)) ||
                        (w.cutoff && !ranks_before(sp.best, *w.cutoff, options.by)))
                        continue;
                }
                // A plan needs its exact step when its bound ranks before the sort_top-th exact plan.
                const RankedPlan* exact_cutoff =
                    screen && w.exact_top.size() == options.sort_top ? &w.exact_top.front() : nullptr;
                size_t added = ev.run(result.layouts[i], static_cast<uint32_t>(i), w.counts, w.plans, exact_cutoff,
                                      options.by);
                if (screen) {
                    for (auto p = w.plans.end() - static_cast<std::ptrdiff_t>(added); p != w.plans.end(); ++p) {
                        if (search::is_bound(*p)) continue;
                        if (w.exact_top.size() == options.sort_top && !before(*p, w.exact_top.front())) continue;
                        w.exact_top.push_back(*p);
                        std::push_heap(w.exact_top.begin(), w.exact_top.end(), before);
                        if (w.exact_top.size() > options.sort_top) {
                            std::pop_heap(w.exact_top.begin(), w.exact_top.end(), before);
                            w.exact_top.pop_back();
                        }
                    }
                }
                if (!options.count_before.empty()) {
                    for (auto p = w.plans.end() - static_cast<std::ptrdiff_t>(added); p != w.plans.end(); ++p)
                        for (size_t j = 0; j < options.count_before.size(); ++j)
                            w.before[j] += ranks_before(*p, options.count_before[j], options.by) ? 1 : 0;
                }
                if (options.after && added > 0) {
                    const RankedPlan a = *options.after;
                    const auto first_added = w.plans.end() - static_cast<std::ptrdiff_t>(added);
                    const auto kept = std::remove_if(first_added, w.plans.end(), [&](const RankedPlan& p) {
                        return !ranks_before(a, p, options.by);
                    });
                    added -= static_cast<size_t>(w.plans.end() - kept);
                    w.plans.erase(kept, w.plans.end());
                }
                if (added == 0) continue;
                const auto from = w.plans.end() - static_cast<std::ptrdiff_t>(added);
                const auto [lo, hi] = std::minmax_element(from, w.plans.end(), [&](const RankedPlan& a, const RankedPlan& b) {
                    return ranks_before(a, b, options.by);
                });
                w.layout_best.push_back(*lo);
                if (options.record_spans) {
                    // A bound is below its plan's step: the layout's worst is then unknown.
                    RankedPlan worst = *hi;
                    if (std::any_of(from, w.plans.end(), search::is_bound))
                        worst.step_time_s = std::numeric_limits<double>::infinity();
                    result.spans[i] = LayoutSpan{*lo, worst, true};
                }
                if (keep > 0) keep_best_plans(w, w.plans.size() - added, keep, options.by);
            }
            done.fetch_add(last - first, std::memory_order_relaxed);
        }
    };
    {
        // With a progress callback every worker gets a thread and the calling
        // thread only reports (it sleeps between reports).
        const unsigned first_spawned = options.progress ? 0 : 1;
        std::vector<std::thread> pool;
        for (unsigned t = first_spawned; t < threads; ++t) pool.emplace_back(work, std::ref(workers[t]));
        if (options.progress) {
            while (done.load() < n_items && !stopped.load()) {
                options.progress(static_cast<double>(done.load()) / static_cast<double>(n_items));
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        } else {
            work(workers[0]);
        }
        for (auto& th : pool) th.join();
    }
    result.cancelled = stopped.load() || (options.cancel && options.cancel->load());
    // With keep_best, only the plans ranked before the best dropped one are
    // certain; the others are dropped before the merge (less to copy and sort).
    for (const Worker& w : workers)
        if (w.cutoff && (!result.first_dropped || ranks_before(*w.cutoff, *result.first_dropped, options.by)))
            result.first_dropped = w.cutoff;
    size_t total = 0;
    for (Worker& w : workers) {
        if (result.first_dropped) {
            const RankedPlan c = *result.first_dropped;
            w.plans.erase(std::remove_if(w.plans.begin(), w.plans.end(),
                                         [&](const RankedPlan& p) { return !ranks_before(p, c, options.by); }),
                          w.plans.end());
        }
        total += w.plans.size();
    }
    result.ranked = std::move(workers[0].plans);
    if (result.ranked.capacity() < total) result.ranked.reserve(total);
    std::vector<RankedPlan> layout_best;
    for (size_t i = 0; i < workers.size(); ++i) {
        Worker& w = workers[i];
        layout_best.insert(layout_best.end(), w.layout_best.begin(), w.layout_best.end());
        add(result.counts, w.counts);
        for (size_t j = 0; j < w.before.size(); ++j) result.counted_before[j] += w.before[j];
        if (i > 0) result.ranked.insert(result.ranked.end(), w.plans.begin(), w.plans.end());
        std::vector<RankedPlan>().swap(w.plans);
    }
    const RankBy by = options.by;
    const auto before = [by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); };
    const size_t n_sort = options.sort_top == 0 ? result.ranked.size() : std::min(options.sort_top, result.ranked.size());
    // The first n_sort in rank order, each exact (search/screen_exact.h).
    if (screen) {
        search::sort_prefix_exact(job, cal, options, result, n_sort);
    } else if (n_sort == result.ranked.size()) {
        std::sort(result.ranked.begin(), result.ranked.end(), before);
    } else {
        std::partial_sort(result.ranked.begin(), result.ranked.begin() + static_cast<std::ptrdiff_t>(n_sort),
                          result.ranked.end(), before);
    }
    result.sorted = n_sort;
    result.other_shapes = search::other_shapes(job, cal, options, result, layout_best);
    // The listed shapes' ranks count the plans before them by their steps.
    if (screen && options.shape_ranks > 0 && !result.other_shapes.empty())
        search::price_exact_before(job, cal, options, result,
                                   result.other_shapes[std::min(options.shape_ranks, result.other_shapes.size()) - 1]);
    if (result.first_dropped && !result.cancelled) {
        // The ranks of the first shape_ranks other shapes count the plans
        // before them: when one ranks after a dropped plan, the search runs
        // again counting, for each, the plans ranked before it.
        const size_t n = std::min(options.shape_ranks, result.other_shapes.size());
        for (size_t i = 0; i < n; ++i) {
            if (ranks_before(result.other_shapes[i], *result.first_dropped, by)) continue;
            SearchOptions again = options;
            again.shape_ranks = 0;
            again.sort_top = 1;
            again.keep_best = 1;
            again.record_spans = false;
            again.progress = {};
            again.count_before.assign(result.other_shapes.begin(), result.other_shapes.begin() + static_cast<std::ptrdiff_t>(n));
            const SearchResult counted = search_plans(job, cal, again);
            result.cancelled |= counted.cancelled;
            for (const int64_t c : counted.counted_before) result.other_shape_ranks.push_back(static_cast<size_t>(c) + 1);
            break;
        }
    }
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
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
    const FlopsPerToken fpt = flops_per_token(job.model, tr, s.plan.recompute);
    const double model_tflops = fpt.model * tokens_per_step / s.step_time_s / gpus / 1e12;
    s.mfu = model_tflops / job.cluster.gpu.peak_tflops(tr.precision);
    return s;
}

}  // namespace lostflops
