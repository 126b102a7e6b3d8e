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

}  // namespace
}  // namespace lostflops
