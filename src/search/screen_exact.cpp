// Exact prices for screened plans (search/screen_exact.h). A bound is
// replaced by its layout's exact evaluation (LayoutEvaluator::exact_plans,
// every plan of the layout priced as estimate() prices it), found by its
// knob code without kBoundBit; and the best plan of each shape, exact where
// a listing shows it.
#include "search/screen_exact.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "search/evaluate_layout.h"
#include "search/knobs.h"

namespace lostflops::search {

namespace {

// The twin of the bound `p` among its layout's plans priced again (exact, or
// the same bound when it ranks at or after their cutoff).
RankedPlan exact_twin(const RankedPlan& p, const std::vector<RankedPlan>& layout_plans) {
    const uint64_t order = p.order & ~kBoundBit;
    const auto it = std::find_if(layout_plans.begin(), layout_plans.end(),
                                 [&](const RankedPlan& q) { return (q.order & ~kBoundBit) == order; });
    if (it == layout_plans.end()) throw std::logic_error("search: a screened plan is missing from its layout's exact plans");
    return *it;
}

}  // namespace

void sort_prefix_exact(const Job& job, const Calibration& cal, const SearchOptions& options, SearchResult& r,
                       size_t n_sort) {
    const auto before = [by = options.by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); };
    std::optional<LayoutEvaluator> ev;
    for (bool again = true; again;) {
        if (n_sort == r.ranked.size()) {
            std::sort(r.ranked.begin(), r.ranked.end(), before);
        } else {
            std::partial_sort(r.ranked.begin(), r.ranked.begin() + static_cast<std::ptrdiff_t>(n_sort), r.ranked.end(),
                              before);
        }
        again = false;
        for (size_t i = 0; i < n_sort; ++i) {
            RankedPlan& p = r.ranked[i];
            if (!is_bound(p)) continue;
            if (!ev) ev.emplace(job, cal, options.fix);
            const uint32_t index = static_cast<uint32_t>(p.order >> 32);
            p = exact_twin(p, ev->exact_plans(r.layouts[index], index));
            again = true;
        }
    }
}

void price_exact_before(const Job& job, const Calibration& cal, const SearchOptions& options, SearchResult& r,
                        const RankedPlan& last) {
    std::unordered_map<uint32_t, std::vector<size_t>> by_layout;  // layout index -> bounds in r.ranked
    for (size_t i = 0; i < r.ranked.size(); ++i) {
        const RankedPlan& p = r.ranked[i];
        if (is_bound(p) && ranks_before(p, last, options.by)) by_layout[static_cast<uint32_t>(p.order >> 32)].push_back(i);
    }
    if (by_layout.empty()) return;
    // A bound that still ranks at or after `last` stays one: it counts before it either way.
    LayoutEvaluator ev(job, cal, options.fix);
    for (const auto& [index, at] : by_layout) {
        const std::vector<RankedPlan>& priced = ev.exact_plans(r.layouts[index], index, &last, options.by);
        for (const size_t i : at) r.ranked[i] = exact_twin(r.ranked[i], priced);
    }
}

std::vector<RankedPlan> other_shapes(const Job& job, const Calibration& cal, const SearchOptions& options,
                                     const SearchResult& r, std::vector<RankedPlan>& layout_best) {
    if (r.ranked.empty()) return {};
    const RankBy by = options.by;
    const auto before = [by](const RankedPlan& a, const RankedPlan& b) { return ranks_before(a, b, by); };
    const auto shape_of = [&](const RankedPlan& p) {
        const SearchLayout& l = r.layouts[p.order >> 32];
        return (static_cast<uint64_t>(l.tp) << 48) ^ (static_cast<uint64_t>(l.cp) << 32) ^
               (static_cast<uint64_t>(l.pp) << 16) ^ static_cast<uint64_t>(l.ep);
    };
    // The layout bests of each shape but the winner's, and each shape's best of them.
    const uint64_t winner = shape_of(r.ranked.front());
    std::unordered_map<uint64_t, size_t> slot;  // shape -> index into members
    std::vector<std::vector<size_t>> members;
    for (size_t i = 0; i < layout_best.size(); ++i) {
        const uint64_t s = shape_of(layout_best[i]);
        if (s == winner) continue;
        const auto [it, fresh] = slot.try_emplace(s, members.size());
        if (fresh) members.emplace_back();
        members[it->second].push_back(i);
    }
    std::vector<size_t> best(members.size());  // per shape: index into layout_best
    const auto find_best = [&](size_t m) {
        size_t b = members[m].front();
        for (const size_t i : members[m])
            if (before(layout_best[i], layout_best[b])) b = i;
        best[m] = b;
    };
    for (size_t m = 0; m < members.size(); ++m) find_best(m);
    std::vector<size_t> order(members.size());  // shapes, by their bests
    for (size_t m = 0; m < order.size(); ++m) order[m] = m;
    std::optional<LayoutEvaluator> ev;
    const double listed_within_s = r.ranked.front().step_time_s * (1 + kSimplerWithin);
    // A listed shape's best that is a bound (a screened plan, or a skipped
    // layout's floor) is replaced by its layout's exact best (none: the
    // layout leaves the shape) until it is exact; then the shapes are ranked
    // again, until every listed one is exact.
    for (bool refined = true; refined;) {
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return before(layout_best[best[a]], layout_best[best[b]]); });
        refined = false;
        for (size_t k = 0; k < order.size(); ++k) {
            const size_t m = order[k];
            if (k >= options.shape_ranks && !(layout_best[best[m]].step_time_s <= listed_within_s)) break;
            while (is_bound(layout_best[best[m]])) {
                if (!ev) ev.emplace(job, cal, options.fix);
                RankedPlan& p = layout_best[best[m]];
                const uint32_t index = static_cast<uint32_t>(p.order >> 32);
                const std::vector<RankedPlan>& all = ev->exact_plans(r.layouts[index], index);
                if (all.empty()) {
                    p.step_time_s = std::numeric_limits<double>::infinity();
                    p.order &= ~kBoundBit;
                } else {
                    p = *std::min_element(all.begin(), all.end(), before);
                }
                find_best(m);
                refined = true;
            }
        }
    }
    std::vector<RankedPlan> out;
    out.reserve(order.size());
    for (const size_t m : order)
        if (std::isfinite(layout_best[best[m]].step_time_s)) out.push_back(layout_best[best[m]]);
    return out;
}

}  // namespace lostflops::search
