// The search's workers' handling of plans (search/search_worker.h).
#include "search/search_worker.h"

#include <sys/mman.h>

#include <algorithm>

namespace lostflops::search {

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
    to.skipped += c.skipped;
}

void push_top(std::vector<RankedPlan>& top, const RankedPlan& p, size_t n, RankBy by) {
    const auto before = [by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); };
    if (top.size() >= n && !before(p, top.front())) return;
    top.push_back(p);
    std::push_heap(top.begin(), top.end(), before);
    if (top.size() > n) {
        std::pop_heap(top.begin(), top.end(), before);
        top.pop_back();
    }
}

std::optional<RankedPlan> floor_bar(const std::vector<Worker>& workers, size_t keep, RankBy by) {
    std::vector<RankedPlan> all;
    for (const Worker& w : workers) all.insert(all.end(), w.sure_top.begin(), w.sure_top.end());
    if (all.size() <= keep) return std::nullopt;
    const auto nth = all.begin() + static_cast<std::ptrdiff_t>(keep);
    std::nth_element(all.begin(), nth, all.end(), [by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); });
    return *nth;
}

}  // namespace lostflops::search
