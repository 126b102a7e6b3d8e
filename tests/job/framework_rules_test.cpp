// The framework rules table (lostflops/framework_rules.h): every row sourced,
// each check against hand-made plans that keep and break it, the estimate's
// warning and --strict error.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "../cli/cli_util.h"
#include "lostflops/framework_rules.h"
#include "lostflops/job.h"

namespace lostflops {
namespace {

Job llama70b(const std::vector<std::string>& set) {
    // Llama-3-70B shape: 80 layers, 64 heads, 8 KV heads (the default job's model).
    return default_job(set);
}

std::set<RuleCheck> broken(const Job& job, LaunchStack stack) {
    std::set<RuleCheck> out;
    for (const RuleBreak& b : rule_breaks(job.model, launch_plan(job.plan), stack)) out.insert(b.rule->check);
    return out;
}

TEST(FrameworkRules, EveryRowNamesItsKeyRuleAndSource) {
    std::set<LaunchStack> stacks;
    for (const FrameworkRule& r : kFrameworkRules) {
        stacks.insert(r.stack);
        EXPECT_EQ(std::string(r.key).rfind("parallel.", 0), 0u) << r.rule;
        EXPECT_GT(std::string(r.rule).size(), 10u);
        EXPECT_GT(std::string(r.source).size(), 20u) << r.rule;
        EXPECT_NE(std::string(r.source).find(".py"), std::string::npos) << r.rule << ": a file of the framework";
    }
    EXPECT_EQ(stacks.size(), 5u);
    EXPECT_EQ(launch_stack(Framework::fsdp), LaunchStack::torchtitan);
    EXPECT_EQ(launch_stack(Framework::hf), LaunchStack::hf);
    EXPECT_EQ(launch_stack(Framework::megatron_lm), LaunchStack::megatron_lm);
}

TEST(FrameworkRules, DefaultJobLaunchesEverywhereButDeepSpeedInterleaves) {
    const Job job = default_job();  // tp 8, pp 4, vpp 5, zero 1
    EXPECT_TRUE(broken(job, LaunchStack::megatron_core).empty());
    EXPECT_TRUE(broken(job, LaunchStack::megatron_lm).empty());
    EXPECT_EQ(broken(job, LaunchStack::torchtitan), (std::set<RuleCheck>{RuleCheck::titan_zero}));
    EXPECT_EQ(broken(job, LaunchStack::deepspeed), (std::set<RuleCheck>{RuleCheck::schedule_runs}));
}

TEST(FrameworkRules, KvHeadsFewerThanTpLaunchNowhere) {
    // Issue 36 item 12: Megatron-Core divides the query groups by tp
    // (attention.py), so 8 KV heads on tp 16 do not launch there either.
    const Job job = llama70b({"cluster.num_gpus=2048", "parallel.tp=16", "parallel.dp=32"});
    EXPECT_EQ(broken(job, LaunchStack::megatron_core), (std::set<RuleCheck>{RuleCheck::kv_heads_over_tp}));
    EXPECT_TRUE(broken(job, LaunchStack::megatron_lm).count(RuleCheck::kv_heads_over_tp));
    EXPECT_TRUE(broken(job, LaunchStack::torchtitan).count(RuleCheck::kv_heads_over_tp));
    const auto b = rule_breaks(job.model, launch_plan(job.plan), LaunchStack::megatron_lm);
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b.front().detail, "tp 16, 8 KV heads");
    EXPECT_NE(rule_break_text(b.front()).find("cannot launch in megatron-lm: tp divides the KV heads"), std::string::npos);
}

TEST(FrameworkRules, UnevenStagesNeedALayoutFlag) {
    // 80 layers on pp 4 x vpp 3 = 12 stages: Megatron-Core writes a layout, legacy cannot.
    const Job job = llama70b({"parallel.vpp=3"});
    EXPECT_TRUE(broken(job, LaunchStack::megatron_core).empty());
    EXPECT_TRUE(broken(job, LaunchStack::megatron_lm).count(RuleCheck::even_stages));
    // torchtitan: ceil(80/12) = 7 per stage makes ceil(80/7) = 12 stages: it launches.
    EXPECT_FALSE(broken(job, LaunchStack::torchtitan).count(RuleCheck::titan_stages));
    // 80 layers on pp 4 x vpp 11 = 44 stages: 2 per stage make 40 stages.
    const Job v11 = llama70b({"parallel.vpp=11", "training.global_batch_size=1024"});
    EXPECT_TRUE(broken(v11, LaunchStack::torchtitan).count(RuleCheck::titan_stages));
    EXPECT_TRUE(broken(v11, LaunchStack::megatron_core).empty());
}

TEST(FrameworkRules, ZeroStagesPerStack) {
    const Job z2 = llama70b({"parallel.zero=2", "parallel.vpp=1"});
    EXPECT_TRUE(broken(z2, LaunchStack::megatron_core).empty());
    EXPECT_TRUE(broken(z2, LaunchStack::megatron_lm).count(RuleCheck::legacy_zero));
    EXPECT_TRUE(broken(z2, LaunchStack::torchtitan).count(RuleCheck::titan_zero));
    EXPECT_TRUE(broken(z2, LaunchStack::deepspeed).count(RuleCheck::pp_zero_below_2));
    const Job z3 = llama70b({"parallel.zero=3", "parallel.pp=1", "parallel.vpp=1", "parallel.dp=128"});
    EXPECT_TRUE(broken(z3, LaunchStack::megatron_lm).empty());
    EXPECT_TRUE(broken(z3, LaunchStack::torchtitan).empty());
    EXPECT_TRUE(broken(z3, LaunchStack::deepspeed).empty());
}

TEST(FrameworkRules, SchedulesPerStack) {
    const Job dpv = llama70b({"parallel.pipeline_schedule=dualpipev", "parallel.vpp=2"});
    EXPECT_TRUE(broken(dpv, LaunchStack::megatron_core).count(RuleCheck::schedule_runs));
    EXPECT_FALSE(broken(dpv, LaunchStack::torchtitan).count(RuleCheck::schedule_runs));
    const Job zb = llama70b({"parallel.pipeline_schedule=zero-bubble", "parallel.vpp=1"});
    EXPECT_TRUE(broken(zb, LaunchStack::torchtitan).count(RuleCheck::schedule_runs));
    EXPECT_TRUE(broken(zb, LaunchStack::deepspeed).count(RuleCheck::schedule_runs));
}

TEST(FrameworkRules, ContextParallelism) {
    const Job cp = llama70b({"parallel.cp=16", "parallel.dp=2"});  // 8 KV heads over cp 16
    EXPECT_TRUE(broken(cp, LaunchStack::megatron_lm).count(RuleCheck::no_cp));
    EXPECT_TRUE(broken(cp, LaunchStack::deepspeed).count(RuleCheck::heads_over_cp));
    EXPECT_TRUE(broken(cp, LaunchStack::megatron_core).empty());
    const Job cp8 = llama70b({"parallel.cp=8", "parallel.dp=4"});
    EXPECT_FALSE(broken(cp8, LaunchStack::deepspeed).count(RuleCheck::heads_over_cp));
}

TEST(FrameworkRules, EstimateWarnsAndStrictRefuses) {
    using test::run_cli;
    const std::string set = "--set training.framework=megatron-lm --set parallel.vpp=3";
    const auto warn = run_cli("estimate " + set);
    EXPECT_EQ(warn.code, 0) << warn.err;
    EXPECT_NE(warn.err.find("lostflops: warning: parallel.pp: cannot launch in megatron-lm: pp x vpp divides the layers"),
              std::string::npos)
        << warn.err;
    EXPECT_NE(warn.err.find("_get_num_layers"), std::string::npos) << warn.err;
    const auto strict = run_cli("--strict estimate " + set);
    EXPECT_EQ(strict.code, 2);
    EXPECT_NE(strict.err.find("(--strict)"), std::string::npos) << strict.err;
    const std::string tp16 = "--set cluster.num_gpus=2048 --set parallel.tp=16 --set parallel.dp=32";
    const auto core = run_cli("--strict estimate --set training.framework=megatron-core " + tp16);
    EXPECT_EQ(core.code, 2) << core.err;  // before: 0
    EXPECT_NE(core.err.find("parallel.tp: cannot launch in megatron-core: tp divides the KV heads"), std::string::npos)
        << core.err;
    const auto fine = run_cli("--strict estimate --set training.framework=megatron-lm");
    EXPECT_EQ(fine.code, 0) << fine.err;
    EXPECT_EQ(fine.err.find("cannot launch"), std::string::npos) << fine.err;
}

}  // namespace
}  // namespace lostflops
