// `lostflops goodput` (src/cli/cmd_goodput.cpp): the JSON contract of issue
// 10, the simulation's percentiles, and bad `run:` values exiting 2 with the
// key named; `estimate` gaining the run summary with train_tokens.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace lostflops {
namespace {

using test::run_cli;

const std::string kJob = std::string(LOSTFLOPS_SOURCE_DIR) + "/examples/llama3.1-405b-16384xh100-goodput.yaml";

TEST(GoodputCli, JsonContract) {
    const auto r = run_cli("goodput " + kJob + " --format json");
    ASSERT_EQ(r.code, 0) << r.all();
    const auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"expected_failures", "wall_time_s", "goodput", "checkpoint_interval_s", "gpu_hours",
                            "energy_kwh"})
        EXPECT_TRUE(j[key].is_number()) << key;
    EXPECT_TRUE(j.contains("cost"));
    EXPECT_TRUE(j["cost"].is_null());  // no price given
    EXPECT_GT(j["goodput"].get<double>(), 0);
    EXPECT_LT(j["goodput"].get<double>(), 1);
    EXPECT_FALSE(j.contains("simulation"));
    EXPECT_EQ(j["job"]["run"]["checkpoint_interval"], "auto");
}

TEST(GoodputCli, SimulationPercentilesAndSeed) {
    const std::string args = "goodput " + kJob + " --simulate 50 --seed 9 --set run.price_per_gpu_hour=2 --format json";
    const auto a = run_cli(args);
    const auto b = run_cli(args);
    ASSERT_EQ(a.code, 0) << a.all();
    EXPECT_EQ(a.out, b.out);
    const auto j = nlohmann::json::parse(a.out);
    const auto& s = j["simulation"];
    for (const char* key : {"p10_wall_time_s", "p50_wall_time_s", "p90_wall_time_s", "p10_goodput", "p50_goodput",
                            "p90_goodput"})
        EXPECT_TRUE(s[key].is_number()) << key;
    EXPECT_EQ(s["samples"], 50);
    EXPECT_NEAR(j["cost"].get<double>(), 2 * j["gpu_hours"].get<double>(), 1e-6 * j["cost"].get<double>());
}

TEST(GoodputCli, BadRunValuesExitTwoNamingTheKey) {
    for (const char* set : {"run.gpu_failure_rate=-1", "run.checkpoint_write_GBps=0", "run.no_such_key=1"}) {
        const auto r = run_cli("goodput " + kJob + " --set " + set);
        EXPECT_EQ(r.code, 2) << set;
        const std::string key = std::string(set).substr(0, std::string(set).find('='));
        EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
    }
    const auto none = run_cli("goodput " + kJob + " --set training.train_tokens=0");
    EXPECT_EQ(none.code, 2);
    EXPECT_NE(none.err.find("training.train_tokens: 0 is out of range; expected 1 to"), std::string::npos) << none.err;
    // null is no run: goodput says the key is missing.
    const auto null = run_cli("goodput " + kJob + " --set training.train_tokens=null");
    EXPECT_EQ(null.code, 2);
    EXPECT_NE(null.err.find("training.train_tokens: missing"), std::string::npos) << null.err;
}

TEST(GoodputCli, SimulationBoundedByRunsTimesFailures) {
    // Issue 36 item 4: over 60 s before; now exit 2 naming --simulate and the bound.
    const auto r = run_cli("goodput --set training.train_tokens=1e12 --set run.gpu_failure_rate=0.03 --simulate 10000 "
                           "--seed 1");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--simulate: 10000 runs of about"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("5e+08"), std::string::npos) << r.err;
}

TEST(GoodputCli, EstimateGainsTheRunWithTrainTokens) {
    const auto with = run_cli("estimate " + kJob + " --format json");
    ASSERT_EQ(with.code, 0) << with.all();
    const auto j = nlohmann::json::parse(with.out);
    ASSERT_TRUE(j.contains("run"));
    EXPECT_TRUE(j["run"]["goodput"].is_number());
    const auto without = run_cli("estimate " + kJob + " --set training.train_tokens=null --format json");
    EXPECT_FALSE(nlohmann::json::parse(without.out).contains("run"));
    const auto table = run_cli("estimate " + kJob);
    EXPECT_NE(table.out.find("effective compute utilisation"), std::string::npos);
}

TEST(GoodputCli, SearchByTimeToTrainUsesTheRun) {
    const std::string job = std::string(LOSTFLOPS_SOURCE_DIR) + "/examples/llama3.1-405b-16384xh100-search.yaml";
    const std::string args = "search " + job + " --fix tp=8,pp=16 --set training.train_tokens=15.6e12 --format json --top 3";
    const auto by_time = run_cli(args + " --by time-to-train");
    ASSERT_EQ(by_time.code, 0) << by_time.err;
    const auto j = nlohmann::json::parse(by_time.out);
    ASSERT_TRUE(j.contains("run")) << by_time.out.substr(0, 400);
    EXPECT_GT(j["run_rescored_plans"].get<int>(), 1);
    EXPECT_GT(j["run"]["expected_failures"].get<double>(), 0);
    EXPECT_GE(j["run"]["wall_time_s"].get<double>(), j["run"]["split"]["useful_s"].get<double>());
    const auto by_throughput = run_cli(args);
    EXPECT_FALSE(nlohmann::json::parse(by_throughput.out).contains("run"));
}

}  // namespace
}  // namespace lostflops
