// What a new user hits first (issue 37, item 9): a mistyped command gets
// "did you mean", a --fix that no plan can satisfy names the rule (exit 2),
// explain's percentage points are not spelled like pipeline parallelism,
// `list gpus` shows a missing bf16 as "-", and `trace --job` says a job that
// does not describe the trace before it prints figures (no MFU beyond 100 %).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_util.h"
#include "lostflops/trace_compare.h"
#include "test_util.h"
#include "trace/trace_report_text.h"

namespace lostflops {
namespace {

TEST(CliFirstSteps, MistypedCommandGetsDidYouMean) {
    const auto r = test::run_cli("estimat");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("'estimat' is not a command of lostflops; did you mean `estimate`?"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("A subcommand is required"), std::string::npos) << r.err;
    const auto sub = test::run_cli("calibrate compnents");
    EXPECT_EQ(sub.code, 2);
    EXPECT_NE(sub.err.find("lostflops calibrate; did you mean `components`?"), std::string::npos) << sub.err;
    // A group named without its command still gets CLI11's message.
    const auto none = test::run_cli("export");
    EXPECT_EQ(none.code, 2);
    EXPECT_NE(none.err.find("subcommand is required"), std::string::npos) << none.err;
}

TEST(CliFirstSteps, FixNoPlanCanSatisfyNamesTheRule) {
    // tp 3 on 32 heads and 8 GPUs: estimate refuses it; search must too, by name.
    const std::string job = test::source_path("tests/data/trace/job-gpt3-125m-16xa100.yaml");
    const auto r = test::run_cli("search " + job + " --fix tp=3");
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_NE(r.err.find("--fix tp=3: no plan can be searched: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("no valid plan"), std::string::npos) << r.out;
    // A fix some plan satisfies still searches.
    EXPECT_EQ(test::run_cli("search " + job + " --fix tp=2 --top 1").code, 0);
}

TEST(CliFirstSteps, MinGpusBeyondOneNodeSaysWhyItNeedsANetwork) {
    // A one-GPU job gives no inter-node network, and need not.
    const std::string job =
        (std::filesystem::temp_directory_path() / ("lostflops-first-steps-" + std::to_string(getpid()) + ".yaml")).string();
    std::ofstream(job, std::ios::binary) <<
                     ("name: one-gpu\n"
                     "model: {num_hidden_layers: 126, hidden_size: 16384, num_attention_heads: 128, num_key_value_heads: 8,"
                     " intermediate_size: 53248, vocab_size: 128256}\n"
                     "cluster: {gpu: h100-sxm, num_gpus: 1}\n"
                     "training: {seq_length: 4096, global_batch_size: 8, micro_batch_size: 1}\n");
    const auto r = test::run_cli("search " + job + " --min-gpus");
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_NE(r.err.find("cluster.inter_node: missing: the search reaches"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("more than one node"), std::string::npos) << r.err;
    std::filesystem::remove(job);
}

TEST(CliFirstSteps, SearchSaysWhatTheBestBuysOverTheRunnerUp) {
    const auto r = test::run_cli("search --top 2 --format json");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto t = test::run_cli("search --top 2");
    ASSERT_EQ(t.code, 0) << t.err;
    const size_t at = t.out.find("best over the runner-up: +");
    ASSERT_NE(at, std::string::npos) << t.out;
    // The percentage is the JSON's two throughputs'.
    const nlohmann::json plans = nlohmann::json::parse(r.out).at("plans");
    const double pct = 100 * (plans[0].at("tokens_per_s_per_gpu").get<double>() /
                                  plans[1].at("tokens_per_s_per_gpu").get<double>() -
                              1);
    const std::string line = t.out.substr(at, t.out.find('\n', at) - at);
    EXPECT_NE(line.find(fmt::format("+{:.1f} % tokens/s per GPU", pct)), std::string::npos) << line;
    EXPECT_NE(line.find(" GiB"), std::string::npos) << line;
}

TEST(CliFirstSteps, ExplainSaysPointsNotPp) {
    const auto r = test::run_cli("explain");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(" points), step "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(" pp), step "), std::string::npos) << r.out;
}

TEST(CliFirstSteps, ListGpusShowsMissingBf16AsDash) {
    const auto r = test::run_cli("list gpus");
    ASSERT_EQ(r.code, 0) << r.err;
    const size_t at = r.out.find("\nv100-sxm2-32gb");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string row = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    EXPECT_EQ(row.find(" 0.0 "), std::string::npos) << row;
    EXPECT_NE(row.find(" - "), std::string::npos) << row;
}

TEST(CliFirstSteps, JobMismatchIsSaidBeforeAnImpossibleMfu) {
    trace::JobComparison c;
    c.step_source = "ProfilerStep";
    c.measured_step_s = 0.01;
    c.predicted_step_s = 2.0;
    c.measured_mfu = 226.519;  // the job's FLOPs over a step of another run
    c.predicted_mfu = 0.5;
    c.warnings = {"job-mismatch: job.yaml: predicted compute 2 s, measured 0.009 s", "other: kept after the table"};
    std::string out;
    trace::detail::job_table(out, c);
    const size_t warn = out.find("warning: job-mismatch");
    const size_t mfu = out.find("  MFU");
    ASSERT_NE(warn, std::string::npos) << out;
    ASSERT_NE(mfu, std::string::npos) << out;
    EXPECT_LT(warn, mfu) << out;
    EXPECT_EQ(out.find("22651.9"), std::string::npos) << out;
    EXPECT_NE(out.find("n/a"), std::string::npos) << out;
    EXPECT_GT(out.find("warning: other"), mfu) << out;
}

}  // namespace
}  // namespace lostflops
