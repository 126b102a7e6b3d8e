// A config.json key that changes the cost but is not modelled is a warning
// "lostflops: warning: not modelled: KEY" on standard error; --strict makes it
// an error (exit 2) naming the key.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

TEST(CliModelKeys, NotModelledKeysAreWarnedAndStrictRefusesThem) {
    const std::string job = source_path("tests/data/job/hf_softcap_job.yaml");
    const CliRun r = run_cli("estimate " + job);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("lostflops: warning: not modelled: attn_logit_softcapping"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("lostflops: warning: not modelled: a_key_from_the_future"), std::string::npos) << r.err;
    const CliRun strict = run_cli("--strict estimate " + job);
    EXPECT_EQ(strict.code, 2) << strict.err;
    EXPECT_NE(strict.err.find("not modelled"), std::string::npos) << strict.err;
    EXPECT_NE(strict.err.find("(--strict)"), std::string::npos) << strict.err;
    // The same under search.
    const CliRun search = run_cli("--strict search " + job);
    EXPECT_EQ(search.code, 2) << search.err;
}

TEST(CliModelKeys, ModelWarningsReachTheJsonWarningsOnce) {
    const CliRun r = run_cli("estimate --format json " + source_path("tests/data/job/hf_softcap_job.yaml"));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    bool softcap = false, unknown = false;
    for (const auto& w : j["warnings"]) {
        softcap |= w["key"] == "model.attn_logit_softcapping" &&
                   w["message"].get<std::string>().rfind("not modelled: ", 0) == 0;
        unknown |= w["key"] == "model.a_key_from_the_future";
    }
    EXPECT_TRUE(softcap) << j["warnings"].dump();
    EXPECT_TRUE(unknown) << j["warnings"].dump();
    // Standard error says each once.
    const std::string line = "not modelled: attn_logit_softcapping";
    const auto first = r.err.find(line);
    ASSERT_NE(first, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(line, first + 1), std::string::npos) << r.err;
}

TEST(CliModelKeys, EstimateJsonReportsParameterCounts) {
    const CliRun r = run_cli("estimate --format json " + source_path("tests/data/job/models/gpt-oss-20b.yaml"));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["params_total"].get<double>() / 20.91e9, 1.0, 0.005);
    EXPECT_GT(j["params_total"].get<double>(), j["params_active"].get<double>());
    EXPECT_EQ(j["job"]["model"]["layer_kinds"].size(), 2u);  // banded and dense attention layers
}

}  // namespace
}  // namespace lostflops::test
