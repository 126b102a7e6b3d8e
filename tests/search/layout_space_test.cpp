// The search's layout space (src/search/layout_space.cpp): the valid layouts
// in the enumerator's order and the plans of valid and rejected candidates,
// against a plain walk of every candidate (tp, cp, pp over divisors of the
// GPUs, micro-batch over divisors of the batch, vpp up to layers / pp, ep over
// divisors of the experts with etp 1 or tp) put through validate_job and
// LayoutEvaluator::plan_count, each valid MoE layout of a megatron-core job
// once more with moe_a2a_overlap where Megatron-Core's rule for it holds
// (lostflops/framework_rules.h a2a_overlap_setup); the same for any thread
// count and under fixes.
#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/framework_rules.h"
#include "search/enumerate.h"
#include "search/evaluate_layout.h"
#include "search/layout_space.h"
#include "job/validate.h"
#include "test_util.h"

namespace lostflops::search {
namespace {

std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> d;
    for (int64_t i = 1; i <= n; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

bool agrees(int64_t fixed, int64_t v) { return fixed == 0 || fixed == v; }

LayoutSpace walk(const Job& job, const PlanFix& fix, const LayoutFix& lf) {
    const LayoutEvaluator ev(job, default_calibration(), fix);
    LayoutSpace out;
    const int64_t gpus = job.cluster.num_gpus;
    for (const int64_t tp : divisors(gpus))
        for (const int64_t cp : divisors(gpus / tp))
            for (const int64_t pp : divisors(gpus / (tp * cp))) {
                const int64_t dp = gpus / (tp * cp * pp);
                if (!agrees(lf.tp, tp) || !agrees(lf.cp, cp) || !agrees(lf.pp, pp) || !agrees(lf.dp, dp)) continue;
                for (const int64_t mb : divisors(job.training.global_batch)) {
                    const int64_t max_vpp = pp == 1 || pp > job.model.layers ? 1 : job.model.layers / pp;
                    for (int64_t vpp = 1; vpp <= max_vpp; ++vpp)
                        for (const int64_t ep : job.model.is_moe() ? divisors(job.model.experts_gcd()) : divisors(1))
                        for (int e = 0; e < (job.model.is_moe() && tp > 1 ? 2 : 1); ++e) {  // etp 1, and tp for MoE
                            const int64_t etp = e == 0 ? 1 : tp;
                            if (!agrees(lf.micro_batch, mb) || !agrees(lf.vpp, vpp) || !agrees(lf.ep, ep)) continue;
                            Layout l{static_cast<int>(tp), static_cast<int>(cp), static_cast<int>(pp),
                                     static_cast<int>(dp), static_cast<int>(vpp), static_cast<int>(ep), mb};
                            l.etp = static_cast<int>(etp);
                            bool valid = true;
                            try {
                                validate_job(with_layout(job, l));
                            } catch (const InputError&) {
                                valid = false;
                            }
                            if (valid) {
                                out.layouts.push_back(l);
                                out.plans += ev.plan_count(l);
                                // The overlapped twin, where Megatron-Core's rule holds.
                                Job twin = with_layout(job, l);
                                twin.plan.moe_a2a_overlap = true;
                                LaunchPlan lp = launch_plan(twin.plan);
                                lp.recompute = Recompute::none;
                                bool runs = job.model.is_moe() && job.training.framework == Framework::megatron_core;
                                for (const RuleBreak& b : rule_breaks(job.model, lp, LaunchStack::megatron_core))
                                    runs = runs && b.rule->check != RuleCheck::a2a_overlap_setup;
                                if (runs) {
                                    l.a2a_overlap = true;
                                    out.layouts.push_back(l);
                                    out.plans += ev.plan_count(l);
                                }
                            } else {
                                out.rejected_plans += ev.plan_count(l);
                            }
                        }
                }
            }
    return out;
}

void expect_same(const Job& job, const PlanFix& fix, const LayoutFix& lf) {
    const LayoutSpace want = walk(job, fix, lf);
    ASSERT_FALSE(want.layouts.empty());
    EXPECT_GT(want.rejected_plans, 0);
    for (const unsigned threads : {1u, 2u, 3u}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        const LayoutSpace got = layout_space(job, fix, lf, threads);
        EXPECT_EQ(got.plans, want.plans);
        EXPECT_EQ(got.rejected_plans, want.rejected_plans);
        ASSERT_EQ(got.layouts.size(), want.layouts.size());
        for (size_t i = 0; i < got.layouts.size(); ++i) {
            const Layout &a = got.layouts[i], &b = want.layouts[i];
            ASSERT_TRUE(a.tp == b.tp && a.cp == b.cp && a.pp == b.pp && a.dp == b.dp && a.vpp == b.vpp &&
                        a.ep == b.ep && a.etp == b.etp && a.micro_batch == b.micro_batch &&
                        a.a2a_overlap == b.a2a_overlap)
                << i;
        }
    }
}

Job job_of(const std::vector<std::string>& set) {
    std::vector<std::string> all = {"parallel.sequence_parallel=false", "parallel.pp=1", "parallel.cp=1"};
    all.insert(all.end(), set.begin(), set.end());
    return parse_job(test::small_job_text(), "small.yaml", all);
}

TEST(LayoutSpace, DenseJobEqualsTheWalkOfEveryCandidate) {
    // 48 GPUs and batch 24: many shapes, micro-batches and rejected runs.
    const Job job = job_of({"cluster.num_gpus=48", "training.global_batch_size=24", "training.micro_batch_size=1",
                            "model.num_hidden_layers=12", "parallel.tp=2", "parallel.dp=24"});
    expect_same(job, PlanFix{}, LayoutFix{});
    PlanFix fix;
    fix.recompute = Recompute::full;
    fix.recompute_layers = -1;
    LayoutFix lf;
    lf.vpp = 2;
    lf.micro_batch = 2;
    expect_same(job, fix, lf);
}

TEST(LayoutSpace, MixtureOfExpertsEqualsTheWalkOfEveryCandidate) {
    const Job job = job_of({"model.num_hidden_layers=4", "model.hidden_size=256", "model.num_attention_heads=4",
                            "model.intermediate_size=512", "model.num_local_experts=4", "model.num_experts_per_tok=2",
                            "cluster.num_gpus=16", "training.seq_length=32", "training.global_batch_size=8",
                            "training.micro_batch_size=1", "parallel.tp=2", "parallel.dp=8"});
    expect_same(job, PlanFix{}, LayoutFix{});
    LayoutFix lf;
    lf.ep = 2;
    expect_same(job, PlanFix{}, lf);
    // Each overlapped twin counts its plans without full recompute, none of
    // them is left out, and a torchtitan job has none.
    const LayoutSpace space = layout_space(job, PlanFix{}, LayoutFix{}, 1);
    int twins = 0;
    for (const Layout& l : space.layouts) twins += l.a2a_overlap;
    EXPECT_GT(twins, 0);
    const Job titan = job_of({"model.num_hidden_layers=4", "model.hidden_size=256", "model.num_attention_heads=4",
                              "model.intermediate_size=512", "model.num_local_experts=4", "model.num_experts_per_tok=2",
                              "cluster.num_gpus=16", "training.seq_length=32", "training.global_batch_size=8",
                              "training.micro_batch_size=1", "parallel.tp=2", "parallel.dp=8",
                              "training.framework=fsdp", "parallel.zero=3"});
    for (const Layout& l : layout_space(titan, PlanFix{}, LayoutFix{}, 1).layouts) EXPECT_FALSE(l.a2a_overlap);
    // Under a stack's launch rules the knobs depend on ep (torchtitan's
    // expert region, Megatron-LM's ZeRO 3 with ep > 1): each valid layout's
    // count is still its own (it was 816 plans off on a torchtitan MoE job).
    for (const LaunchStack stack : {LaunchStack::torchtitan, LaunchStack::megatron_lm}) {
        SCOPED_TRACE(to_string(stack));
        Job j = titan;
        j.training.framework = stack == LaunchStack::torchtitan ? Framework::fsdp : Framework::megatron_lm;
        PlanFix fix;
        fix.launch = stack;
        LayoutFix lf;
        lf.launch = static_cast<int>(stack);
        const LayoutSpace sp = layout_space(j, fix, lf, 2);
        LayoutEvaluator ev(j, default_calibration(), fix);
        int64_t plans = 0;
        for (const Layout& l : sp.layouts) plans += ev.plan_count(l);
        ASSERT_FALSE(sp.layouts.empty());
        EXPECT_EQ(sp.plans, plans);
    }
}

}  // namespace
}  // namespace lostflops::search
