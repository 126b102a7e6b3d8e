// The search's screen made exact where a listing looks (issue 37, one pipeline
// truth). LayoutEvaluator::run keeps, for a plan whose pipeline the closed
// form does not time exactly and whose bound cannot make the first sort_top
// plans, the lower bound of its step, marked by kBoundBit (search/knobs.h).
// These price such plans exactly where they are listed. Internal to search.
#pragma once

#include <cstddef>
#include <vector>

#include "lostflops/search.h"

namespace lostflops::search {

// Sorts the first n_sort plans of r.ranked (all when n_sort is its size), each
// exact: a bound among them is priced exactly and the prefix sorted again
// (exact steps only grow, so this ends).
void sort_prefix_exact(const Job& job, const Calibration& cal, const SearchOptions& options, SearchResult& r,
                       size_t n_sort);

// Prices exactly every bound of r.ranked ranked before `last`, so that the
// plans counted before it (a listed shape's rank) are counted by their
// steps. One exact evaluation per layout holding such a bound.
void price_exact_before(const Job& job, const Calibration& cal, const SearchOptions& options, SearchResult& r,
                        const RankedPlan& last);

// The best plan of each shape (tp, cp, pp, ep) other than the winner's,
// best first, from the best plan of each layout (r.ranked sorted). A layout
// best that is the screen's bound is replaced by the layout's exact best
// until the best of every shape a listing shows is exact: the first
// options.shape_ranks, and every one within kSimplerWithin of the winner.
// Exact steps only grow, so those are then exact; shapes past them may keep
// a bound.
std::vector<RankedPlan> other_shapes(const Job& job, const Calibration& cal, const SearchOptions& options,
                                     const SearchResult& r, std::vector<RankedPlan>& layout_best);

}  // namespace lostflops::search
