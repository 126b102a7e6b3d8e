// estimate_json (src/report/estimate_report.cpp, job_json.cpp): the advice and
// warnings handed to it appear as the README's schema says, and the resolved
// ZeRO-3 engine settings with zero: 3.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/report.h"
#include "test_util.h"

namespace lostflops {
namespace {

TEST(EstimateJson, AdviceAndWarningsAsGiven) {
    const Job job = load_job(test::source_path("examples/gpt3-175b-8xa100.yaml"));
    const Estimate e = estimate(job, default_calibration());
    ReportExtras extras;
    extras.warnings = {{"parallel.zero", "shards nothing"}};
    extras.advice = fit_advice(job, default_calibration());
    const auto j = estimate_json(job, e, extras);
    ASSERT_EQ(j["warnings"].size(), 1u);
    EXPECT_EQ(j["warnings"][0]["key"], "parallel.zero");
    ASSERT_EQ(j["advice"].size(), extras.advice->changes.size());
    for (std::size_t i = 0; i < j["advice"].size(); ++i) {
        const PlanChange& c = extras.advice->changes[i];
        EXPECT_EQ(j["advice"][i]["change"], c.change);
        EXPECT_EQ(j["advice"][i]["set"], c.set);
        EXPECT_DOUBLE_EQ(j["advice"][i]["peak_bytes"].get<double>(), c.peak_bytes);
        EXPECT_EQ(j["advice"][i]["fits"].get<bool>(), c.fit == Fit::fits);
    }
    EXPECT_EQ(j["min_gpus_to_fit"]["num_gpus"], extras.advice->min_gpus.num_gpus);
    // Without advice (a plan that fits), neither key.
    const auto plain = estimate_json(default_job(), estimate(default_job(), default_calibration()));
    EXPECT_FALSE(plain.contains("advice"));
    EXPECT_FALSE(plain.contains("min_gpus_to_fit"));
    EXPECT_TRUE(plain["warnings"].is_array());
}

TEST(EstimateJson, ResolvedZero3EngineAndRecomputeLayers) {
    const Job job = default_job({"parallel.pp=1", "parallel.vpp=1", "parallel.zero=3", "parallel.recompute=full",
                                 "parallel.recompute_layers=2", "training.framework=deepspeed"});
    const auto p = estimate_json(job, estimate(job, default_calibration()))["job"]["parallel"];
    EXPECT_EQ(p["recompute_layers"], 2);
    // DeepSpeed's defaults, resolved (README "ZeRO-3 engine").
    EXPECT_DOUBLE_EQ(p["zero_bucket_params"].get<double>(), 5e7);
    EXPECT_DOUBLE_EQ(p["zero_max_live_params"].get<double>(), 1e9);
    EXPECT_EQ(estimate_json(default_job(), estimate(default_job(), default_calibration()))["job"]["parallel"]
                  ["recompute_layers"],
              nullptr);
}

}  // namespace
}  // namespace lostflops
