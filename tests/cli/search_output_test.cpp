// The text of `search` and `estimate` for people: one price for the cost per
// billion tokens and the whole run's cost, the best plan's commands (which
// give its figures again), and a job that does not fit shows its advice
// before the run's cost.
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "job/human_format.h"

namespace {

using lostflops::test::CliRun;
using lostflops::test::run_cli;

// The default job's model and cluster on 64 GPUs, tp fixed: a small search.
const std::string kSmall = "search --set cluster.num_gpus=64 --set training.global_batch_size=64 --fix tp=8 ";
const std::string kRun = "--set training.train_tokens=1e11 --by cost ";

TEST(SearchOutput, GpuHourPriceIsTheRunsPriceToo) {
    const CliRun j = run_cli(kSmall + kRun + "--gpu-hour-price 5.5 --format json");
    ASSERT_EQ(j.code, 0) << j.err;
    const auto run = nlohmann::json::parse(j.out)["run"];
    ASSERT_TRUE(run["cost"].is_number()) << run.dump();
    const double gpu_hours = run["gpu_hours"].get<double>(), cost = run["cost"].get<double>();
    EXPECT_NEAR(cost, 5.5 * gpu_hours, 1e-9 * cost);
    const CliRun t = run_cli(kSmall + kRun + "--gpu-hour-price 5.5");
    ASSERT_EQ(t.code, 0) << t.err;
    EXPECT_NE(t.out.find("at $5.50 per GPU-hour"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("cost " + lostflops::money(cost)), std::string::npos) << t.out;
    // Without the flag, the job's own price prices both.
    const CliRun own = run_cli(kSmall + kRun + "--set run.price_per_gpu_hour=3");
    ASSERT_EQ(own.code, 0) << own.err;
    EXPECT_NE(own.out.find("at $3.00 per GPU-hour"), std::string::npos) << own.out;
    EXPECT_NE(own.out.find("cost " + lostflops::money(3 * gpu_hours)), std::string::npos) << own.out;
}

// The `lostflops estimate ...` line printed under the table, run as it is,
// gives the best plan's step time to the bit.
TEST(SearchOutput, BestPlanCommandsGiveItsFigures) {
    const CliRun t = run_cli(kSmall);
    ASSERT_EQ(t.code, 0) << t.err;
    std::istringstream lines(t.out);
    std::string line, estimate, exported;
    while (std::getline(lines, line)) {
        if (line.rfind("  lostflops estimate", 0) == 0) estimate = line.substr(std::string("  lostflops ").size());
        if (line.rfind("  lostflops export megatron", 0) == 0) exported = line.substr(std::string("  lostflops ").size());
    }
    ASSERT_FALSE(estimate.empty()) << t.out;
    EXPECT_NE(estimate.find("--set cluster.num_gpus=64"), std::string::npos) << estimate;
    const auto best = nlohmann::json::parse(run_cli(kSmall + "--format json").out)["top"][0];
    const CliRun e = run_cli(estimate + " --format json");
    ASSERT_EQ(e.code, 0) << estimate << "\n" << e.err;
    const auto j = nlohmann::json::parse(e.out);
    EXPECT_EQ(j["step_time_s"], best["step_time_s"]);
    EXPECT_EQ(j["memory"]["peak_bytes"], best["peak_bytes"]);
    EXPECT_EQ(j["job"]["parallel"]["tp"], 8);
    ASSERT_TRUE(best["set"].is_array());  // the JSON's arguments are the printed ones
    for (const auto& s : best["set"]) EXPECT_NE(estimate.find("--set " + s.get<std::string>()), std::string::npos) << s;
    ASSERT_FALSE(exported.empty()) << t.out;  // the default job runs Megatron-Core
    const CliRun x = run_cli(exported);
    EXPECT_EQ(x.code, 0) << exported << "\n" << x.err;
    EXPECT_NE(x.out.find("--tensor-model-parallel-size 8"), std::string::npos) << x.out;
}

// Near-identical plans of the table, checked against the JSON's first five:
// plan j is grouped under the first better plan i that is not itself grouped,
// whose `set` differs from j's in one argument and whose tie threshold
// (tokens_i x tie_min / best) j reaches; every such pair has its line, and
// the table names no other.
TEST(SearchOutput, NearIdenticalPlansAreGrouped) {
    const CliRun t = run_cli(kSmall + "--top 5");
    ASSERT_EQ(t.code, 0) << t.err;
    const auto j = nlohmann::json::parse(run_cli(kSmall + "--format json").out);
    const auto& top = j["top"];
    ASSERT_EQ(top.size(), 5u);
    const double ratio = j["best_interval"]["tie_min_tokens_per_s_per_gpu"].get<double>() /
                         top[0]["tokens_per_s_per_gpu"].get<double>();
    // head rank -> knob -> "ranks" and "values", in rank order.
    std::map<size_t, std::map<std::string, std::pair<std::string, std::string>>> expected;
    std::vector<bool> folded(top.size(), false);
    size_t pairs = 0;
    for (size_t b = 1; b < top.size(); ++b)
        for (size_t a = 0; a < b && !folded[b]; ++a) {
            if (folded[a] || top[b]["tokens_per_s_per_gpu"].get<double>() <
                                 ratio * top[a]["tokens_per_s_per_gpu"].get<double>())
                continue;
            // A plan with cp > 1 carries its cp_comm_type: lists of
            // different lengths differ in more than one argument.
            if (top[a]["set"].size() != top[b]["set"].size()) continue;
            std::vector<std::string> diff;
            for (size_t k = 0; k < top[a]["set"].size(); ++k)
                if (top[a]["set"][k] != top[b]["set"][k]) diff.push_back(top[b]["set"][k].get<std::string>());
            if (diff.size() != 1) continue;
            const std::string& arg = diff[0];
            const size_t dot = arg.find('.') + 1, eq = arg.find('=');
            auto& [ranks, values] = expected[a + 1][arg.substr(dot, eq - dot)];
            ranks += (ranks.empty() ? "" : ", ") + std::to_string(b + 1);
            values += (values.empty() ? "" : ", ") + arg.substr(eq + 1);
            folded[b] = true;
            ++pairs;
        }
    ASSERT_GT(pairs, 0u) << "the case should have near-identical plans: " << t.out;  // vpp alone differs
    size_t lines = 0;
    for (const auto& [head, knobs] : expected)
        for (const auto& [knob, rv] : knobs) {
            const bool several = rv.first.find(',') != std::string::npos;
            const std::string line = "    rank" + std::string(several ? "s " : " ") + rv.first + ": rank " +
                                     std::to_string(head) + " with " + knob + " " + rv.second + "\n";
            EXPECT_NE(t.out.find(line), std::string::npos) << line << t.out;
            ++lines;
        }
    size_t printed = 0;
    for (size_t at = t.out.find(": rank "); at != std::string::npos; at = t.out.find(": rank ", at + 1)) ++printed;
    EXPECT_EQ(printed, lines) << t.out;
}

TEST(EstimateOutput, AdviceComesBeforeTheRunsCost) {
    const CliRun r = run_cli("estimate " + std::string(LOSTFLOPS_SOURCE_DIR) +
                             "/examples/gpt3-175b-8xa100.yaml --set training.train_tokens=1e10");
    ASSERT_EQ(r.code, 1) << r.err;
    const size_t verdict = r.out.find("DOES NOT FIT"), run = r.out.find("whole run:"),
                 advice = r.out.find("--set ");
    ASSERT_NE(verdict, std::string::npos) << r.out;
    ASSERT_NE(run, std::string::npos) << r.out;
    ASSERT_NE(advice, std::string::npos) << r.out;
    EXPECT_LT(verdict, advice);
    EXPECT_LT(advice, run);
}

// A job without a plan: the error points to the command that finds one.
// A job without a plan is searched, not refused (commands.h overrides_with_plan),
// and the note points to search for the others.
TEST(EstimateOutput, MissingPlanPointsToSearch) {
    const CliRun r = run_cli("estimate " + std::string(LOSTFLOPS_SOURCE_DIR) +
                             "/examples/llama3.1-405b-16384xh100-search.yaml");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("the plan is the search's best (the job has no parallel section)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("lostflops search"), std::string::npos) << r.err;
}

}  // namespace
