// Megatron-Core's expert all-to-all overlap (moe_a2a_overlap) as a lever of
// the search: the overlapped twin of each MoE layout that can run it
// (search/enumerate.cpp), never with full recompute, each plan priced as
// estimate() prices it; the memory of its schedule (one more forward before
// the first backward, estimate/inflight.cpp); and its framework rules
// (lostflops/framework_rules.h).
#include <gtest/gtest.h>

#include "estimate/inflight.h"
#include "search/dispatcher_choice.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/framework_rules.h"
#include "lostflops/search.h"

namespace lostflops {
namespace {

// 4 layers of 8 experts (top 2) on 16 H100, 2 nodes.
std::string moe_text(const std::string& framework, const std::string& parallel = "") {
    return "model:\n  num_hidden_layers: 4\n  hidden_size: 1024\n  num_attention_heads: 8\n"
           "  num_local_experts: 8\n  num_experts_per_tok: 2\n  moe_intermediate_size: 512\n"
           "  intermediate_size: 2048\n  vocab_size: 32000\n  hidden_act: silu\n"
           "cluster: {gpu: h100-sxm, num_gpus: 16, gpus_per_node: 8,\n"
           "  intra_node: {bandwidth_GBps: 450, latency_us: 2}, inter_node: {bandwidth_GBps: 50, latency_us: 5}}\n"
           "training: {seq_length: 2048, global_batch_size: 32, micro_batch_size: 1, framework: " + framework + "}\n" +
           (parallel.empty() ? "" : "parallel: {" + parallel + "}\n");
}

SearchResult search_all(const Job& job, const PlanFix& fix) {
    SearchOptions o;
    o.fix = fix;
    o.threads = 2;
    return search_plans(job, default_calibration(), o);
}

TEST(A2aOverlapSearch, OverlappedPlansLaunchAndTheBestIsTheBetterOfBothSettings) {
    const SearchJob sj = parse_search_job(moe_text("megatron-core"), "moe.yaml", {}, SearchJobPlan::fixed_where_given);
    const PlanFix fix = plan_fix_from(sj);
    const SearchResult all = search_all(sj.job, fix);
    ASSERT_FALSE(all.ranked.empty());
    EXPECT_EQ(all.counts.enumerated, all.counts.pruned_divisibility + all.counts.pruned_memory + all.counts.evaluated);
    int overlapped = 0, checked = 0;
    const Calibration cal = default_calibration();
    for (const RankedPlan& rp : all.ranked) {
        const PlanScore s = plan_score(sj.job, all, rp);
        if (!s.plan.moe_a2a_overlap) continue;
        ++overlapped;
        EXPECT_NE(s.plan.recompute, Recompute::full);
        EXPECT_NE(s.plan.moe_dispatcher, MoeDispatcher::allgather);
        EXPECT_GT(s.plan.ep, 1);
        EXPECT_TRUE(s.plan.pp == 1 || s.plan.vpp > 1);
        for (const RuleBreak& b : rule_breaks(sj.job.model, launch_plan(s.plan), LaunchStack::megatron_core))
            EXPECT_TRUE(b.rule->key != std::string("parallel.moe_a2a_overlap")) << rule_break_text(b);
        if (checked++ < 20) {  // estimate()'s figures to the bit
            Job j = sj.job;
            j.plan = s.plan;
            j.training.micro_batch = s.micro_batch;
            const Estimate e = estimate(j, cal);
            EXPECT_DOUBLE_EQ(e.step_time_s, s.step_time_s);
            EXPECT_DOUBLE_EQ(e.memory.peak_bytes, s.peak_bytes);
        }
    }
    EXPECT_GT(overlapped, 0);
    // Fixed either way, the search keeps those plans only; free, its best is the better.
    PlanFix on = fix, off = fix;
    on.moe_a2a_overlap = true;
    off.moe_a2a_overlap = false;
    const SearchResult r_on = search_all(sj.job, on), r_off = search_all(sj.job, off);
    ASSERT_FALSE(r_on.ranked.empty());
    ASSERT_FALSE(r_off.ranked.empty());
    EXPECT_TRUE(plan_score(sj.job, r_on, r_on.ranked.front()).plan.moe_a2a_overlap);
    EXPECT_FALSE(plan_score(sj.job, r_off, r_off.ranked.front()).plan.moe_a2a_overlap);
    EXPECT_EQ(r_on.counts.evaluated + r_off.counts.evaluated, all.counts.evaluated);
    EXPECT_DOUBLE_EQ(all.ranked.front().step_time_s,
                     std::min(r_on.ranked.front().step_time_s, r_off.ranked.front().step_time_s));
}

TEST(A2aOverlapSearch, OtherStacksHaveNoOverlapAndRefuseItFixed) {
    const SearchJob sj = parse_search_job(moe_text("fsdp"), "moe.yaml", {}, SearchJobPlan::fixed_where_given);
    PlanFix fix = plan_fix_from(sj);
    const SearchResult r = search_all(sj.job, fix);
    for (const RankedPlan& rp : r.ranked) EXPECT_FALSE(plan_score(sj.job, r, rp).plan.moe_a2a_overlap);
    // torchtitan has no all-gather dispatcher (framework_rules.h
    // titan_dispatcher): Qwen3-30B-A3B on 64 H100, where the all-gather is
    // the fastest of some layouts (ep 4 within a node).
    const SearchJob qwen = parse_search_job(
        "model: {preset: qwen3-30b-a3b}\ncluster: {preset: dgx-h100, num_gpus: 64}\n"
        "training: {seq_length: 4096, global_batch_size: 512, micro_batch_size: 1, framework: fsdp}\n",
        "qwen3.yaml", {}, SearchJobPlan::fixed_where_given);
    SearchOptions o;
    o.fix = plan_fix_from(qwen);
    o.fix.micro_batch = 1;
    o.keep_best = 64;
    o.threads = 2;
    const SearchResult q = search_plans(qwen.job, default_calibration(), o);
    int expert_parallel = 0, gather = 0;
    for (const SearchLayout& l : q.layouts) {
        if (l.ep == 1) continue;
        ++expert_parallel;
        EXPECT_NE(l.dispatcher, MoeDispatcher::allgather);
        gather += search::fastest_dispatcher(qwen.job, default_calibration(), l) == MoeDispatcher::allgather;
    }
    EXPECT_GT(expert_parallel, 0);
    EXPECT_GT(gather, 0);
    fix.moe_a2a_overlap = true;
    try {
        (void)search_all(sj.job, fix);
        ADD_FAILURE() << "torchtitan searched with moe_a2a_overlap fixed on";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("moe_a2a_overlap is Megatron-Core's"), std::string::npos) << e.what();
    }
}

// The rules: ep > 1, not allgather, vpp with a pipeline, no full recompute;
// torchtitan dispatches by all-to-all or DeepEP.
TEST(A2aOverlapRules, MegatronCoreRunsItOnlyWhereItsAssertsHold) {
    const auto keys = [](const std::string& parallel, const std::string& framework = "megatron-core") {
        const Job j = parse_job(moe_text(framework, parallel), "moe.yaml");
        std::string out;
        for (const RuleBreak& b : rule_breaks(j))
            if (b.rule->key == std::string("parallel.moe_a2a_overlap")) out += b.detail + ";";
        return out;
    };
    EXPECT_EQ(keys("ep: 8, moe_a2a_overlap: true, recompute: selective"), "");
    EXPECT_EQ(keys("ep: 8, pp: 2, vpp: 2, moe_a2a_overlap: true, recompute: selective"), "");
    EXPECT_EQ(keys("ep: 8, pp: 2, moe_a2a_overlap: true, recompute: selective"), "pp 2, vpp 1;");
    EXPECT_EQ(keys("ep: 8, moe_dispatcher: allgather, moe_a2a_overlap: true, recompute: selective"),
              "moe_dispatcher allgather;");
    EXPECT_EQ(keys("ep: 1, moe_a2a_overlap: true, recompute: selective"), "ep 1;");
    EXPECT_EQ(keys("ep: 8, moe_a2a_overlap: true, recompute: full"), "recompute full;");
    EXPECT_EQ(keys("ep: 8, moe_a2a_overlap: true, zero: 3, recompute: selective", "fsdp"), "moe_a2a_overlap true;");
    const Job titan = parse_job(moe_text("fsdp", "ep: 8, zero: 3, moe_dispatcher: allgather"), "moe.yaml");
    std::string titan_breaks;
    for (const RuleBreak& b : rule_breaks(titan)) titan_breaks += std::string(b.rule->key) + " " + b.detail + ";";
    EXPECT_EQ(titan_breaks, "parallel.moe_dispatcher moe_dispatcher allgather;");
}

// One more micro-batch alive: without a pipeline combined 1F1B runs the
// second micro-batch's forward with the first's backward (2 alive, not 1);
// interleaved pp 2 x vpp 2 over 8 micro-batches, rank 0's warm-up is
// 2(pp-1) + (vpp-1)pp + 1 = 5 chunk passes (6 alive, not 5).
TEST(A2aOverlapMemory, ItsScheduleKeepsOneMorePassAlive) {
    const Job flat = parse_job(moe_text("megatron-core", "ep: 8, dp: 16, moe_a2a_overlap: true, recompute: selective"),
                               "moe.yaml");
    ASSERT_GE(flat.plan.micro_batches(flat.training), 2);
    EXPECT_EQ(inflight_passes(flat, 0).alive, 2);
    Job plain = flat;
    plain.plan.moe_a2a_overlap = false;
    EXPECT_EQ(inflight_passes(plain, 0).alive, 1);
    const Job inter = parse_job(
        moe_text("megatron-core", "ep: 8, pp: 2, vpp: 2, dp: 8, moe_a2a_overlap: true, recompute: selective"),
        "moe.yaml", {"training.global_batch_size=16"});
    ASSERT_EQ(inter.plan.micro_batches(inter.training), 2);
    Job inter8 = parse_job(
        moe_text("megatron-core", "ep: 8, pp: 2, vpp: 2, dp: 8, moe_a2a_overlap: true, recompute: selective"),
        "moe.yaml", {"training.global_batch_size=64"});
    ASSERT_EQ(inter8.plan.micro_batches(inter8.training), 8);
    EXPECT_EQ(inflight_passes(inter8, 0).warmup, 5);
    EXPECT_EQ(inflight_passes(inter8, 0).alive, 6);
    inter8.plan.moe_a2a_overlap = false;
    EXPECT_EQ(inflight_passes(inter8, 0).alive, 5);
    // m == pp: Megatron runs every pass in warm-up either way.
    EXPECT_EQ(inflight_passes(inter, 0).alive, 4);
}

}  // namespace
}  // namespace lostflops
