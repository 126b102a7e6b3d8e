// The state of one of the search's worker threads and what it does with the
// plans of the layouts it evaluates (search.cpp drives them). Internal to search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "lostflops/search.h"

namespace lostflops::search {

struct Worker {
    SearchCounts counts;
    std::vector<int64_t> before;  // plans ranked before each of SearchOptions::count_before
    std::vector<RankedPlan> plans;
    std::vector<RankedPlan> layout_best;  // best plan of each layout this worker ran
    // The best SearchOptions::sort_top exact plans so far, a max-heap by rank:
    // a plan whose bound ranks at or after its top needs no exact price.
    std::vector<RankedPlan> exact_top;
    std::optional<RankedPlan> cutoff;     // keep_best: the best plan dropped so far
    // Floored listings: the keep + 1 best plans whose pipeline the screen
    // times exactly (LayoutEvaluator::run's `sure`), a max-heap by rank, and
    // the last layout's.
    std::vector<RankedPlan> sure_top, sure;
};

// keep_best: drop the plans from `from` on that rank after the worker's
// cutoff; when 2N are kept, keep the N best and make the next one the cutoff.
// Invariant: every plan ranked before the cutoff is kept.
void keep_best_plans(Worker& w, size_t from, size_t keep, RankBy by);

// `top`, a max-heap by rank of at most n plans, takes `p` when it has room
// or `p` ranks before its worst (which then leaves).
void push_top(std::vector<RankedPlan>& top, const RankedPlan& p, size_t n, RankBy by);

// The floor's bar (search/step_floor.h): the (keep + 1)-th best of the
// evaluated plans whose pipeline the screen times exactly (each worker keeps
// its keep + 1 best of them in sure_top, so this is the same whatever the
// threads: which other plans a worker prices exactly depends on its order,
// these do not), or none when fewer were evaluated. At least `keep` plans
// rank before it.
std::optional<RankedPlan> floor_bar(const std::vector<Worker>& workers, size_t keep, RankBy by);

// Transparent huge pages for a large buffer, where the kernel offers them on
// request (transparent_hugepage=madvise): a ranking of millions of plans
// otherwise takes one page fault per 4 KiB. A hint; failure changes nothing.
void advise_huge_pages(void* data, size_t bytes);

void add(SearchCounts& to, const SearchCounts& c);

}  // namespace lostflops::search
