// The search's context-parallel variant (search/cp_comm_choice.h): per
// layout the fastest variant the job's framework launches, a fixed one kept.
#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/framework_rules.h"
#include "lostflops/job.h"
#include "lostflops/search.h"

namespace lostflops {
namespace {

SearchResult run(const SearchJob& sj, const std::vector<std::string>& fixes = {}) {
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    for (const std::string& f : fixes) add_plan_fix(o.fix, f, "--fix");
    o.threads = 2;
    return search_plans(sj.job, default_calibration(), o);
}

// Llama-3.1-8B at seq 32,768 on 32 H100, cp fixed to 4: 32 heads, 8 KV heads.
SearchJob long_job(const std::string& framework) {
    return parse_search_job("model: {preset: llama3.1-8b}\ncluster: {preset: dgx-h100, num_gpus: 32}\n"
                            "training: {seq_length: 32768, global_batch_size: 16, framework: " + framework + "}\n"
                            "parallel: {cp: 4, pp: 1}\n",
                            "cp.yaml", {}, SearchJobPlan::fixed_where_given);
}

TEST(CpCommSearch, TheBestPlansVariantIsTheFastestItsFrameworkLaunches) {
    const SearchJob sj = long_job("megatron-core");
    const SearchResult r = run(sj);
    ASSERT_FALSE(r.ranked.empty());
    const PlanScore best = plan_score(sj.job, r, r.ranked.front());
    ASSERT_EQ(best.plan.cp, 4);
    const Job chosen = job_with_plan(sj.job, best);
    EXPECT_EQ(estimate(chosen, default_calibration()).step_time_s, best.step_time_s);  // the estimate's figure
    int launchable = 0;
    for (CpCommType t : {CpCommType::p2p, CpCommType::allgather, CpCommType::a2a}) {
        Job other = chosen;
        other.plan.cp_comm_type = t;
        if (!rule_breaks(other).empty()) continue;
        ++launchable;
        EXPECT_LE(best.step_time_s, estimate(other, default_calibration()).step_time_s) << to_string(t);
    }
    EXPECT_GE(launchable, 2);
}

TEST(CpCommSearch, OnlyTheVariantsTheFrameworkLaunches) {
    for (const char* fw : {"fsdp", "deepspeed", "megatron-core"}) {
        SCOPED_TRACE(fw);
        const SearchJob sj = long_job(fw);
        const SearchResult r = run(sj);
        ASSERT_FALSE(r.ranked.empty());
        for (size_t i = 0; i < std::min<size_t>(r.sorted, 50); ++i) {
            const Job j = job_with_plan(sj.job, plan_score(sj.job, r, r.ranked[i]));
            for (const RuleBreak& b : rule_breaks(j)) ADD_FAILURE() << rule_break_text(b);
            if (std::string(fw) == "deepspeed") { EXPECT_EQ(j.plan.cp_comm_type, CpCommType::a2a); }
            if (std::string(fw) == "fsdp") { EXPECT_NE(j.plan.cp_comm_type, CpCommType::a2a); }
        }
    }
}

TEST(CpCommSearch, AFixedVariantIsKept) {
    const SearchJob sj = long_job("megatron-core");
    for (const char* t : {"p2p", "allgather", "a2a"}) {
        const SearchResult r = run(sj, {std::string("cp_comm_type=") + t});
        ASSERT_FALSE(r.ranked.empty()) << t;
        for (size_t i = 0; i < std::min<size_t>(r.sorted, 20); ++i)
            EXPECT_STREQ(to_string(plan_score(sj.job, r, r.ranked[i]).plan.cp_comm_type), t);
    }
    PlanFix f;
    EXPECT_THROW(add_plan_fix(f, "cp_comm_type=ring", "--fix"), InputError);
}

}  // namespace
}  // namespace lostflops
