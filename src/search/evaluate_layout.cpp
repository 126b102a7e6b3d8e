// Evaluation of one layout's plans (search/evaluate_layout.h).
//
// Memory: a plan's peak on a rank is state(zero) + activations(sp, recompute)
// (estimate/memory.h memory_total, summed in the same order), so the layout
// computes 4 states and |sp| x |recompute| activations per rank and each plan
// costs two sums per rank; the peak is the largest over the ranks that can
// hold it (estimate/memory.h peak_candidate_ranks), as in estimate(). Time: PassSetup per (sp, tp_comm_overlap, recompute mode,
// zero == 3) and PipelinePhase per (that, recompute depth), each computed on
// first use; the step (finish_breakdown) per plan and zero class.
// estimate() is these same calls. Partial recompute depths (search/knobs.h):
// per (zero, sp) a binary search over the depth for the fewest that fit
// (the peak does not grow with the depth), then a window of kPartialDepths
// depths from there, so a layout costs O(log layers) activations and
// O(kPartialDepths) plans per (zero, sp), whatever the layers per stage.
#include "search/evaluate_layout.h"

#include <algorithm>

#include "estimate/inflight.h"
#include "estimate/memory.h"
#include "search/enumerate.h"
#include "search/knobs.h"
#include "job/stage_layout.h"
#include "job/validate.h"

namespace lostflops::search {

namespace {

int rc_mode_index(int rc) { return rc >= 2 ? 2 : rc; }  // none, selective, full (any depth)

}  // namespace

LayoutEvaluator::LayoutEvaluator(const Job& job, const Calibration& cal, const PlanFix& fix)
    : base_(job), cal_(cal), fix_(fix), job_(job) {}

int64_t LayoutEvaluator::plan_count(const SearchLayout& layout) const {
    return knob_set(with_layout(base_, layout), fix_).count();
}

const std::vector<RankedPlan>& LayoutEvaluator::exact_plans(const SearchLayout& layout, uint32_t index,
                                                            const RankedPlan* cutoff, RankBy by) {
    scratch_.clear();
    SearchCounts ignored;
    run(layout, index, ignored, scratch_, cutoff, by);
    return scratch_;
}

size_t LayoutEvaluator::run(const SearchLayout& layout, uint32_t index, SearchCounts& counts,
                            std::vector<RankedPlan>& out, const RankedPlan* cutoff, RankBy by,
                            std::vector<RankedPlan>* sure) {
    const size_t before = out.size();
    job_ = with_layout(base_, layout);
    ParallelPlan& p = job_.plan;
    const KnobSet ks = knob_set(job_, fix_);
    const int64_t total = ks.count();
    counts.enumerated += total;
    if (total == 0) return 0;
    if (ks.fixed_recompute_too_deep) {
        counts.pruned_divisibility += total;
        return 0;
    }
    ++counts.layouts;
    // The ranks whose memory can be the peak (estimate/memory.h), as estimate() takes them.
    ranks_.resize(static_cast<size_t>(p.pp));
    const int ranks = peak_candidate_ranks(job_, ranks_.data());
    if (!default_split(p) && stage_layout_issue(job_)) {
        counts.pruned_divisibility += total;  // the job's custom stage layout does not fit this pp x vpp
        return 0;
    }
    // The job's pipeline schedule kept: layouts it cannot run are pruned
    // (a 1F1B job's schedule follows vpp and prunes nothing).
    if (p.schedule_given && schedule_issue(p, p.micro_batches(job_.training))) {
        counts.pruned_divisibility += total;
        return 0;
    }

    // Parameters per rank: they depend on neither sp nor recompute.
    sparams_.resize(static_cast<size_t>(ranks));
    inflight_.resize(static_cast<size_t>(ranks));
    {
        p.sequence_parallel = ks.sp[0].sp;
        apply_recompute(p, ks.rc_first);
        stack_work(job_.model, job_.training, p, works_);
        const HeadWork hw = head_work(job_.model, job_.training, p);
        for (int r = 0; r < ranks; ++r) {
            const size_t ri = static_cast<size_t>(r);
            inflight_[ri] = inflight_passes(job_, ranks_[ri]);
            sparams_[ri] = stage_params(job_, works_, hw, ranks_[ri]);
        }
    }
    // State per (zero, rank); the ZeRO-3 engine's per-layer parameters (knob-independent).
    state_.resize(static_cast<size_t>(4 * ranks));
    {
        apply_recompute(p, 0);
        p.sequence_parallel = false;
        stack_work(job_.model, job_.training, p, works_);
        const LayerWork mean = mean_layer_work(job_.model, works_);
        for (int zi = 0; zi < ks.zeros; ++zi) {
            p.zero = ks.zero[zi];
            for (int r = 0; r < ranks; ++r)
                state_[static_cast<size_t>(zi * ranks + r)] = memory_state(job_, cal_, mean, sparams_[static_cast<size_t>(r)]);
        }
    }
    const double capacity = state_[0].mem.capacity_bytes;

    // Activations per (sp, recompute index, rank), computed once each: they
    // do not depend on zero; layer and head work depend on the recompute
    // mode, not its depth.
    act_keys_.clear();
    act_memo_.clear();
    int work_key = -1;
    HeadWork hw;
    const auto activations = [&](int s, int rc) -> const ActParts* {
        const int key = s + 2 * rc;
        for (size_t e = 0; e < act_keys_.size(); ++e)
            if (act_keys_[e] == key) return act_memo_.data() + e * static_cast<size_t>(ranks);
        p.sequence_parallel = s == 1;
        apply_recompute(p, rc);
        if (s * 3 + rc_mode_index(rc) != work_key) {
            work_key = s * 3 + rc_mode_index(rc);
            stack_work(job_.model, job_.training, p, works_);
            hw = head_work(job_.model, job_.training, p);
        }
        act_keys_.push_back(key);
        for (int r = 0; r < ranks; ++r)
            act_memo_.push_back(memory_activations(job_, works_, hw, sparams_[static_cast<size_t>(r)],
                                                   inflight_[static_cast<size_t>(r)], ranks_[static_cast<size_t>(r)]));
        return act_memo_.data() + (act_keys_.size() - 1) * static_cast<size_t>(ranks);
    };
    // A plan's peak over the ranks: memory_total's, through the same terms.
    const auto peak_of = [&](int zi, const ActParts* act) {
        double peak = 0;
        for (int r = 0; r < ranks; ++r)
            peak = std::max(peak, rank_reserved_bytes(state_[static_cast<size_t>(zi * ranks + r)], act[r]));
        return peak;
    };
    bool sp_used[2] = {false, false};
    for (int si = 0; si < ks.sps; ++si) sp_used[ks.sp[si].sp ? 1 : 0] = true;
    // Partial depths: per (zero, sp) the window of ks.depths depths from the
    // fewest that fit (memory falls with the depth: binary search), kept
    // within 1 .. max_depth. None fits: the deepest window (pruned below).
    int window[4][2] = {};
    rcs_.clear();
    for (int rc = ks.rc_first; rc < ks.rc_end; ++rc)
        if (!(rc == 1 && ks.skip_selective)) rcs_.push_back(rc);
    for (int s = 0; s < 2 && ks.depths > 0; ++s) {
        if (!sp_used[s]) continue;
        for (int zi = 0; zi < ks.zeros; ++zi) {
            int lo = 1, hi = ks.max_depth;
            if (peak_of(zi, activations(s, 2 + hi)) <= capacity) {
                while (lo < hi) {
                    const int mid = lo + (hi - lo) / 2;
                    if (peak_of(zi, activations(s, 2 + mid)) <= capacity) hi = mid;
                    else lo = mid + 1;
                }
            }
            window[zi][s] = std::min(hi, ks.max_depth - ks.depths + 1);
            for (int d = 0; d < ks.depths; ++d) rcs_.push_back(2 + window[zi][s] + d);
        }
    }
    std::sort(rcs_.begin(), rcs_.end());
    rcs_.erase(std::unique(rcs_.begin(), rcs_.end()), rcs_.end());
    const int n_rc = static_cast<int>(rcs_.size());
    act_peak_.assign(static_cast<size_t>(2 * n_rc * ranks), ActParts{});
    for (int s = 0; s < 2; ++s) {
        if (!sp_used[s]) continue;
        for (int slot = 0; slot < n_rc; ++slot) {
            const ActParts* a = activations(s, rcs_[static_cast<size_t>(slot)]);
            std::copy(a, a + ranks, act_peak_.begin() + (s * n_rc + slot) * ranks);
        }
    }

    // Time caches: setup per (sp choice, rc mode, zero3), phase per (sp choice, rc, zero3).
    const size_t n_setups = static_cast<size_t>(ks.sps) * 3 * 2;
    const size_t n_phases = static_cast<size_t>(ks.sps) * n_rc * 2;
    if (setups_.size() < n_setups) setups_.resize(n_setups);
    if (phases_.size() < n_phases) phases_.resize(n_phases);
    if (exact_phases_.size() < n_phases) exact_phases_.resize(n_phases);
    setup_ready_.assign(n_setups, 0);
    phase_ready_.assign(n_phases, 0);
    exact_ready_.assign(n_phases, 0);
    step_cache_.assign(n_phases * 3 * 2, -1.0);
    exact_step_cache_.assign(n_phases * 3 * 2, -1.0);

    PlanContext ctx[2];
    bool ctx_ready[2] = {false, false};
    const PassSetup* any_setup = nullptr;
    Breakdown bd;
    for (int zi = 0; zi < ks.zeros; ++zi) {
        const int zero = ks.zero[zi];
        const int z3 = zero >= 3 ? 1 : 0;
        for (int slot = 0; slot < n_rc; ++slot) {
            const int rc = rcs_[static_cast<size_t>(slot)];
            for (int si = 0; si < ks.sps; ++si) {
                const SpChoice spc = ks.sp[si];
                const int s = spc.sp ? 1 : 0;
                if (ks.depths > 0 && rc >= 3 && (rc - 2 < window[zi][s] || rc - 2 >= window[zi][s] + ks.depths))
                    continue;  // another (zero, sp)'s depth
                const double peak = peak_of(zi, act_peak_.data() + static_cast<size_t>((s * n_rc + slot) * ranks));
                const int n_ogr = ks.ogrs[z3];
                if (!(peak <= capacity)) {
                    counts.pruned_memory += n_ogr;
                    continue;
                }
                p.zero = zero;
                p.sequence_parallel = spc.sp;
                p.tp_comm_overlap = spc.tp_overlap;
                apply_recompute(p, rc);
                const size_t setup_i = (static_cast<size_t>(si) * 3 + rc_mode_index(rc)) * 2 + z3;
                if (!setup_ready_[setup_i]) {
                    // The plan context depends on the layout and tp_comm_overlap alone.
                    if (!ctx_ready[spc.tp_overlap]) {
                        ctx[spc.tp_overlap] = make_plan_context(job_, cal_);
                        ctx_ready[spc.tp_overlap] = true;
                    }
                    // A setup for the other side of zero == 3, when there is one, differs only
                    // in host operators and ZeRO-3 traffic.
                    if (setup_ready_[setup_i ^ 1])
                        setups_[setup_i] = pass_setup_other_zero(job_, setups_[setup_i ^ 1]);
                    else
                        setups_[setup_i] = pass_setup(job_, ctx[spc.tp_overlap], any_setup);
                    any_setup = &setups_[setup_i];
                    setup_ready_[setup_i] = 1;
                }
                const size_t phase_i = (static_cast<size_t>(si) * n_rc + slot) * 2 + z3;
                if (!phase_ready_[phase_i]) {
                    phases_[phase_i] = pipeline_phase(job_, setups_[setup_i], ScheduleModel::screen);
                    phase_ready_[phase_i] = 1;
                }
                for (int oi = 0; oi < n_ogr; ++oi) {
                    const bool ogr = ks.ogr[z3][oi];
                    p.overlap_grad_reduce = ogr;
                    const size_t step_i = (phase_i * 3 + static_cast<size_t>(zero_time_class(zero))) * 2 + ogr;
                    double& step = step_cache_[step_i];
                    if (!(step >= 0)) {
                        finish_breakdown(job_, cal_, setups_[setup_i], phases_[phase_i], bd);
                        step = bd.total_s();
                    }
                    ++counts.evaluated;
                    RankedPlan rp;
                    rp.order = (static_cast<uint64_t>(index) << 32) | knob_code(zero, rc, spc.sp, spc.tp_overlap, ogr);
                    rp.step_time_s = step;
                    rp.peak_bytes = peak;
                    // A bound that could still make the list is priced exactly; the rest stay bounds
                    // (the step only grows with the pipeline's makespan, so theirs rank after `cutoff` too).
                    bool is_bound = phases_[phase_i].bound;
                    if (is_bound && !(cutoff != nullptr && !ranks_before(rp, *cutoff, by))) {
                        if (!exact_ready_[phase_i]) {
                            exact_phases_[phase_i] = pipeline_phase(job_, setups_[setup_i], ScheduleModel::closed_form);
                            exact_ready_[phase_i] = 1;
                        }
                        double& exact = exact_step_cache_[step_i];
                        if (!(exact >= 0)) {
                            finish_breakdown(job_, cal_, setups_[setup_i], exact_phases_[phase_i], bd);
                            exact = bd.total_s();
                        }
                        rp.step_time_s = exact;
                        is_bound = false;
                    }
                    if (is_bound) rp.order |= kBoundBit;
                    out.push_back(rp);
                    if (sure != nullptr && !phases_[phase_i].bound) sure->push_back(rp);
                }
            }
        }
    }
    return out.size() - before;
}

}  // namespace lostflops::search
