// parallel.pipeline_schedule through the job reader, the plan checks and the
// estimate; the B / W split of backward on a hand-computed layer.
#include <gtest/gtest.h>

#include <string>

#include "cost/device_time.h"
#include "estimate/estimate_parts.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/report.h"
#include "test_util.h"

namespace lostflops {
namespace {

Job small(const std::vector<std::string>& overrides) {
    return parse_job(test::small_job_text(), "job.yaml", overrides);
}

TEST(ScheduleJob, DefaultIsTodaysBehaviour) {
    EXPECT_EQ(effective_schedule(small({}).plan), PipelineSchedule::one_f_one_b);
    EXPECT_EQ(effective_schedule(small({"parallel.vpp=2"}).plan), PipelineSchedule::interleaved);
    const Calibration cal = default_calibration();
    const Estimate a = estimate(small({}), cal);
    const Estimate b = estimate(small({"parallel.pipeline_schedule=1f1b"}), cal);
    EXPECT_EQ(a.step_time_s, b.step_time_s);
}

TEST(ScheduleJob, BadValuesNameTheKey) {
    const std::string typo = test::parse_error(test::small_job_text(), {"parallel.pipeline_schedule=dualpipe2"});
    EXPECT_NE(typo.find("parallel.pipeline_schedule"), std::string::npos) << typo;
    EXPECT_NE(typo.find("dualpipe"), std::string::npos) << typo;
    const std::string vpp = test::parse_error(test::small_job_text(), {"parallel.pipeline_schedule=1f1b", "parallel.vpp=2"});
    EXPECT_NE(vpp.find("parallel.pipeline_schedule"), std::string::npos) << vpp;
    EXPECT_NE(test::parse_error(test::small_job_text(), {"parallel.pipeline_schedule=dualpipev"}).find("vpp"),
              std::string::npos);
    // 8 micro-batches on pp 8 is fewer than 2 pp.
    const std::string few = test::parse_error(test::small_job_text(),
                                              {"parallel.pipeline_schedule=dualpipe", "parallel.pp=8", "parallel.tp=1",
                                               "training.global_batch_size=16"});
    EXPECT_NE(few.find("micro-batches"), std::string::npos) << few;
}

TEST(ScheduleJob, WeightGradientIsTheForwardGemmsOfAHandComputedLayer) {
    const Job job = small({});
    const PassSetup s = pass_setup(job, default_calibration());
    double gemm_fwd = 0;
    for (int i = 0; i < s.lw.gemm_count; ++i) {
        const GemmShape& g = s.lw.gemms[i];
        gemm_fwd += g.count * gemm_time_s(s.ctx.dev, g.m, g.n, g.k);
    }
    EXPECT_GT(gemm_fwd, 0);
    EXPECT_DOUBLE_EQ(s.layer.wgrad_s, gemm_fwd);
    // The rest of the backward GEMMs and the attention core stay in B.
    EXPECT_NEAR(s.layer.bwd.compute_s - s.layer.wgrad_s,
                gemm_fwd + flash_attention_bwd_s(s.ctx.dev, s.lw.attention_flops_fwd), 1e-15);
}

TEST(ScheduleJob, EachScheduleEstimatesAndClosedFormFollowsTheSimulation) {
    const Calibration cal = default_calibration();
    for (const std::vector<std::string>& set :
         {std::vector<std::string>{"parallel.pipeline_schedule=zero-bubble"},
          std::vector<std::string>{"parallel.pipeline_schedule=dualpipe"},
          std::vector<std::string>{"parallel.pipeline_schedule=dualpipev", "parallel.vpp=2"}}) {
        const Job job = small(set);
        const Estimate closed = estimate(job, cal, ScheduleModel::closed_form);
        const Estimate sim = estimate(job, cal, ScheduleModel::simulation);
        EXPECT_NEAR(closed.step_time_s / sim.step_time_s, 1.0, 0.03) << set[0];
    }
    const Estimate plain = estimate(small({}), cal);
    const Estimate zb = estimate(small({"parallel.pipeline_schedule=zero-bubble"}), cal);
    EXPECT_LT(zb.breakdown.pp_bubble_s, plain.breakdown.pp_bubble_s);
    EXPECT_DOUBLE_EQ(zb.memory.inflight_microbatches, 2.0);  // min(p, m) = 2 on every rank
}

TEST(ScheduleJob, DualPipeHoldsTwoStagesOfParameters) {
    const Calibration cal = default_calibration();
    const Estimate plain = estimate(small({}), cal);
    const Estimate dual = estimate(small({"parallel.pipeline_schedule=dualpipe"}), cal);
    // Each rank holds stage r and stage p-1-r: both ranks hold the whole model here (p = 2).
    EXPECT_GT(dual.memory.weights_bytes, 1.8 * plain.memory.weights_bytes);
}

// The "deciding assumption" of a DualPipe plan names its schedule and the
// table's in-flight rule, not 1F1B's: DeepSeek-V3 on 2,048 H800 (pp 16,
// DualPipe) peaks on a middle rank (7 or 8), which holds p + 1 = 17 chunk
// passes (DeepSeek-V3 report table 2: activations PP + 1).
TEST(ScheduleJob, DualPipeMemoryAssumptionNamesItsRule) {
    const Calibration cal = default_calibration();
    const Job job = load_job(test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml"));
    const Estimate e = estimate(job, cal);
    ASSERT_TRUE(e.memory.worst_stage == 7 || e.memory.worst_stage == 8) << e.memory.worst_stage;
    EXPECT_EQ(e.memory.warmup_passes, 17);
    const std::string why = memory_assumption(job, e.memory);
    EXPECT_NE(why.find("dualpipe: rank"), std::string::npos) << why;
    EXPECT_NE(why.find("17 chunk passes alive"), std::string::npos) << why;
    EXPECT_EQ(why.find("1F1B"), std::string::npos) << why;
}

}  // namespace
}  // namespace lostflops
