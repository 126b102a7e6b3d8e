// Reliability, third pass, through the executable (every subcommand
// over real and mutated inputs): each input here was answered wrongly before
// its fix: a refusal that named a rule the input did not break, a value taken
// quietly as the key's default, a legal override refused.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using lostflops::test::CliRun;
using lostflops::test::run_cli;
using lostflops::test::source_path;

class CliReliability3Scratch : public lostflops::test::CliScratch {};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A free search (no parallel section) on 100,000 GPUs, which no layout
// divides with a global batch of 1,024, said "parallel: missing section:
// `lostflops search` finds the best plan of a job without one": what it was
// doing. It names the divisibility rules and the figures they failed on.
TEST(CliReliability3, FreeSearchWithoutALayoutNamesTheRules) {
    const CliRun r = run_cli("--quiet search --threads 1 --set parallel=null --set cluster.num_gpus=100000");
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_FALSE(has(r.err, "missing section")) << r.err;
    EXPECT_TRUE(has(r.err, "divisibility rules")) << r.err;
    EXPECT_TRUE(has(r.err, "100000 GPUs")) << r.err;
    EXPECT_TRUE(has(r.err, "global batch of 1024")) << r.err;
}

// "--set parallel.tp=#4" parsed as a YAML comment, so null: tp fell back to
// its default (1) and the estimate ran on a plan nobody gave.
TEST(CliReliability3, SetValueThatIsAllCommentIsRefused) {
    const CliRun r = run_cli("--quiet estimate --set 'parallel.tp=#4'");
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_TRUE(has(r.err, "--set parallel.tp=#4: parallel.tp:")) << r.err;
    EXPECT_TRUE(has(r.err, "YAML comment")) << r.err;
}

// Overriding one figure of a preset's link was refused as the other missing.
TEST(CliReliability3, OneFigureOfAPresetLinkCanBeSet) {
    const CliRun r = run_cli("--quiet estimate --format json --set cluster.inter_node.latency_us=10");
    EXPECT_EQ(r.code, 0) << r.all();
    EXPECT_TRUE(has(r.out, "\"latency_us\": 10.0")) << r.out.substr(0, 2000);
}

// A run table naming a run twice was validated with the run counted twice
// in the MAPE (and fitted twice by calibrate runs); a measurement past any
// number said "an MFU of inf %".
TEST_F(CliReliability3Scratch, RunTableRefusesARunTwiceAndSaysNoInf) {
    const std::string run = "megatron24-h100-gpt-32b";
    fs::copy_file(source_path("data/published/runs/" + run + ".json"), dir_ / "runs" / (run + ".json"));
    const std::string twice = write("twice.csv", "name,tokens_per_s_per_gpu\n" + run + ",3000\n" + run + ",3000\n");
    for (const std::string cmd : {"validate ", "calibrate runs "}) {
        const CliRun r = run_cli(cmd + twice);
        EXPECT_EQ(r.code, 2) << cmd << r.all();
        EXPECT_TRUE(has(r.err, "line 3: name: '" + run + "' is named again (first at line 2)")) << r.err;
    }
    const CliRun huge = run_cli("validate " + write("huge.csv", "name,tokens_per_s_per_gpu\n" + run + ",1e308\n"));
    EXPECT_EQ(huge.code, 2) << huge.all();
    EXPECT_TRUE(has(huge.err, "line 2: tokens_per_s_per_gpu")) << huge.err;
    EXPECT_FALSE(has(huge.err, "inf")) << huge.err;
}

// A job that leaves its plan to the search, on GPUs where no plan fits (the
// default 70B job on one GPU): the input is sound and the answer is "does not
// fit", exit 1 as `search` gives, not 2 as for bad input.
TEST(CliReliability3, NoPlanFitsIsDoesNotFit) {
    const std::string job = "--set parallel=null --set cluster.num_gpus=1 --set cluster.gpus_per_node=1";
    const CliRun r = run_cli("--quiet estimate " + job);
    EXPECT_EQ(r.code, 1) << r.all();
    EXPECT_TRUE(has(r.err, "parallel: no plan that megatron-core can launch fits in GPU memory")) << r.err;
    const CliRun j = run_cli("--quiet estimate --format json " + job);
    EXPECT_EQ(j.code, 1) << j.all();
    EXPECT_TRUE(has(j.out, "\"kind\": \"does_not_fit\"")) << j.out;
    EXPECT_TRUE(has(j.out, "\"exit_code\": 1")) << j.out;
    // A bad input in the same job is still bad input.
    EXPECT_EQ(run_cli("--quiet estimate " + job + " --set parallel.tp=3").code, 2);
}

}  // namespace
