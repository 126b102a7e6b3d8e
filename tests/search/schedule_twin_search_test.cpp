// The schedule as a searched lever (issue 37): where the job names no
// schedule and its framework launches DualPipeV (torchtitan), every layout of
// vpp 2 is searched under the 1F1B family and under DualPipeV, each its own
// layout; the DualPipeV plan's figures are estimate's of the same plan with
// parallel.pipeline_schedule: dualpipev (the line search prints), and its
// plans are counted as every other layout's.
#include <string>

#include <gtest/gtest.h>

#include "lostflops/pipeline_schedules.h"
#include "lostflops/search.h"
#include "lostflops/search_report.h"
#include "every_plan.h"

namespace lostflops {
namespace {

// 8 layers on 16 GPUs, 32 micro-batches a step at most: pp 2 and 4 with vpp 2.
std::string job_text(const std::string& framework, const std::string& parallel = "") {
    return "model:\n  num_hidden_layers: 8\n  hidden_size: 1024\n  num_attention_heads: 8\n"
           "  num_key_value_heads: 8\n  intermediate_size: 4096\n  vocab_size: 32000\n"
           "cluster:\n  gpu: h100-sxm\n  num_gpus: 16\n  gpus_per_node: 8\n"
           "  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n  inter_node: {bandwidth_GBps: 50, latency_us: 5}\n"
           "training:\n  seq_length: 2048\n  global_batch_size: 32\n  framework: " + framework + "\n" + parallel;
}

struct Found {
    int dualpipev = 0, interleaved = 0;
    SearchResult result;
    SearchJob sj;
};

Found search_all(const std::string& text) {
    Found f;
    f.sj = parse_search_job(text, "test.yaml", {}, SearchJobPlan::fixed_where_given);
    f.result = test::search_every_plan(f.sj);
    for (const RankedPlan& rp : f.result.ranked) {
        const PipelineSchedule s = effective_schedule(plan_score(f.sj.job, f.result, rp).plan);
        f.dualpipev += s == PipelineSchedule::dualpipev ? 1 : 0;
        f.interleaved += s == PipelineSchedule::interleaved ? 1 : 0;
    }
    return f;
}

TEST(ScheduleTwin, TorchtitanSearchesDualPipeVBesideThe1F1BFamily) {
    const Found f = search_all(job_text("fsdp"));
    EXPECT_GT(f.dualpipev, 0);
    EXPECT_GT(f.interleaved, 0);
    // A DualPipeV plan as estimate prices it from the plan's --set arguments.
    for (const RankedPlan& rp : f.result.ranked) {
        const PlanScore s = plan_score(f.sj.job, f.result, rp);
        if (effective_schedule(s.plan) != PipelineSchedule::dualpipev) continue;
        bool named = false;
        for (const std::string& set : plan_set_arguments(f.sj.job, s))
            named = named || set == "parallel.pipeline_schedule=dualpipev";
        EXPECT_TRUE(named);
        EXPECT_EQ(s.plan.vpp, 2);
        const Estimate e = estimate(job_with_plan(f.sj.job, s), default_calibration());
        EXPECT_NEAR(e.step_time_s, s.step_time_s, 1e-9 * s.step_time_s);
        break;
    }
}

TEST(ScheduleTwin, NoneWhereTheStackHasNoneOrTheJobNamesOne) {
    EXPECT_EQ(search_all(job_text("megatron-core")).dualpipev, 0);  // Megatron-Core: the 1F1B family only
    const Found named = search_all(job_text("fsdp", "parallel:\n  pipeline_schedule: 1f1b\n"));
    EXPECT_EQ(named.dualpipev, 0);
    EXPECT_EQ(named.interleaved, 0);
}

}  // namespace
}  // namespace lostflops
