// Knob lists per layout (search/knobs.h states the rules and their sources).
#include "search/knobs.h"

#include <algorithm>

#include "job/stage_layout.h"
#include "job/validate.h"

namespace lostflops::search {

int64_t KnobSet::count() const {
    int64_t n = 0;
    for (int i = 0; i < zeros; ++i) n += ogrs[zero[i] >= 3 ? 1 : 0];
    const bool selective_in = rc_first <= 1 && 1 < rc_end && skip_selective;
    return n * (rc_end - rc_first - (selective_in ? 1 : 0) + depths) * sps;
}

void apply_recompute(ParallelPlan& p, int rc) {
    p.recompute = rc == 0 ? Recompute::none : rc == 1 ? Recompute::selective : Recompute::full;
    p.recompute_layers = rc <= 2 ? -1 : rc - 2;
}

int recompute_index(Recompute mode, int layers) {
    if (mode == Recompute::none) return 0;
    if (mode == Recompute::selective) return 1;
    return layers < 0 ? 2 : 2 + layers;
}

void apply_knob_code(ParallelPlan& p, uint32_t code) {
    p.zero = static_cast<int>((code >> 28) & 0x7u);  // bit 31: kBoundBit
    apply_recompute(p, static_cast<int>((code >> 3) & 0x1ffffff));
    p.sequence_parallel = (code & 4u) != 0;
    p.tp_comm_overlap = (code & 2u) != 0;
    p.overlap_grad_reduce = (code & 1u) != 0;
}

KnobSet knob_set(const Job& job, const PlanFix& fix) {
    const ParallelPlan& p = job.plan;
    const Framework fw = job.training.framework;
    const bool replicas = static_cast<int64_t>(p.dp) * p.cp > 1;
    KnobSet k;
    // The ZeRO stages the framework launches on this layout (fix.launch).
    const auto launchable = [&](int z) {
        if (optimizer_issue(job.training, z)) return false;  // as estimate refuses it
        if (!fix.launch) return true;
        LaunchPlan lp = launch_plan(p);
        lp.zero = z;
        lp.recompute = Recompute::none;  // the recompute knob: below
        lp.recompute_layers = -1;
        return !first_rule_break(job.model, lp, *fix.launch);
    };
    if (fix.zero) {
        if (launchable(*fix.zero)) k.zero[k.zeros++] = *fix.zero;
    } else if (fw == Framework::hf) {
        // A Hugging Face model's zero is its precision recipe (autocast over
        // fp32 weights, or FSDP2's bf16 compute): its activations differ, so
        // the job's is kept (estimate/memory.h).
        if (launchable(p.zero)) k.zero[k.zeros++] = p.zero;
    } else {
        for (int z = 0; z <= (replicas ? 3 : 0); ++z)
            if (launchable(z)) k.zero[k.zeros++] = z;
    }
    // Full recompute of some layers per stage, if the framework has it.
    // A recompute mode the framework launches (torchtitan: no partial depth;
    // a Hugging Face model: no selective, no partial depth).
    const auto recompute_launchable = [&](Recompute mode, int layers) {
        if (!fix.launch) return true;
        LaunchPlan lp = launch_plan(p);
        lp.recompute = mode;
        lp.recompute_layers = layers;
        for (const RuleBreak& b : rule_breaks(job.model, lp, *fix.launch))
            if (b.rule->check == RuleCheck::titan_recompute || b.rule->check == RuleCheck::hf_recompute) return false;
        return true;
    };
    // The expert all-to-all overlap runs without full recompute (Megatron-Core's
    // a2a_overlap_recompute rule, whatever stack the search is held to).
    const bool full_ok = !(p.moe_a2a_overlap && job.model.is_moe());
    const bool partial_launchable = full_ok && recompute_launchable(Recompute::full, 1);
    k.skip_selective = !recompute_launchable(Recompute::selective, -1);
    // Layers of the largest virtual stage (job/validate.cpp's bound on recompute_layers).
    const int per_stage = max_stage_layers(job);
    if (fix.recompute) {
        k.rc_first = recompute_index(*fix.recompute, fix.recompute_layers.value_or(-1));
        k.rc_end = k.rc_first + 1;
        k.fixed_recompute_too_deep = fix.recompute_layers.value_or(-1) > per_stage;
        if ((!partial_launchable && k.rc_first > 2) || (!full_ok && k.rc_first >= 2)) k.rc_end = k.rc_first;  // no plan
    } else {
        k.rc_first = 0;
        k.rc_end = full_ok ? 3 : 2;  // none, selective, full
        k.max_depth = std::max(0, per_stage - 1);  // partial 1 .. per_stage-1
        k.depths = partial_launchable ? std::min(kPartialDepths, k.max_depth) : 0;
    }
    const bool sp_possible = p.tp > 1 && (job.training.seq_length / p.cp) % p.tp == 0;
    const bool overlap_possible = fw == Framework::megatron_core;
    for (int s = 0; s <= 1; ++s) {
        const bool sp = s == 1;
        if (fix.sequence_parallel ? *fix.sequence_parallel != sp : (sp && !sp_possible)) continue;
        for (int o = 0; o <= 1; ++o) {
            const bool ov = o == 1;
            if (fix.tp_comm_overlap ? *fix.tp_comm_overlap != ov : (ov && !(sp && overlap_possible))) continue;
            k.sp[k.sps++] = {sp, ov};
        }
    }
    for (int z3 = 0; z3 <= 1; ++z3) {
        int& n = k.ogrs[z3];
        if (fix.overlap_grad_reduce) {
            k.ogr[z3][n++] = *fix.overlap_grad_reduce;
        } else if (!replicas) {
            // Nothing to reduce: the framework's default alone (job/job_sections.cpp).
            k.ogr[z3][n++] = fw != Framework::megatron_lm || z3 == 1;
        } else {
            k.ogr[z3][n++] = false;
            if (fw != Framework::megatron_lm || z3 == 1) k.ogr[z3][n++] = true;
        }
    }
    return k;
}

}  // namespace lostflops::search
