// --best everywhere (issue 37 item 5): estimate, goodput, explain, report
// and export take the search's best plan with --best, and a job without a parallel
// section is searched, not refused; each says which plan on stderr, and the
// plan is the one `search` ranks first.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_util.h"

namespace lostflops {
namespace {

class BestPlan : public ::testing::Test {
protected:
    void SetUp() override {
        job_ = (std::filesystem::temp_directory_path() / ("lostflops-best-" + std::to_string(getpid()) + ".yaml")).string();
        std::ofstream(job_, std::ios::binary)
            << "name: llama8-16\nmodel: {preset: llama3-8b}\ncluster: {preset: dgx-h100, num_gpus: 16}\n"
               "training: {seq_length: 4096, global_batch_size: 64, micro_batch_size: 1, train_tokens: 1.0e+11}\n";
    }
    void TearDown() override {
        std::filesystem::remove(job_);
        std::filesystem::remove(job_ + ".html");
    }
    std::string job_;
};

TEST_F(BestPlan, AJobWithoutAPlanIsSearchedByEveryCommand) {
    const auto search = test::run_cli("search " + job_ + " --top 1 --format json");
    ASSERT_EQ(search.code, 0) << search.err;
    const nlohmann::json best = nlohmann::json::parse(search.out).at("plans").at(0);
    const auto est = test::run_cli("estimate " + job_ + " --format json");
    ASSERT_EQ(est.code, 0) << est.err;
    EXPECT_NE(est.err.find("the plan is the search's best (the job has no parallel section)"), std::string::npos)
        << est.err;
    const nlohmann::json e = nlohmann::json::parse(est.out);
    EXPECT_DOUBLE_EQ(e.at("step_time_s").get<double>(), best.at("step_time_s").get<double>());
    for (const std::string cmd : {"goodput ", "explain "}) {
        const auto r = test::run_cli(cmd + job_);
        EXPECT_EQ(r.code, 0) << cmd << r.err;
        EXPECT_NE(r.err.find("the plan is the search's best"), std::string::npos) << cmd << r.err;
    }
    const auto rep = test::run_cli("report " + job_ + " -o " + job_ + ".html");
    EXPECT_EQ(rep.code, 0) << rep.err;
    EXPECT_TRUE(std::filesystem::exists(job_ + ".html"));
    // export: the best plan the target can launch, as with --best.
    for (const std::string kind : {"megatron", "torchtitan"}) {
        const auto ex = test::run_cli("export " + kind + " " + job_);
        EXPECT_EQ(ex.code, 0) << kind << ex.err;
        EXPECT_NE(ex.err.find("the job has no parallel section: export " + kind + " exports the best plan"),
                  std::string::npos)
            << ex.err;
        const auto best_ex = test::run_cli("export " + kind + " " + job_ + " --best");
        ASSERT_EQ(best_ex.code, 0) << kind << best_ex.err;
        EXPECT_EQ(ex.out, best_ex.out) << kind;
    }
}

TEST_F(BestPlan, BestReplacesAGivenPlanAndKeepsItsFixedKeys) {
    // The job's plan (tp 8, pp 2) given as keys: --best keeps them fixed, as search does.
    const std::string sets = " --set parallel.tp=8 --set parallel.pp=2";
    const auto search = test::run_cli("search " + job_ + sets + " --top 1 --format json");
    ASSERT_EQ(search.code, 0) << search.err;
    const nlohmann::json best = nlohmann::json::parse(search.out).at("plans").at(0);
    const auto r = test::run_cli("goodput " + job_ + sets + " --best --format json");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("the plan is the search's best: tp 8"), std::string::npos) << r.err;
    // The whole run is costed at the winner's step.
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out).at("step_time_s").get<double>(), best.at("step_time_s").get<double>());
    const auto est = test::run_cli("estimate " + job_ + sets + " --best --format json");
    ASSERT_EQ(est.code, 0) << est.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(est.out).at("step_time_s").get<double>(),
                     best.at("step_time_s").get<double>());
    // Without --best the job's own plan, and no note.
    const auto own = test::run_cli("estimate " + job_ + sets);
    EXPECT_EQ(own.err.find("search's best"), std::string::npos) << own.err;
}

}  // namespace
}  // namespace lostflops
