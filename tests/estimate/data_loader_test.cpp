// The data loader's stall (estimate/data_loader.cpp) by hand: not priced by
// default; without workers the whole load waits; with workers only what
// exceeds the step; per data-parallel replica; the job's keys and their
// errors; explain's lever.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/estimate.h"
#include "lostflops/explain.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "test_util.h"

namespace lostflops {
namespace {

Job job_with(std::vector<std::string> overrides) {
    return parse_job(test::small_job_text(), "job.yaml", overrides);
}

Estimate run(const std::vector<std::string>& overrides) {
    return estimate(job_with(overrides), default_calibration());
}

// One GPU, framework hf, global batch 4 of micro-batch 1.
const std::vector<std::string> kOneGpu = {"cluster.num_gpus=1",     "cluster.gpus_per_node=1",
                                          "parallel.tp=1",          "parallel.pp=1",
                                          "training.framework=hf",  "training.global_batch_size=4",
                                          "training.micro_batch_size=1"};

std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

TEST(DataLoader, NotPricedByDefaultAndWorkersFollowTheFramework) {
    const Estimate e = run(kOneGpu);
    EXPECT_EQ(e.breakdown.data_loader_s, 0);
    EXPECT_EQ(job_with(kOneGpu).training.data_loader_workers, 0);  // torch DataLoader's num_workers=0
    EXPECT_EQ(job_with({}).training.data_loader_workers, 2);       // Megatron --num-workers default 2
    EXPECT_EQ(job_with({"training.data_loader_workers=auto", "training.framework=megatron-lm"})
                  .training.data_loader_workers,
              2);
    // A priced loader's keys in the job's JSON, resolved.
    const Job j = job_with(plus(kOneGpu, {"training.data_loader_s_per_sequence=0.01"}));
    const nlohmann::json json = estimate_json(j, estimate(j, default_calibration()));
    EXPECT_EQ(json["job"]["training"]["data_loader_workers"], 0);
    EXPECT_EQ(json["job"]["training"]["data_loader_s_per_sequence"], 0.01);
    EXPECT_EQ(json["breakdown"]["data_loader_s"], 4 * 0.01);
}

// No worker: the four sequences load after the step's synchronisation,
// 4 x 0.05 s, and the GPU waits for all of it; every other wall stays.
TEST(DataLoader, WithoutWorkersTheWholeLoadWaits) {
    const Estimate base = run(kOneGpu);
    const Estimate e = run(plus(kOneGpu, {"training.data_loader_s_per_sequence=0.05"}));
    EXPECT_DOUBLE_EQ(e.breakdown.data_loader_s, 4 * 0.05);
    EXPECT_DOUBLE_EQ(e.step_time_s, base.step_time_s + 0.2);
    EXPECT_DOUBLE_EQ(e.breakdown.compute_s, base.breakdown.compute_s);
    EXPECT_DOUBLE_EQ(e.breakdown.host_s, base.breakdown.host_s);
}

// Workers load in parallel with the step: a loader faster than the step
// costs nothing; a slower one sets the step, n x s / W.
TEST(DataLoader, WorkersWaitOnlyForWhatExceedsTheStep) {
    // Megatron (a micro-batch fetched as its forward starts): the pure rule.
    const std::vector<std::string> mc = plus(kOneGpu, {"training.framework=megatron-core"});
    const Estimate base = run(mc);
    const double fast = base.step_time_s / 4 * 0.9;  // 4 sequences on one worker: 0.9 of the step
    const Estimate hidden = run(plus(mc, {"training.data_loader_workers=1",
                                               fmt::format("training.data_loader_s_per_sequence={:.17g}", fast)}));
    EXPECT_EQ(hidden.breakdown.data_loader_s, 0);
    EXPECT_DOUBLE_EQ(hidden.step_time_s, base.step_time_s);
    const double slow = base.step_time_s;  // 4 sequences on 2 workers: twice the step
    const Estimate e = run(plus(mc, {"training.data_loader_workers=2",
                                          fmt::format("training.data_loader_s_per_sequence={:.17g}", slow)}));
    EXPECT_NEAR(e.step_time_s, 4 * slow / 2, 1e-12);
    EXPECT_NEAR(e.breakdown.data_loader_s, 2 * slow - base.step_time_s, 1e-12);
}

// The Trainer (framework hf) takes a step's 8 micro-batches up front: 2 x 1
// worker's are ready, the other 6 wait 0.01 s each on the one worker, though
// the worker keeps up with the step.
TEST(DataLoader, TheTrainerWaitsForWhatThePrefetchDoesNotHold) {
    const std::vector<std::string> eight = plus(kOneGpu, {"training.global_batch_size=8", "training.data_loader_workers=1",
                                                          "training.data_loader_s_per_sequence=0.01"});
    const Estimate e = run(eight);
    ASSERT_GT(e.step_time_s, 8 * 0.01);  // the worker keeps up: load / W < step
    EXPECT_NEAR(e.breakdown.data_loader_s, 6 * 0.01, 1e-12);
    // Megatron fetches each micro-batch when its forward starts: no such wait.
    EXPECT_EQ(run(plus(eight, {"training.framework=megatron-core"})).breakdown.data_loader_s, 0);
}

// Each data-parallel replica loads global / dp sequences: 64 / 4 = 16 on
// 16 GPUs of tp 2 x pp 2 (dp 4), at 0.01 s each without workers.
TEST(DataLoader, EachReplicaLoadsItsShare) {
    const Estimate e = run({"training.framework=megatron-core", "training.data_loader_workers=0",
                            "training.data_loader_s_per_sequence=0.01"});
    EXPECT_DOUBLE_EQ(e.breakdown.data_loader_s, 16 * 0.01);
}

// Workers given without a loader time price nothing and say nothing: an
// imported Megatron script gives --num-workers, never the loader's time.
TEST(DataLoader, WorkersWithoutALoaderTimeAreQuiet) {
    const Job j = job_with({"training.data_loader_workers=4"});
    for (const JobWarning& w : job_warnings(j)) EXPECT_NE(w.key, "training.data_loader_workers");
    EXPECT_EQ(estimate(j, default_calibration()).breakdown.data_loader_s, 0);
}

TEST(DataLoader, BadValuesAreErrorsThatNameTheKey) {
    EXPECT_NE(test::error_of([] { job_with({"training.data_loader_workers=-1"}); }).find("data_loader_workers"),
              std::string::npos);
    EXPECT_NE(test::error_of([] { job_with({"training.data_loader_workers=two"}); }).find("data_loader_workers"),
              std::string::npos);
    EXPECT_NE(test::error_of([] { job_with({"training.data_loader_s_per_sequence=-0.1"}); })
                  .find("data_loader_s_per_sequence"),
              std::string::npos);
    EXPECT_NE(test::error_of([] { job_with({"training.data_loader_worker=2"}); }).find("did you mean"),
              std::string::npos);
}

// The default job (Megatron, dp 32: 32 sequences a replica) with a loader
// of 1 s a sequence on its 2 workers waits 16 s - step; explain names the
// wall and its lever, 4 workers, re-estimated with a shorter wait (8 s of
// sequences a step, a step of about 7.7 s without it).
TEST(DataLoader, ExplainNamesTheWallAndItsLever) {
    const JobSource src{"", {"training.data_loader_s_per_sequence=1"}};
    const Explanation x = explain(src, default_calibration());
    bool wall = false;
    for (const WaterfallStep& w : x.waterfall) wall |= w.key == "data_loader" && w.s > 0;
    EXPECT_TRUE(wall);
    bool lever = false;
    for (const Lever& l : x.levers)
        if (l.change == "data_loader_workers 4") {
            lever = true;
            EXPECT_LT(l.step_time_s, x.step_time_s);
        }
    EXPECT_TRUE(lever);
}

}  // namespace
}  // namespace lostflops
