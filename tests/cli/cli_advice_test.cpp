// `estimate` on a plan that does not fit prints changes that act (each
// re-estimated) and the fewest GPUs that fit, in the table and in JSON; the
// --set arguments it prints reproduce the memory it states.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops {
namespace {

using test::CliRun;
using test::run_cli;

TEST(CliAdvice, DoesNotFitPrintsActionableChanges) {
    const std::string job = test::source_path("examples/gpt3-175b-8xa100.yaml");
    const CliRun json = run_cli("estimate --format json " + job);
    ASSERT_EQ(json.code, 1) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    ASSERT_FALSE(j["memory"]["fits"].get<bool>());
    ASSERT_TRUE(j["advice"].is_array());
    ASSERT_FALSE(j["advice"].empty());
    const double peak = j["memory"]["peak_bytes"].get<double>();
    for (const auto& c : j["advice"]) {
        std::string sets;
        for (const auto& s : c["set"]) sets += " --set " + s.get<std::string>();
        // dp = 1 here: ZeRO shards nothing, so it is not offered.
        EXPECT_EQ(sets.find("parallel.zero"), std::string::npos) << c;
        EXPECT_LT(c["peak_bytes"].get<double>(), peak) << c;
        const CliRun after = run_cli("estimate --format json " + job + sets);
        const auto a = nlohmann::json::parse(after.out);
        EXPECT_NEAR(a["memory"]["peak_bytes"].get<double>(), c["peak_bytes"].get<double>(), 1.0) << c;
        EXPECT_EQ(a["memory"]["fits"], c["fits"]) << c;
        EXPECT_EQ(after.code, c["fits"].get<bool>() ? 0 : 1);
    }
    const auto& m = j["min_gpus_to_fit"];
    ASSERT_TRUE(m["num_gpus"].is_number_integer()) << m;
    std::string sets;
    for (const auto& s : m["set"]) sets += " --set " + s.get<std::string>();
    EXPECT_EQ(run_cli("estimate " + job + sets).code, 0) << sets;

    const CliRun text = run_cli("estimate " + job);
    EXPECT_EQ(text.code, 1);
    const std::size_t changes = text.out.find("changes, each alone and re-estimated");
    const std::size_t fewest = text.out.find("fewest of these GPUs that fit the model: " +
                                             std::to_string(m["num_gpus"].get<int>()) + ",");
    ASSERT_NE(changes, std::string::npos) << text.out;
    ASSERT_NE(fewest, std::string::npos) << text.out;
    // No ZeRO advice with dp = 1.
    EXPECT_EQ(text.out.substr(changes, fewest - changes).find("parallel.zero"), std::string::npos) << text.out;
}

TEST(CliAdvice, SearchesOnlyWhenCheapOrAsked) {
    // GPT-3 on 8 GPUs: no plan fits at all, and proving it takes more plans
    // than the cheap bound: without --advice the nearest plan is not searched.
    const std::string job = test::source_path("examples/gpt3-175b-8xa100.yaml");
    const auto quick = nlohmann::json::parse(run_cli("estimate --format json " + job).out);
    EXPECT_FALSE(quick.contains("nearest_fitting_plan")) << quick.dump();
    EXPECT_TRUE(quick["min_gpus_to_fit"]["num_gpus"].is_number_integer());
    EXPECT_NE(run_cli("estimate " + job).out.find("smallest change that fits: not searched"), std::string::npos);
    const CliRun full = run_cli("estimate --advice --format json " + job);
    ASSERT_EQ(full.code, 1) << full.err;
    const auto asked = nlohmann::json::parse(full.out);
    ASSERT_TRUE(asked.contains("nearest_fitting_plan"));
    EXPECT_TRUE(asked["nearest_fitting_plan"].is_null());  // searched: none fits on these GPUs
    EXPECT_EQ(asked["advice"], quick["advice"]);
    EXPECT_EQ(asked["min_gpus_to_fit"], quick["min_gpus_to_fit"]);
    // The default job made not to fit: one change fits, found cheaply, the
    // same plan with and without --advice.
    const std::string set = " --set parallel.recompute=none --set parallel.zero=0 --set training.micro_batch_size=4";
    const auto cheap = nlohmann::json::parse(run_cli("estimate --format json" + set).out);
    const auto searched = nlohmann::json::parse(run_cli("estimate --advice --format json" + set).out);
    ASSERT_TRUE(cheap["nearest_fitting_plan"].is_object()) << cheap.dump();
    EXPECT_EQ(cheap["nearest_fitting_plan"], searched["nearest_fitting_plan"]);
}

}  // namespace
}  // namespace lostflops
