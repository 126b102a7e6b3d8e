// The search under a framework's rules (PlanFix::launch): it evaluates
// exactly the plans of the unrestricted search that the framework can launch,
// with the same figures, and its counts still add up.
#include <map>
#include <tuple>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/framework_rules.h"
#include "lostflops/search.h"

namespace lostflops {
namespace {

// 8 heads, 2 KV heads, 6 layers on 16 GPUs: tp 4 and 8 break the KV heads
// rule of torchtitan and legacy Megatron; pp x vpp of 4 and 12 do not divide
// the layers; zero 1 and 2 are not torchtitan's.
std::string job_text(const std::string& framework) {
    return "model:\n  num_hidden_layers: 6\n  hidden_size: 512\n  num_attention_heads: 8\n"
           "  num_key_value_heads: 2\n  intermediate_size: 1024\n  vocab_size: 1024\n"
           "cluster:\n  gpu: h100-sxm\n  num_gpus: 16\n  gpus_per_node: 8\n"
           "  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n  inter_node: {bandwidth_GBps: 50, latency_us: 5}\n"
           "training:\n  seq_length: 1024\n  global_batch_size: 32\n  framework: " + framework + "\n";
}

using Key = std::tuple<int, int, int, int, int, int64_t, int, int, int, bool, bool, bool>;
Key key_of(const PlanScore& s) {
    const ParallelPlan& p = s.plan;
    return {p.tp, p.cp, p.pp, p.vpp, p.ep, s.micro_batch, p.zero, static_cast<int>(p.recompute), p.recompute_layers,
            p.sequence_parallel, p.tp_comm_overlap, p.overlap_grad_reduce};
}

std::map<Key, double> every_plan(const Job& job, const SearchResult& r) {
    std::map<Key, double> out;
    for (const RankedPlan& rp : r.ranked) {
        const PlanScore s = plan_score(job, r, rp);
        // Stage layouts are tried only for a framework that says them (StageLayoutSearch.*).
        if (s.plan.first_stage_layers >= 0 || s.plan.last_stage_layers >= 0) continue;
        out[key_of(s)] = s.step_time_s;
    }
    return out;
}

void expect_restricted(const std::string& framework, LaunchStack stack) {
    SCOPED_TRACE(framework);
    const SearchJob sj = parse_search_job(job_text(framework), "test.yaml", {}, SearchJobPlan::fixed_where_given);
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    // The job's own context-parallel variant in both searches: under the rules
    // the search otherwise picks each layout's fastest (CpCommSearch.*).
    o.fix.cp_comm_type = sj.job.plan.cp_comm_type;
    ASSERT_TRUE(o.fix.launch);
    EXPECT_EQ(*o.fix.launch, stack);
    o.threads = 2;
    const SearchResult only = search_plans(sj.job, default_calibration(), o);
    o.fix.launch.reset();
    const SearchResult all = search_plans(sj.job, default_calibration(), o);
    for (const SearchResult* r : {&only, &all})
        EXPECT_EQ(r->counts.enumerated,
                  r->counts.pruned_divisibility + r->counts.pruned_memory + r->counts.evaluated);
    const auto kept = every_plan(sj.job, only);
    std::map<Key, double> launchable;
    int breaking = 0;
    for (const RankedPlan& rp : all.ranked) {
        const PlanScore s = plan_score(sj.job, all, rp);
        if (rule_breaks(sj.job.model, launch_plan(s.plan), stack).empty())
            launchable[key_of(s)] = s.step_time_s;
        else
            ++breaking;
    }
    EXPECT_GT(breaking, 0) << "the unrestricted search has plans the framework cannot launch";
    EXPECT_FALSE(kept.empty());
    EXPECT_EQ(kept, launchable);  // the same plans, the same step times to the bit
}

TEST(LaunchRulesSearch, TorchtitanEvaluatesOnlyWhatItLaunches) { expect_restricted("fsdp", LaunchStack::torchtitan); }
TEST(LaunchRulesSearch, LegacyMegatronEvaluatesOnlyWhatItLaunches) {
    expect_restricted("megatron-lm", LaunchStack::megatron_lm);
}
TEST(LaunchRulesSearch, DeepSpeedEvaluatesOnlyWhatItLaunches) { expect_restricted("deepspeed", LaunchStack::deepspeed); }

TEST(LaunchRulesSearch, AFixedSettingNoPlanCanLaunchIsAnError) {
    for (const auto& [framework, set, key] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"fsdp", "parallel.zero=1", "parallel.zero"},
             {"megatron-core", "parallel.pipeline_schedule=dualpipev", "parallel.pipeline_schedule"},
             {"deepspeed", "parallel.pipeline_schedule=zero-bubble", "parallel.pipeline_schedule"}}) {
        SCOPED_TRACE(framework + " " + set);
        const SearchJob sj = parse_search_job(job_text(framework), "test.yaml", {set}, SearchJobPlan::fixed_where_given);
        SearchOptions o;
        o.fix = plan_fix_from(sj);
        try {
            search_plans(sj.job, default_calibration(), o);
            ADD_FAILURE() << "searched";
        } catch (const InputError& e) {
            EXPECT_EQ(e.key(), key);
            EXPECT_NE(std::string(e.what()).find("cannot launch in"), std::string::npos) << e.what();
        }
    }
    // The same job fixed at a stage torchtitan has searches.
    const SearchJob ok = parse_search_job(job_text("fsdp"), "test.yaml", {"parallel.zero=3"}, SearchJobPlan::fixed_where_given);
    SearchOptions o;
    o.fix = plan_fix_from(ok);
    EXPECT_FALSE(search_plans(ok.job, default_calibration(), o).ranked.empty());
}

// FSDP2 at zero 3 runs torch's AdamW over fp32 shards only: with another
// optimizer the search keeps no zero 3 plan, as estimate refuses them
// (job/validate.h optimizer_issue), and with adam it has some.
TEST(LaunchRulesSearch, Fsdp2Zero3OnlyUnderAdam) {
    for (const char* optimizer : {"adam-bf16-moments", "adam"}) {
        SCOPED_TRACE(optimizer);
        const SearchJob sj = parse_search_job(job_text("fsdp"), "test.yaml",
                                              {std::string("training.optimizer=") + optimizer},
                                              SearchJobPlan::fixed_where_given);
        SearchOptions o;
        o.fix = plan_fix_from(sj);
        const SearchResult r = search_plans(sj.job, default_calibration(), o);
        int zero3 = 0;
        for (const RankedPlan& rp : r.ranked) zero3 += plan_score(sj.job, r, rp).plan.zero >= 3 ? 1 : 0;
        ASSERT_FALSE(r.ranked.empty());
        if (std::string(optimizer) == "adam") {
            EXPECT_GT(zero3, 0);
        } else {
            EXPECT_EQ(zero3, 0);
        }
    }
}

}  // namespace
}  // namespace lostflops
