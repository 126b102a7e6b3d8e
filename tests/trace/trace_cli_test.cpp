// The `lostflops trace` command end to end: the JSON contract fields, a
// summary written and merged, and exit code 2 on a bad file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

struct Run {
    int code = -1;
    std::string out;
};

Run run(const std::string& args) {
    Run r;
    const std::string cmd = std::string(LOSTFLOPS_BINARY) + " " + args + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

TEST(TraceCli, JsonContractAndMerge) {
    const auto dir = std::filesystem::temp_directory_path() / "lostflops_trace_cli_test";
    std::filesystem::create_directories(dir);
    const std::string s0 = (dir / "s0.json").string(), s1 = (dir / "s1.json").string();
    const auto a = run("trace --hta-compatible --format json --summary-out " + s0 + " " +
                       test::data_path("sampled-128rank.rank0.json.gz"));
    ASSERT_EQ(a.code, 0);
    const auto j = nlohmann::json::parse(a.out);
    ASSERT_EQ(j["ranks"].size(), 1u);
    for (const char* key : {"rank", "kernel_span_us", "compute_us", "non_compute_us", "idle_us",
                            "comm_comp_overlap_pct"}) {
        EXPECT_TRUE(j["ranks"][0].contains(key)) << key;
    }
    ASSERT_EQ(run("trace --summary-out " + s1 + " " + test::data_path("sampled-128rank.rank1.json.gz")).code, 0);
    const auto m = run("trace merge --format json " + s0 + " " + s1);
    ASSERT_EQ(m.code, 0);
    const auto mj = nlohmann::json::parse(m.out);
    ASSERT_EQ(mj["ranks"].size(), 2u);
    EXPECT_EQ(mj["ranks"][1]["rank"], 1);
    EXPECT_FALSE(mj["stragglers"].empty());
    std::filesystem::remove_all(dir);
}

// --job: measured MFU uses the job's FLOPs, GPUs and peak like the estimate,
// so measured/predicted MFU is the inverse ratio of the step times; the
// measured walls split the measured step.
TEST(TraceCli, JobGivesMeasuredMfuAndWalls) {
    const auto r = run("trace --format json --job " + test::data_path("job-gpt3-125m-16xa100.yaml") + " " +
                       test::data_path("a100-16rank-sendrecv.rank0.json.gz"));
    ASSERT_EQ(r.code, 0);
    const auto job = nlohmann::json::parse(r.out)["job"];
    const double ms = job["measured_step_s"], ps = job["predicted_step_s"];
    const double mm = job["measured_mfu"], pm = job["predicted_mfu"];
    ASSERT_GT(ms, 0);
    ASSERT_GT(pm, 0);
    EXPECT_NEAR(mm / pm, ps / ms, 1e-9 * ps / ms);
    double walls = 0;
    for (const auto& w : job["walls"]) walls += w["measured_s"].get<double>();
    EXPECT_NEAR(walls, ms, 1e-6 * ms);
    EXPECT_EQ(run("trace --job /nonexistent/job.yaml " + test::data_path("mi250-toy-train.json.gz")).code, 2);
}

TEST(TraceCli, BadInputExitsTwo) {
    EXPECT_EQ(run("trace " + test::data_path("LICENSE-HTA")).code, 2);
    EXPECT_EQ(run("trace /nonexistent/x.json").code, 2);
    EXPECT_NE(run("trace").code, 0);
}

}  // namespace
}  // namespace lostflops::trace
