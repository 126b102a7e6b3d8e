// The search driver: layouts from the enumerator (search/layout_space.h,
// shapes split across worker threads), their plans evaluated by worker
// threads that take layouts from a shared counter (search/search_worker.h),
// the evaluated plans merged and ranked by a total order
// (include/lostflops/search.h), so the result does not depend on the thread
// count or scheduling. A listing ranked by step runs the layouts best-first
// by their floors (search/step_floor.h), in rounds with a barrier between
// them, and skips those whose floor exceeds the bar drawn after the last.
#include "lostflops/search.h"

#include <algorithm>
#include <cstdint>
#include <chrono>
#include <thread>
#include <limits>
#include <numeric>
#include <optional>

#include "estimate/memory.h"
#include "search/enumerate.h"
#include "search/cp_comm_choice.h"
#include "search/dispatcher_choice.h"
#include "search/evaluate_layout.h"
#include "search/layout_space.h"
#include "search/screen_exact.h"
#include "search/search_worker.h"
#include "search/step_floor.h"
#include "search/knobs.h"
#include "workload/flops.h"

namespace lostflops {

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

// A listing's first round of layouts by floor (search/step_floor.h): an
// eighth of them, within these bounds; each later round is as large as all
// before it. The DeepSeek-V3 example's search (2,045,628 layouts) found its
// bar after 8,192 and stopped at 95,462; first rounds of 1,024 took 4 % longer.
constexpr size_t kFloorFirstRoundMin = 64, kFloorFirstRoundMax = 4096;

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
        search::choose_dispatchers(job, cal, result.layouts, options.fix.launch);
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
    // The layouts the search expects to run, for its progress: all, or with
    // the floor those whose floor is within the last bar.
    std::atomic<size_t> expected{0};
    std::atomic<bool> stopped{false};
    std::vector<search::Worker> workers(threads);
    // The screen (LayoutEvaluator::run) when a listing keeps its best plans
    // and only the first sort_top must be exact; a streamed chunk (after), a
    // ranking that keeps every plan (--compare, a table of all) and a count of
    // the plans before given ones (count_before) are exact throughout.
    const bool screen =
        options.sort_top > 0 && options.keep_best > 0 && !options.after && options.count_before.empty();
    for (search::Worker& w : workers) w.before.assign(options.count_before.size(), 0);
    result.counted_before.assign(options.count_before.size(), 0);
    if (options.record_spans) result.spans.assign(n_layouts, LayoutSpan{});
    // Room for every plan a worker could keep, reserved (not touched) up
    // front: no reallocation while the plans stream in, and the merge appends
    // in place.
    const size_t room = keep > 0 ? std::min<size_t>(static_cast<size_t>(upper), 2 * keep + (size_t{1} << 16))
                                 : static_cast<size_t>(std::min<int64_t>(upper, 2 * upper / threads + (int64_t{1} << 20)));
    for (search::Worker& w : workers) {
        w.plans.reserve(room);
        search::advise_huge_pages(w.plans.data(), w.plans.capacity() * sizeof(RankedPlan));
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
    // The floor (search/step_floor.h), ranking by step: a listing runs the
    // layouts in the order of their floors, in rounds; after each, the plan
    // after the kept ones (search::floor_bar) is the bar, and the layouts whose
    // floor exceeds its step are skipped: their plans rank after it. A count
    // of the plans before given ones skips the layouts whose floor exceeds
    // the last of them.
    const bool counting = !options.count_before.empty();
    const bool floored = (screen || counting) && options.by != RankBy::memory && !options.record_spans &&
                         !options.spans && !options.after && n_layouts > 2 * kFloorFirstRoundMin;
    std::vector<double> floors;
    // Items [0, first_above(s)) of the floor order are the layouts whose floor is at most s.
    const auto first_above = [&](size_t from, double s) {
        return static_cast<size_t>(std::partition_point(order.begin() + static_cast<std::ptrdiff_t>(from), order.end(),
                                                        [&](uint32_t i) { return !(floors[i] > s); }) -
                                   order.begin());
    };
    if (floored) {
        floors = search::step_floors(job, cal, options.fix, result.layouts, threads);
        order.resize(n_layouts);
        std::iota(order.begin(), order.end(), uint32_t{0});
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return floors[a] < floors[b]; });
    }
    const size_t n_items = ordered || floored ? order.size() : n_layouts;
    size_t limit = n_items;  // a round runs items [next, limit)
    if (floored && counting) {
        const auto last = std::max_element(options.count_before.begin(), options.count_before.end(),
                                           [&](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, options.by); });
        limit = first_above(0, last->step_time_s);
    } else if (floored) {
        limit = std::clamp(n_layouts / 8, kFloorFirstRoundMin, kFloorFirstRoundMax);
    }
    const auto work = [&](search::Worker& w) {
        search::LayoutEvaluator ev(job, cal, options.fix);
        constexpr size_t kBlock = 16;
        for (;;) {
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
                stopped = true;
                return;
            }
            const size_t first = next.fetch_add(kBlock);
            if (first >= limit) return;
            const size_t last = std::min(limit, first + kBlock);
            for (size_t k = first; k < last; ++k) {
                const size_t i = ordered || floored ? order[k] : k;
                if (options.spans) {
                    const LayoutSpan& sp = (*options.spans)[i];
                    if (!sp.any || (options.after && !ranks_before(*options.after, sp.worst, options.by)) ||
                        (w.cutoff && !ranks_before(sp.best, *w.cutoff, options.by)))
                        continue;
                }
                // A plan needs its exact step when its bound ranks before the sort_top-th exact plan.
                const RankedPlan* exact_cutoff =
                    screen && w.exact_top.size() == options.sort_top ? &w.exact_top.front() : nullptr;
                w.sure.clear();
                size_t added = ev.run(result.layouts[i], static_cast<uint32_t>(i), w.counts, w.plans, exact_cutoff,
                                      options.by, floored && !counting ? &w.sure : nullptr);
                for (const RankedPlan& p : w.sure) search::push_top(w.sure_top, p, keep + 1, options.by);
                if (screen) {
                    for (auto p = w.plans.end() - static_cast<std::ptrdiff_t>(added); p != w.plans.end(); ++p)
                        if (!search::is_bound(*p)) search::push_top(w.exact_top, *p, options.sort_top, options.by);
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
                if (keep > 0) search::keep_best_plans(w, w.plans.size() - added, keep, options.by);
            }
            done.fetch_add(last - first, std::memory_order_relaxed);
        }
    };
    expected.store(std::max<size_t>(floored && counting ? limit : n_items, 1));
    std::optional<RankedPlan> bar;  // floored: the plan the skipped layouts rank after
    for (size_t begin = 0;;) {
        // With a progress callback every worker gets a thread and the calling
        // thread only reports (it sleeps between reports).
        next.store(begin);
        const unsigned first_spawned = options.progress ? 0 : 1;
        std::vector<std::thread> pool;
        for (unsigned t = first_spawned; t < threads; ++t) pool.emplace_back(work, std::ref(workers[t]));
        if (options.progress) {
            // Reports every 100 ms; looks every 2 ms, so that a round's end costs no report's wait.
            auto reported = std::chrono::steady_clock::now() - std::chrono::milliseconds(100);
            while (done.load() < limit && !stopped.load()) {
                const auto now = std::chrono::steady_clock::now();
                if (now - reported >= std::chrono::milliseconds(100)) {
                    options.progress(std::min(1.0, static_cast<double>(done.load()) / static_cast<double>(expected.load())));
                    reported = now;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        } else {
            work(workers[0]);
        }
        for (auto& th : pool) th.join();
        if (!floored || counting || limit >= n_items || stopped.load() || (options.cancel && options.cancel->load()))
            break;
        // The next round: as many layouts again, up to the first whose floor exceeds the bar.
        bar = search::floor_bar(workers, keep, options.by);
        const size_t stop = bar ? first_above(limit, bar->step_time_s) : n_items;
        expected.store(std::max<size_t>(stop, 1));
        begin = limit;
        limit = std::min(stop, 2 * limit);
        if (limit == begin) break;
    }
    limit = std::min(limit, n_items);
    result.cancelled = stopped.load() || (options.cancel && options.cancel->load());
    // With keep_best, only the plans ranked before the best dropped one are
    // certain; the others are dropped before the merge (less to copy and sort).
    for (const search::Worker& w : workers)
        if (w.cutoff && (!result.first_dropped || ranks_before(*w.cutoff, *result.first_dropped, options.by)))
            result.first_dropped = w.cutoff;
    const bool skipped = floored && limit < n_items && !result.cancelled;
    if (skipped && bar && (!result.first_dropped || ranks_before(*bar, *result.first_dropped, options.by)))
        result.first_dropped = bar;
    size_t total = 0;
    for (search::Worker& w : workers) {
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
        search::Worker& w = workers[i];
        layout_best.insert(layout_best.end(), w.layout_best.begin(), w.layout_best.end());
        search::add(result.counts, w.counts);
        for (size_t j = 0; j < w.before.size(); ++j) result.counted_before[j] += w.before[j];
        if (i > 0) result.ranked.insert(result.ranked.end(), w.plans.begin(), w.plans.end());
        std::vector<RankedPlan>().swap(w.plans);
    }
    if (skipped) {
        // Every plan the runs did not count was skipped; each skipped layout
        // stands in the shapes' bests by its floor, a bound (other_shapes
        // prices it where a listing shows it).
        result.counts.skipped = space.rejected_plans + upper - result.counts.enumerated;
        result.counts.enumerated += result.counts.skipped;
        // A skipped layout has a floor, so the evaluation would have counted
        // it (step_floor.cpp gives none to those it prunes before counting):
        // the layouts are the same with or without the floor.
        result.counts.layouts += static_cast<int64_t>(n_items - limit);
        for (size_t k = limit; k < n_items; ++k) {
            RankedPlan p;
            p.order = (static_cast<uint64_t>(order[k]) << 32) | search::kBoundBit;
            p.step_time_s = floors[order[k]];
            layout_best.push_back(p);
        }
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
    // The other shapes whose ranks a listing prints: the first shape_ranks
    // and, with them, every one within kSimplerWithin of the best plan (at
    // most kSimplerShapesMax: report/search_report.cpp's "simpler" line).
    size_t n = std::min(options.shape_ranks, result.other_shapes.size());
    if (n > 0) {
        const double within_s = result.ranked.front().step_time_s * (1 + kSimplerWithin);
        size_t k = 0;
        while (k < result.other_shapes.size() && k < kSimplerShapesMax && result.other_shapes[k].step_time_s <= within_s)
            ++k;
        n = std::max(n, k);
    }
    // Their ranks count the plans before them by their steps.
    if (screen && n > 0) search::price_exact_before(job, cal, options, result, result.other_shapes[n - 1]);
    if (result.first_dropped && !result.cancelled) {
        // When one of them ranks after a dropped plan, the search runs again
        // counting, for each, the plans ranked before it.
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

}  // namespace lostflops
