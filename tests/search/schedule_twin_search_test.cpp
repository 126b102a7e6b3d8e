// The schedule as a searched lever (issue 37): where the job names no
// schedule and its framework launches DualPipeV and ZB-V (torchtitan), every
// layout of vpp 2 is searched under the 1F1B family, under DualPipeV and
// under ZB-V, each its own layout; a twin plan's figures are estimate's of the
// same plan with its parallel.pipeline_schedule (the line search prints), and
// its plans are counted as every other layout's.
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
    int dualpipev = 0, zbv = 0, interleaved = 0;
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
        f.zbv += s == PipelineSchedule::zbv ? 1 : 0;
        f.interleaved += s == PipelineSchedule::interleaved ? 1 : 0;
    }
    return f;
}

TEST(ScheduleTwin, TorchtitanSearchesDualPipeVAndZbvBesideThe1F1BFamily) {
    const Found f = search_all(job_text("fsdp"));
    EXPECT_GT(f.dualpipev, 0);
    EXPECT_GT(f.zbv, 0);
    EXPECT_GT(f.interleaved, 0);
    // A twin's plan as estimate prices it from the plan's --set arguments.
    for (const PipelineSchedule twin : {PipelineSchedule::dualpipev, PipelineSchedule::zbv}) {
        const std::string line = std::string("parallel.pipeline_schedule=") + schedule_info(twin).name;
        int checked = 0;
        for (const RankedPlan& rp : f.result.ranked) {
            const PlanScore s = plan_score(f.sj.job, f.result, rp);
            if (effective_schedule(s.plan) != twin) continue;
            bool named = false;
            for (const std::string& set : plan_set_arguments(f.sj.job, s)) named = named || set == line;
            EXPECT_TRUE(named) << line;
            EXPECT_EQ(s.plan.vpp, 2);
            const Estimate e = estimate(job_with_plan(f.sj.job, s), default_calibration());
            EXPECT_NEAR(e.step_time_s, s.step_time_s, 1e-9 * s.step_time_s) << line;
            EXPECT_NEAR(e.memory.peak_bytes, s.peak_bytes, 1e-9 * s.peak_bytes) << line;
            if (++checked == 3) break;
        }
        EXPECT_EQ(checked, 3) << line;
    }
}

TEST(ScheduleTwin, NoneWhereTheStackHasNoneOrTheJobNamesOne) {
    const Found mcore = search_all(job_text("megatron-core"));  // Megatron-Core: the 1F1B family only
    EXPECT_EQ(mcore.dualpipev, 0);
    EXPECT_EQ(mcore.zbv, 0);
    const Found named = search_all(job_text("fsdp", "parallel:\n  pipeline_schedule: 1f1b\n"));
    EXPECT_EQ(named.dualpipev, 0);
    EXPECT_EQ(named.zbv, 0);
    EXPECT_EQ(named.interleaved, 0);
}

}  // namespace
}  // namespace lostflops
