// The search driver: layouts from the enumerator (main thread), their plans
// evaluated by worker threads that take layouts from a shared counter, the
// evaluated plans merged and ranked by a total order (include/lostflops/search.h),
// so the result does not depend on the thread count or scheduling.
#include "lostflops/search.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <chrono>
#include <thread>
#include <optional>
#include <unordered_map>

#include "estimate/memory.h"
#include "search/enumerate.h"
#include "search/dispatcher_choice.h"
#include "search/evaluate_layout.h"
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
    l.micro_batch = f.micro_batch.value_or(0);
    return l;
}

struct Worker {
    SearchCounts counts;
    std::vector<RankedPlan> plans;
    std::vector<RankedPlan> layout_best;  // best plan of each layout this worker ran
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

// Best plan of each shape (tp, cp, pp, ep) but the winner's, in rank order,
// from the best plan of each layout.
std::vector<RankedPlan> other_shapes(const SearchResult& r, const std::vector<RankedPlan>& layout_best, RankBy by) {
    if (r.ranked.empty()) return {};
    const auto shape = [&](const RankedPlan& p) {
        const SearchLayout& l = r.layouts[p.order >> 32];
        return (static_cast<uint64_t>(l.tp) << 48) ^ (static_cast<uint64_t>(l.cp) << 32) ^
               (static_cast<uint64_t>(l.pp) << 16) ^ static_cast<uint64_t>(l.ep);
    };
    std::unordered_map<uint64_t, RankedPlan> best;
    for (const RankedPlan& p : layout_best) {
        auto [it, fresh] = best.try_emplace(shape(p), p);
        if (!fresh && ranks_before(p, it->second, by)) it->second = p;
    }
    best.erase(shape(r.ranked.front()));
    std::vector<RankedPlan> out;
    out.reserve(best.size());
    for (const auto& kv : best) out.push_back(kv.second);
    std::sort(out.begin(), out.end(), [by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); });
    return out;
}

}  // namespace

SearchResult search_plans(const Job& job, const Calibration& cal, const SearchOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t keep = options.keep_best;
    SearchResult result;
    search::LayoutEvaluator counter(job, cal, options.fix);
    int64_t upper = 0;  // plans of the valid layouts: at most this many are evaluated
    search::enumerate_layouts(
        job,
        [&](const search::Layout& l) {
            result.layouts.push_back(l);
            if (!options.fix.moe_dispatcher) result.layouts.back().dispatcher = search::fastest_dispatcher(job, cal, l);
            upper += counter.plan_count(l);
        },
        [&](const search::Layout& l) {
            const int64_t n = counter.plan_count(l);
            result.counts.enumerated += n;
            result.counts.pruned_divisibility += n;
        },
        layout_fix(options.fix));

    const size_t n_layouts = result.layouts.size();
    unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads) : std::thread::hardware_concurrency();
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, n_layouts / 64))));
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::atomic<bool> stopped{false};
    std::vector<Worker> workers(threads);
    // Room for every plan a worker could keep, reserved (not touched) up
    // front: no reallocation while the plans stream in, and the merge appends
    // in place.
    const size_t room = keep > 0 ? std::min<size_t>(static_cast<size_t>(upper), 2 * keep + (size_t{1} << 16))
                                 : static_cast<size_t>(std::min<int64_t>(upper, 2 * upper / threads + (int64_t{1} << 20)));
    for (Worker& w : workers) {
        w.plans.reserve(room);
        advise_huge_pages(w.plans.data(), w.plans.capacity() * sizeof(RankedPlan));
    }
    const auto work = [&](Worker& w) {
        search::LayoutEvaluator ev(job, cal, options.fix);
        constexpr size_t kBlock = 16;
        for (;;) {
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
                stopped = true;
                return;
            }
            const size_t first = next.fetch_add(kBlock);
            if (first >= n_layouts) return;
            const size_t last = std::min(n_layouts, first + kBlock);
            for (size_t i = first; i < last; ++i) {
                const size_t added = ev.run(result.layouts[i], static_cast<uint32_t>(i), w.counts, w.plans);
                if (added == 0) continue;
                const auto from = w.plans.end() - static_cast<std::ptrdiff_t>(added);
                w.layout_best.push_back(*std::min_element(from, w.plans.end(), [&](const RankedPlan& a, const RankedPlan& b) {
                    return ranks_before(a, b, options.by);
                }));
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
            while (done.load() < n_layouts && !stopped.load()) {
                options.progress(static_cast<double>(done.load()) / static_cast<double>(n_layouts));
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        } else {
            work(workers[0]);
        }
        for (auto& th : pool) th.join();
    }
    result.cancelled = stopped.load() || (options.cancel && options.cancel->load());
    size_t total = 0;
    for (const Worker& w : workers) total += w.plans.size();
    result.ranked = std::move(workers[0].plans);
    if (result.ranked.capacity() < total) result.ranked.reserve(total);
    std::vector<RankedPlan> layout_best;
    for (size_t i = 0; i < workers.size(); ++i) {
        Worker& w = workers[i];
        if (w.cutoff && (!result.first_dropped || ranks_before(*w.cutoff, *result.first_dropped, options.by)))
            result.first_dropped = w.cutoff;
        layout_best.insert(layout_best.end(), w.layout_best.begin(), w.layout_best.end());
        add(result.counts, w.counts);
        if (i > 0) result.ranked.insert(result.ranked.end(), w.plans.begin(), w.plans.end());
        std::vector<RankedPlan>().swap(w.plans);
    }
    const RankBy by = options.by;
    const auto before = [by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); };
    const size_t n_sort = options.sort_top == 0 ? result.ranked.size() : std::min(options.sort_top, result.ranked.size());
    if (n_sort == result.ranked.size()) {
        std::sort(result.ranked.begin(), result.ranked.end(), before);
    } else {
        std::partial_sort(result.ranked.begin(), result.ranked.begin() + static_cast<std::ptrdiff_t>(n_sort),
                          result.ranked.end(), before);
    }
    result.sorted = n_sort;
    result.other_shapes = other_shapes(result, layout_best, by);
    if (result.first_dropped && !result.cancelled) {
        // The ranks of the first shape_ranks other shapes count the plans
        // before them: each must rank before every dropped plan, or search
        // again keeping all.
        const size_t n = std::min(options.shape_ranks, result.other_shapes.size());
        for (size_t i = 0; i < n; ++i) {
            if (!ranks_before(result.other_shapes[i], *result.first_dropped, by)) {
                SearchOptions all = options;
                all.keep_best = 0;
                SearchResult full = search_plans(job, cal, all);
                full.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                return full;
            }
        }
    }
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
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
