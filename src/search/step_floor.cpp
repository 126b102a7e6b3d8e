// The search's floor of a layout's step (search/step_floor.h): the average
// pipeline rank's GPU work per step at no recomputation, the fastest
// sequence-parallel choice. Layouts that differ only in vpp share it (but
// where the evaluation's prunes depend on vpp; step_floors): the
// enumeration (tp, cp, pp, micro-batch, vpp, ep ascending) keeps them in one
// block of equal (tp, cp, pp, micro-batch), within which the floor is
// computed once per other setting; the groups are priced by worker threads.
#include "search/step_floor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "estimate/estimate_parts.h"
#include "job/stage_layout.h"
#include "job/validate.h"
#include "lostflops/pipeline_schedules.h"
#include "search/enumerate.h"
#include "search/knobs.h"

namespace lostflops::search {

namespace {

// GPU seconds of one micro-batch's forward and backward of the whole model.
// without_ep: DualPipe(V)'s F&B pairs hide up to each pass's expert
// all-to-all (estimate/phase_passes.cpp dual_saved_s), so its floor leaves it out.
double model_gpu_s(const Job& job, const PassSetup& s, bool without_ep) {
    const auto fb = [without_ep](const LayerTime& t) {
        return t.fwd.gpu_s() + t.bwd.gpu_s() - (without_ep ? t.fwd.ep_comm_s + t.bwd.ep_comm_s : 0.0);
    };
    double sum = 0;
    if (s.kind_time.empty()) {
        sum = job.model.layers * fb(s.layer);
    } else {
        const LayerStack& st = *job.model.stack;
        for (size_t k = 0; k < s.kind_time.size(); ++k) sum += st.count[k] * fb(s.kind_time[k].layer);
    }
    return sum + fb(s.embed) + fb(s.head) + job.model.mtp_layers * fb(s.mtp);
}


}  // namespace

double step_floor_s(const Job& base, const Calibration& cal, const PlanFix& fix, const SearchLayout& layout) {
    Job job = with_layout(base, layout);
    ParallelPlan& p = job.plan;
    // DualPipe(V) and ZB-V: each rank still runs its share of every micro-batch's
    // layers, one pass at a time (the average rank: m x the model / pp); only
    // the F&B pairs of DualPipe(V) hide the expert all-to-all.
    const bool dual = schedule_info(effective_schedule(p)).overlaps_fwd_bwd;
    const KnobSet ks = knob_set(job, fix);
    if (ks.count() == 0 || ks.sps == 0 || ks.zeros == 0) return 0;
    // A layout the evaluation prunes before timing it (search/evaluate_layout.cpp):
    // no floor; its stages may not even be placeable (a custom layout for another pp x vpp).
    if (ks.fixed_recompute_too_deep || (!default_split(p) && stage_layout_issue(job)) ||
        (p.schedule_given && schedule_issue(p, p.micro_batches(job.training))))
        return 0;
    apply_recompute(p, 0);  // none
    double best = std::numeric_limits<double>::infinity();
    // The fastest sequence-parallel choice at the plan's zero.
    const auto fastest = [&] {
        PlanContext ctx;
        int ctx_overlap = -1;  // the context depends on the layout and tp_comm_overlap alone
        for (int si = 0; si < ks.sps; ++si) {
            p.sequence_parallel = ks.sp[si].sp;
            p.tp_comm_overlap = ks.sp[si].tp_overlap;
            if (ctx_overlap != static_cast<int>(p.tp_comm_overlap)) {
                ctx = make_plan_context(job, cal);
                ctx_overlap = p.tp_comm_overlap;
            }
            const int ends = ctx.moe_layer_overlap ? 2 : 1;
            for (int e = 0; e < ends; ++e) {
                if (ctx.moe_layer_overlap) ctx.moe_overlap_paired = e;
                best = std::min(best, model_gpu_s(job, pass_setup(job, ctx, nullptr), dual));
            }
        }
    };
    // The GPU times do not depend on the ZeRO stage (pass_setup_other_zero
    // copies them), but for a Hugging Face model's, which is its precision
    // recipe (autocast over fp32 weights, or FSDP2's bf16 compute): there each.
    const int zeros = job.training.framework == Framework::hf ? ks.zeros : 1;
    for (int zi = 0; zi < zeros; ++zi) {
        p.zero = ks.zero[zi];
        fastest();
    }
    const double m = static_cast<double>(p.micro_batches(job.training));
    return std::isfinite(best) ? m * best / p.pp : 0.0;
}

std::vector<double> step_floors(const Job& job, const Calibration& cal, const PlanFix& fix,
                                const std::vector<SearchLayout>& layouts, unsigned threads) {
    // Group ids: within a block, the first layout of each setting stands for
    // it. Where the evaluation's prunes depend on vpp (a custom stage layout,
    // a named schedule, a fixed recompute depth: step_floor_s's checks), each
    // vpp is its own group, so that a layout pruned there gets no floor and a
    // skipped one is always one the evaluation would have counted.
    const bool vpp_too = !default_split(job.plan) || job.plan.schedule_given || fix.recompute.has_value();
    std::vector<size_t> first_of;  // per group: its first layout
    const std::vector<uint32_t> group = group_in_runs(
        layouts,
        [vpp_too](const SearchLayout& a, const SearchLayout& b) {
            return a.ep == b.ep && a.etp == b.etp && a.dispatcher == b.dispatcher && a.cp_comm_type == b.cp_comm_type &&
                   a.a2a_overlap == b.a2a_overlap && a.schedule == b.schedule && (!vpp_too || a.vpp == b.vpp);
        },
        first_of);
    std::vector<double> floor_of(first_of.size(), 0.0);
    std::atomic<size_t> next{0};
    const auto work = [&] {
        for (size_t g; (g = next.fetch_add(1)) < first_of.size();) {
            // No floor (0) is always safe; the layout's own evaluation reports what failed.
            try {
                floor_of[g] = step_floor_s(job, cal, fix, layouts[first_of[g]]);
            } catch (const std::exception&) {
                floor_of[g] = 0;
            }
        }
    };
    const unsigned n = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(first_of.size() / 64 + 1)));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    std::vector<double> out(layouts.size());
    for (size_t i = 0; i < layouts.size(); ++i) out[i] = floor_of[group[i]];
    return out;
}

}  // namespace lostflops::search
