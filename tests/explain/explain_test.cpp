// The MFU waterfall and the levers on every published run
// (data/published/, the project's copy of shared/reference/): the steps sum
// to estimate()'s MFU, each lever's mfu_after is estimate() of the job loaded
// with the lever's --set arguments.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/explain.h"
#include "lostflops/job.h"
#include "lostflops/validate.h"
#include "test_util.h"

namespace lostflops {
namespace {

const std::string kTable = test::source_path("data/published/published-runs.csv");

std::string run_path(const MeasuredRun& r) { return test::source_path("data/published/runs/" + r.name + ".json"); }

double sum_pp(const std::vector<WaterfallStep>& w) {
    return std::accumulate(w.begin(), w.end(), 0.0, [](double a, const WaterfallStep& s) { return a + s.pp; });
}

TEST(ExplainWaterfall, SumsToEstimateMfuOnEveryPublishedRun) {
    const Calibration cal = default_calibration();
    const auto runs = load_run_table(kTable);
    ASSERT_GE(runs.size(), 20u);
    for (const auto& run : runs) {
        SCOPED_TRACE(run.name);
        const Estimate e = estimate(run.job, cal);
        const auto w = mfu_waterfall(run.job, cal, e);
        ASSERT_FALSE(w.empty());
        EXPECT_NEAR(100.0 - sum_pp(w), 100.0 * e.mfu, 0.1);
        EXPECT_NEAR(100.0 - sum_pp(w), 100.0 * e.mfu, 1e-6);  // exact but for rounding
        // Seconds: ideal + every step = the step time.
        const double peak = run.job.cluster.gpu.peak_tflops(run.job.training.precision) * 1e12;
        const double ideal = e.model_flops_per_step / (run.job.cluster.num_gpus * peak);
        double s = ideal;
        for (const auto& step : w) {
            EXPECT_TRUE(std::isfinite(step.s)) << step.key;
            EXPECT_NEAR(step.pp, 100 * step.s / e.step_time_s, 1e-9) << step.key;
            s += step.s;
        }
        EXPECT_NEAR(s, e.step_time_s, 1e-9 * e.step_time_s);
        // GEMMs never beat peak: their step is a loss. Every other step but
        // attention (causal masking) is a loss by construction.
        for (const auto& step : w)
            if (step.key != "attention") { EXPECT_GT(step.s, 0) << step.key; }
    }
}

TEST(ExplainWaterfall, NamesEveryNonZeroCauseOfTheBreakdown) {
    const Calibration cal = default_calibration();
    const Job job = default_job();
    const Estimate e = estimate(job, cal);
    const auto w = mfu_waterfall(job, cal, e);
    const auto has = [&](const std::string& key) {
        return std::any_of(w.begin(), w.end(), [&](const WaterfallStep& s) { return s.key == key; });
    };
    EXPECT_TRUE(has("gemm"));
    EXPECT_TRUE(has("attention"));
    EXPECT_EQ(has("memory_bound"), e.breakdown.memory_bound_s > 0);
    EXPECT_EQ(has("recompute"), e.breakdown.recompute_s > 0);
    EXPECT_EQ(has("tp_comm"), e.breakdown.tp_comm_s > 0);
    EXPECT_EQ(has("pp_bubble"), e.breakdown.pp_bubble_s > 0);
    EXPECT_EQ(has("pp_p2p"), e.breakdown.pp_p2p_s > 0);
    EXPECT_EQ(has("dp_comm"), e.breakdown.dp_comm_s > 0);
    EXPECT_EQ(has("optimizer"), e.breakdown.optimizer_s > 0);
    // Without a pipeline there is no bubble step.
    const Job flat = default_job({"parallel.pp=1", "parallel.vpp=1", "parallel.dp=128"});
    const auto wf = mfu_waterfall(flat, cal, estimate(flat, cal));
    EXPECT_TRUE(std::none_of(wf.begin(), wf.end(), [](const WaterfallStep& s) { return s.key == "pp_bubble"; }));
}

TEST(ExplainLevers, EveryLeverIsEstimateOnTheChangedJob) {
    const Calibration cal = default_calibration();
    const auto runs = load_run_table(kTable);
    int levers_seen = 0;
    for (const auto& run : runs) {
        SCOPED_TRACE(run.name);
        const JobSource src{run_path(run), {}};
        const Estimate e = estimate(run.job, cal);
        const auto levers = mfu_levers(src, run.job, cal, e);
        EXPECT_LE(levers.size(), 3u);
        for (size_t i = 0; i < levers.size(); ++i) {
            const Lever& l = levers[i];
            SCOPED_TRACE(l.change);
            ASSERT_FALSE(l.set.empty());
            const Estimate after = estimate(load_job(src.path, l.set), cal);
            EXPECT_DOUBLE_EQ(after.mfu, l.mfu_after);
            EXPECT_DOUBLE_EQ(after.step_time_s, l.step_time_s);
            EXPECT_TRUE(after.memory.fits);
            EXPECT_GT(l.mfu_after, e.mfu);
            if (i > 0) { EXPECT_GE(levers[i - 1].mfu_after, l.mfu_after); }
            ++levers_seen;
        }
    }
    EXPECT_GT(levers_seen, 10);  // the candidates do find levers on most runs
}

TEST(ExplainLevers, FollowTheJobsOwnOverrides) {
    const Calibration cal = default_calibration();
    // The default job with recompute off: a lever's figures include the --set the user gave.
    const JobSource src{"", {"parallel.recompute=full"}};
    const Job job = load_job_source(src);
    ASSERT_EQ(job.plan.recompute, Recompute::full);
    const Estimate e = estimate(job, cal);
    for (const auto& l : mfu_levers(src, job, cal, e, 100)) {
        std::vector<std::string> all = src.overrides;
        all.insert(all.end(), l.set.begin(), l.set.end());
        EXPECT_DOUBLE_EQ(estimate(default_job(all), cal).mfu, l.mfu_after) << l.change;
    }
}

// The expert-parallel levers (src/explain/levers.cpp moe_candidates) on
// DeepSeek-V3 on 1,024 H100 (the project's exact rewrite) run without the
// all-to-all overlap: turning the overlap on hides dispatch and combine under
// the other micro-batch's compute, so it must be a lever, with estimate()'s
// figures for the job with its --set; under full recompute it is none
// (Megatron-Core asserts the two apart: framework_rules.h
// a2a_overlap_recompute); a dense job gets no expert lever.
TEST(ExplainLevers, MoeJobsGetExpertParallelLevers) {
    const Calibration cal = default_calibration();
    const std::string path = test::source_path("data/published/modern/runs/mbridge2509-h100-deepseek-v3-1024.json");
    const JobSource src{path, {"parallel.moe_a2a_overlap=false"}};
    const Job job = load_job_source(src);
    const Estimate e = estimate(job, cal);
    ASSERT_TRUE(e.memory.fits);
    const auto levers = mfu_levers(src, job, cal, e, 100);
    const auto overlap = std::find_if(levers.begin(), levers.end(),
                                      [](const Lever& l) { return l.change == "moe_a2a_overlap on"; });
    ASSERT_NE(overlap, levers.end());
    std::vector<std::string> set = src.overrides;
    set.insert(set.end(), overlap->set.begin(), overlap->set.end());
    const Estimate after = estimate(load_job(path, set), cal);
    EXPECT_DOUBLE_EQ(after.step_time_s, overlap->step_time_s);
    EXPECT_LT(after.breakdown.ep_comm_s, e.breakdown.ep_comm_s);
    const JobSource full{path, {"parallel.recompute=full", "parallel.moe_a2a_overlap=false"}};
    const Job full_job = load_job_source(full);
    for (const auto& l : mfu_levers(full, full_job, cal, estimate(full_job, cal), 100))
        EXPECT_NE(l.change, "moe_a2a_overlap on");
    // Leaving DeepEP drops its own keys: the goodput example (moe_max_nodes,
    // moe_fp8_dispatch) loads with another dispatcher through the lever's list.
    const Job other = load_job(test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml"),
                               {"parallel.moe_dispatcher=alltoall", "parallel.moe_max_nodes=null",
                                "parallel.moe_fp8_dispatch=null"});
    EXPECT_EQ(other.plan.moe_dispatcher, MoeDispatcher::alltoall);
    const Job dense = default_job();
    ASSERT_FALSE(dense.model.is_moe());
    for (const auto& l : mfu_levers(JobSource{}, dense, cal, estimate(dense, cal), 100)) {
        EXPECT_NE(l.change.rfind("ep ", 0), 0u) << l.change;
        EXPECT_NE(l.change.rfind("moe_", 0), 0u) << l.change;
    }
}

TEST(ExplainJson, ContractHoldsForTheDefaultJob) {
    const Calibration cal = default_calibration();
    const Explanation x = explain(JobSource{}, cal);
    const auto j = explain_json(x);
    const Estimate e = estimate(default_job(), cal);
    EXPECT_DOUBLE_EQ(j.at("mfu").get<double>(), e.mfu);
    double pp = 0;
    for (const auto& s : j.at("waterfall")) {
        EXPECT_TRUE(s.at("name").is_string());
        EXPECT_TRUE(s.at("s").is_number());
        pp += s.at("pp").get<double>();
    }
    EXPECT_NEAR(100 - pp, 100 * e.mfu, 1e-6);
    ASSERT_TRUE(j.at("levers").is_array());
    for (const auto& l : j.at("levers")) {
        EXPECT_TRUE(l.at("change").is_string());
        EXPECT_GT(l.at("mfu_after").get<double>(), e.mfu);
        EXPECT_TRUE(l.at("set").is_array());
    }
    EXPECT_NE(explain_markdown(x).find("| **predicted MFU** |"), std::string::npos);
    EXPECT_NE(explain_table(x).find("predicted MFU"), std::string::npos);
}

}  // namespace
}  // namespace lostflops
