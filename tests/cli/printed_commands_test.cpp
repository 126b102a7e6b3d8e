// Every command the tool prints for the user to run runs, and gives the
// figure printed beside it: search's "the best plan:" lines (the estimate and
// the framework's export), with --rank-plan too; explain's levers on a plan
// the search chose (--best, or a job without a parallel section).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"

namespace lostflops {
namespace {

class PrintedCommands : public ::testing::Test {
protected:
    void TearDown() override {
        for (const std::string& f : files_) std::filesystem::remove(f);
    }
    std::string job(const std::string& name, const std::string& text) {
        const std::string path = (std::filesystem::temp_directory_path() /
                                  ("lostflops-printed-" + std::to_string(getpid()) + "-" + name + ".yaml"))
                                     .string();
        std::ofstream(path, std::ios::binary) << text;
        files_.push_back(path);
        return path;
    }
    std::vector<std::string> files_;
};

// The lines of `out` that are commands: "  lostflops ARGS" -> "ARGS".
std::vector<std::string> printed_commands(const std::string& out) {
    std::vector<std::string> cmds;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("  lostflops ", 0) == 0) cmds.push_back(line.substr(12));
    return cmds;
}

TEST_F(PrintedCommands, SearchPrintsOnlyAnExportThatRuns) {
    // mistral-7b is no torchtitan flavour: `export torchtitan` refuses it, so
    // search does not print it; llama3-8b is one, and its line runs.
    const std::string base = "cluster: {preset: dgx-h100, num_gpus: 8}\n"
                             "training: {seq_length: 4096, global_batch_size: 32, framework: fsdp}\n";
    for (const std::string model : {"mistral-7b", "llama3-8b"}) {
        const std::string path = job(model, "name: " + model + "\nmodel: {preset: " + model + "}\n" + base);
        const auto s = test::run_cli("--quiet search " + path + " --top 1");
        ASSERT_EQ(s.code, 0) << s.err;
        const auto cmds = printed_commands(s.out);
        bool titan = false;
        for (const std::string& c : cmds) {
            titan |= c.rfind("export torchtitan ", 0) == 0;
            const auto r = test::run_cli("--quiet " + c);
            EXPECT_EQ(r.code, 0) << c << "\n" << r.err;
        }
        EXPECT_EQ(titan, model == "llama3-8b") << s.out;
    }
}

TEST_F(PrintedCommands, RankPlanCommandsDropTheJobsParallelSection) {
    // --rank-plan searches without the job's parallel section; its dp 2 (of
    // tp 8) applied to the best plan (tp 1) was an error of the printed line.
    const std::string path = job("rank", "name: r\nmodel: {preset: llama3-8b}\ncluster: {preset: dgx-h100, num_gpus: 16}\n"
                                         "training: {seq_length: 4096, global_batch_size: 64, micro_batch_size: 1}\n"
                                         "parallel: {tp: 8, dp: 2}\n");
    const auto json = test::run_cli("--quiet search " + path + " --rank-plan --top 1 --format json");
    ASSERT_EQ(json.code, 0) << json.err;
    const double best_s = nlohmann::json::parse(json.out).at("top").at(0).at("step_time_s").get<double>();
    // Its JSON "set" frees the section too, as the printed line does: estimate gives the plan's step.
    const nlohmann::json set = nlohmann::json::parse(json.out).at("top").at(0).at("set");
    ASSERT_FALSE(set.empty());
    EXPECT_EQ(set.at(0).get<std::string>(), "parallel=null");
    std::string args;
    for (const auto& a : set) args += " --set " + a.get<std::string>();
    const auto e = test::run_cli("--quiet estimate " + path + args + " --format json");
    ASSERT_EQ(e.code, 0) << args << "\n" << e.err;
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(e.out).at("step_time_s").get<double>(), best_s) << args;
    const auto s = test::run_cli("--quiet search " + path + " --rank-plan --top 1");
    ASSERT_EQ(s.code, 0) << s.err;
    const auto cmds = printed_commands(s.out);
    ASSERT_FALSE(cmds.empty()) << s.out;
    for (const std::string& c : cmds) {
        const bool estimate = c.rfind("estimate ", 0) == 0;
        const auto r = test::run_cli("--quiet " + c + (estimate ? " --format json" : ""));
        ASSERT_EQ(r.code, 0) << c << "\n" << r.err;
        if (estimate) {
            EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out).at("step_time_s").get<double>(), best_s) << c;
        }
    }
}

TEST_F(PrintedCommands, ExplainsLeversOfASearchedPlanRunWithoutASearch) {
    // The job has no parallel section: explain explains the search's best
    // plan; a lever's --set arguments alone made estimate search again, for
    // the changed job (a GPU, a network), and land on another plan.
    const std::string path = job("levers", "name: l\nmodel: {preset: llama3-8b}\ncluster: {preset: dgx-h100, num_gpus: 32}\n"
                                           "training: {seq_length: 8192, global_batch_size: 64}\n");
    for (const std::string best : {"", " --best --set parallel.tp=2"}) {
        const auto x = test::run_cli("--quiet explain " + path + best + " --format json");
        ASSERT_EQ(x.code, 0) << x.err;
        const nlohmann::json levers = nlohmann::json::parse(x.out).at("levers");
        ASSERT_FALSE(levers.empty()) << x.out;
        for (const auto& l : levers) {
            std::string args = "--quiet estimate " + path + (best.empty() ? "" : " --set parallel.tp=2");
            for (const auto& set : l.at("set")) args += " --set '" + set.get<std::string>() + "'";
            const auto e = test::run_cli(args + " --format json");
            ASSERT_EQ(e.code, 0) << args << "\n" << e.err;
            EXPECT_EQ(e.err.find("search's best"), std::string::npos) << args << "\n" << e.err;
            EXPECT_DOUBLE_EQ(nlohmann::json::parse(e.out).at("step_time_s").get<double>(),
                             l.at("step_time_s").get<double>())
                << args;
        }
    }
}

}  // namespace
}  // namespace lostflops
