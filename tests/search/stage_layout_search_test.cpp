// Stage layouts as a searched lever (issue 37): where the framework says
// first / last pipeline rank layers (Megatron-Core; torchtitan with one stage
// a rank) and the job gives none, every layout of pp > 1 is also tried with
// its embedding's and its loss's rank 1 or 2 layers a chunk shorter
// (search/enumerate.cpp stage_variants). A stage-layout plan's figures are
// estimate's of the job loaded with the --set arguments search prints, and
// its export says the layout in the framework's own flags and comes back
// through import.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "job/stage_layout.h"
#include "job/validate.h"
#include "lostflops/framework_rules.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "lostflops/search.h"
#include "lostflops/search_report.h"
#include "every_plan.h"
#include "search/enumerate.h"

namespace lostflops {
namespace {

// `layers` layers on 16 GPUs; a large vocabulary makes the loss's rank heavy.
std::string job_text(const std::string& framework, int layers, const std::string& parallel = "") {
    return "model:\n  num_hidden_layers: " + std::to_string(layers) +
           "\n  hidden_size: 1024\n  num_attention_heads: 8\n"
           "  num_key_value_heads: 8\n  intermediate_size: 4096\n  vocab_size: 256000\n"
           "cluster:\n  gpu: h100-sxm\n  num_gpus: 16\n  gpus_per_node: 8\n"
           "  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n  inter_node: {bandwidth_GBps: 50, latency_us: 5}\n"
           "training:\n  seq_length: 2048\n  global_batch_size: 32\n  framework: " + framework + "\n" + parallel;
}

// The cluster an imported job is given back (a framework's settings do not say it).
const std::vector<std::string> kCluster = {"cluster.preset=dgx-h100", "cluster.num_gpus=16"};

struct Found {
    SearchJob sj;
    SearchResult result;
    std::vector<PlanScore> staged;  // the plans with first / last stage layers, in rank order
};

Found search_all(const std::string& text) {
    Found f;
    f.sj = parse_search_job(text, "test.yaml", {}, SearchJobPlan::fixed_where_given);
    f.result = test::search_every_plan(f.sj);
    for (const RankedPlan& rp : f.result.ranked) {
        const PlanScore s = plan_score(f.sj.job, f.result, rp);
        if (s.plan.first_stage_layers >= 0 || s.plan.last_stage_layers >= 0) f.staged.push_back(s);
    }
    return f;
}

TEST(StageLayoutSearch, MegatronCorePlansAreEstimatesOfTheirPrintedSetLine) {
    const std::string text = job_text("megatron-core", 10);
    const Found f = search_all(text);
    ASSERT_FALSE(f.staged.empty());
    int checked = 0;
    for (const PlanScore& s : f.staged) {
        // The end ranks hold 1 or 2 layers a chunk fewer than the middle ones, and no more.
        Job j = job_with_plan(f.sj.job, s);
        EXPECT_FALSE(stage_layout_issue(j));
        const int first = virtual_stage(j, 0, 0).layers, last = virtual_stage(j, s.plan.pp - 1, 0).layers;
        if (s.plan.pp == 2) {  // no middle rank: the ends 1 or 2 layers a chunk apart
            EXPECT_TRUE(std::abs(first - last) == 1 || std::abs(first - last) == 2) << plan_words(s);
        } else {
            const int middle = virtual_stage(j, 1, 0).layers;
            for (const int fewer : {middle - first, middle - last}) EXPECT_TRUE(fewer >= 0 && fewer <= 2) << plan_words(s);
            EXPECT_NE(first + last, 2 * middle) << plan_words(s);
        }
        if (checked++ >= 4) continue;
        // As `lostflops estimate --set ...` loads it.
        const Estimate e = estimate(parse_job(text, "test.yaml", plan_set_arguments(f.sj.job, s)), default_calibration());
        EXPECT_NEAR(e.step_time_s, s.step_time_s, 1e-9 * s.step_time_s) << plan_words(s);
        EXPECT_NEAR(e.memory.peak_bytes, s.peak_bytes, 1e-9 * s.peak_bytes) << plan_words(s);
    }
}

TEST(StageLayoutSearch, NoneWhereTheFrameworkCannotSayItOrTheJobGivesOne) {
    EXPECT_TRUE(search_all(job_text("megatron-lm", 10)).staged.empty());  // legacy: pp x vpp divides the layers
    EXPECT_TRUE(search_all(job_text("deepspeed", 10)).staged.empty());
    const Found given = search_all(job_text("megatron-core", 10, "parallel:\n  pp: 4\n  first_stage_layers: 1\n"));
    ASSERT_FALSE(given.staged.empty());
    for (const PlanScore& s : given.staged) {
        EXPECT_EQ(s.plan.first_stage_layers, 1);
        EXPECT_EQ(s.plan.last_stage_layers, -1);
    }
    // torchtitan: one stage a rank only (its less-layers shorten one virtual stage).
    const Found titan = search_all(job_text("fsdp", 10));
    ASSERT_FALSE(titan.staged.empty());
    for (const PlanScore& s : titan.staged) EXPECT_EQ(s.plan.vpp, 1);
}

TEST(StageLayoutSearch, RankPlanFindsTheJobsOwnLayoutNotAVariantOfIt) {
    // search --rank-plan matches the job's plan among the searched ones: the
    // even split when the job gives none, its own first / last layers when it
    // does; never a stage variant or a schedule twin of the same degrees.
    const Found f = search_all(job_text("megatron-core", 10));
    for (const std::string& layout : {std::string(""), std::string("  last_stage_layers: 1\n")}) {
        const Job given = parse_job(job_text("megatron-core", 10, "parallel:\n  tp: 1\n  pp: 4\n" + layout), "test.yaml");
        const Comparison c = compare_plan(f.sj.job, default_calibration(), f.result, plan_fix_all(given),
                                          RankBy::throughput);
        ASSERT_TRUE(c.found) << layout;
        EXPECT_EQ(c.compared.plan.first_stage_layers, given.plan.first_stage_layers) << layout;
        EXPECT_EQ(c.compared.plan.last_stage_layers, given.plan.last_stage_layers) << layout;
        const Estimate e = estimate(given, default_calibration());
        EXPECT_NEAR(c.compared.step_time_s, e.step_time_s, 1e-9 * e.step_time_s) << layout;
    }
}

TEST(StageLayoutSearch, TheVariantsOfLlama405BsLayersOnSixteenRanks) {
    // 126 layers on pp 16: the default split is already 7, 8 x 14, 7 (Llama 3
    // 405B's); the variants are the ends alone two layers short: 6 / 8 x 15.
    const SearchJob sj = parse_search_job(job_text("megatron-core", 126), "test.yaml", {}, SearchJobPlan::fixed_where_given);
    search::LayoutFix fix;
    fix.pp = 16;
    fix.tp = 1;
    fix.micro_batch = 1;
    fix.launch = static_cast<int>(LaunchStack::megatron_core);
    std::set<std::tuple<int, int, int>> seen;  // (vpp, first, last)
    int variants_vpp1 = 0;
    search::enumerate_layouts(sj.job, [&](const search::Layout& l) {
        if (!l.stage_variant()) return;
        seen.insert({l.vpp, l.first_stage_layers, l.last_stage_layers});
        variants_vpp1 += l.vpp == 1 ? 1 : 0;
        EXPECT_FALSE(stage_layout_issue(search::with_layout(sj.job, l)));
    }, {}, fix);
    EXPECT_EQ(variants_vpp1, 2);
    EXPECT_TRUE(seen.count({1, -1, 6}));
    EXPECT_TRUE(seen.count({1, 6, -1}));
    EXPECT_TRUE(seen.count({2, -1, 6}));  // vpp 2: 63 a chunk row, 4 a middle chunk, the last rank's 3 + 3
    for (const auto& [vpp, first, last] : seen) EXPECT_TRUE(vpp == 1 || vpp == 2) << vpp;
}

TEST(StageLayoutSearch, ExportsSayTheLayoutInTheFrameworksWordsAndComeBack) {
    // Megatron: the first / last flags, no layout string.
    const Job m = parse_job(job_text("megatron-core", 10), "test.yaml",
                            {"parallel.pp=4", "parallel.tp=2", "parallel.first_stage_layers=2", "parallel.last_stage_layers=2"});
    const ExportResult me = export_megatron(m);
    EXPECT_NE(me.text.find("--decoder-first-pipeline-num-layers 2"), std::string::npos) << me.text;
    EXPECT_NE(me.text.find("--decoder-last-pipeline-num-layers 2"), std::string::npos);
    EXPECT_EQ(me.text.find("--pipeline-model-parallel-layout"), std::string::npos);
    const Job mb = parse_job(import_megatron(me.text, "exported").job_yaml, "round trip", kCluster);
    EXPECT_EQ(mb.plan.first_stage_layers, 2);
    EXPECT_EQ(mb.plan.last_stage_layers, 2);
    // torchtitan (Llama 3 8B, 32 layers): less-layers 2 and 2 on pp 4 (middle ranks 9); pp 2 the shorter end.
    const std::string dense = job_text("fsdp", 32);
    const std::string llama8b = "model:\n  preset: llama3-8b\n" + dense.substr(dense.find("cluster:"));
    for (const auto& [sets, first, last, less] :
         {std::tuple<std::vector<std::string>, int, int, std::string>{
              {"parallel.pp=4", "parallel.first_stage_layers=7", "parallel.last_stage_layers=7"}, 7, 7,
              "pipeline_parallel_first_stage_less_layers = 2"},
          {{"parallel.pp=2", "parallel.last_stage_layers=15"}, -1, 15, "pipeline_parallel_last_stage_less_layers = 2"}}) {
        std::vector<std::string> all = sets;
        all.push_back("parallel.zero=3");
        const Job t = parse_job(llama8b, "test.yaml", all);
        const ExportResult te = export_torchtitan(t);
        EXPECT_NE(te.text.find(less), std::string::npos) << te.text;
        const Job tb = parse_job(import_torchtitan(te.text, "exported").job_yaml, "round trip", kCluster);
        EXPECT_EQ(tb.plan.pp, t.plan.pp);
        EXPECT_EQ(tb.plan.first_stage_layers, first);
        EXPECT_EQ(tb.plan.last_stage_layers, last);
    }
}

}  // namespace
}  // namespace lostflops
