// Every plan of one layout: memory first (exact, from the parts estimate sums),
// then time for those that fit, reusing what plans of the layout share (work
// and layer times per sequence-parallel / overlap / recompute mode, pipeline
// phase per recompute depth). Internal to search.
#pragma once

#include <cstdint>
#include <vector>

#include "estimate/estimate_parts.h"
#include "lostflops/search.h"

namespace lostflops::search {

// Reused between layouts on one thread: no allocation once warm.
class LayoutEvaluator {
public:
    LayoutEvaluator(const Job& job, const Calibration& cal, const PlanFix& fix);

    // Counts the layout's plans into `counts` and appends the ones that fit
    // to `out` (order = index << 32 | knob code). Returns how many it appended.
    // Each plan's step is estimate()'s, but for one whose pipeline the closed
    // form does not time exactly (ScheduleModel::screen) and whose lower
    // bound already ranks at or after `cutoff` (by `by`): that one keeps the
    // bound, marked by kBoundBit in its order (search/knobs.h), for the
    // caller to price exactly (exact_plans) if it ever matters. Without a
    // cutoff every plan is exact. `sure`, when given, also receives the
    // appended plans whose pipeline the screen times exactly: exact whatever
    // the cutoff (the search's floor bar, search.cpp, is drawn from them).
    size_t run(const SearchLayout& layout, uint32_t index, SearchCounts& counts, std::vector<RankedPlan>& out,
               const RankedPlan* cutoff = nullptr, RankBy by = RankBy::throughput,
               std::vector<RankedPlan>* sure = nullptr);

    // Every plan of the layout that fits, in enumeration order, each exact
    // but those whose bound ranks at or after `cutoff` (run's rule; none
    // without one); valid until the next call.
    const std::vector<RankedPlan>& exact_plans(const SearchLayout& layout, uint32_t index,
                                               const RankedPlan* cutoff = nullptr, RankBy by = RankBy::throughput);

    // Plans of a layout the enumerator rejected (counted as pruned for divisibility).
    int64_t plan_count(const SearchLayout& layout) const;

private:
    const Job& base_;
    const Calibration& cal_;
    PlanFix fix_;
    Job job_;  // the layout's job, its plan changed in place
    std::vector<PassSetup> setups_;
    std::vector<char> setup_ready_;
    std::vector<PipelinePhase> phases_;
    std::vector<char> phase_ready_;
    std::vector<double> step_cache_;  // step time per (phase, zero_time_class, overlap_grad_reduce); < 0: not yet
    // A phase's exact twin where the screen gave a bound (ScheduleModel::closed_form), and its steps.
    std::vector<PipelinePhase> exact_phases_;
    std::vector<char> exact_ready_;
    std::vector<double> exact_step_cache_;
    std::vector<RankedPlan> scratch_;
    std::vector<ActParts> act_peak_;  // what the passes add per (sp, recompute slot, rank)
    std::vector<int> rcs_;          // the recompute indices evaluated (slots), ascending
    std::vector<int> act_keys_;     // (sp, recompute index) of each act_memo_ entry: sp + 2 x index
    std::vector<ActParts> act_memo_;  // what the passes add per rank of each key
    std::vector<int> ranks_;        // the ranks whose memory can be the peak
    std::vector<StageParams> sparams_;
    std::vector<InFlight> inflight_;
    std::vector<RankState> state_;  // per (zero, rank)
    std::vector<LayerWork> works_;  // per layer kind
};

}  // namespace lostflops::search
