// Reliability, seventh pass, through the executable (the fifth hunt, by two
// read-only helpers, 2026-12-05): each input here was answered wrongly
// before its fix (the comment above each test says how): --best reporting a
// plan key that breaks a rule as "no plan fits" (exit 1), and a job path or
// --set value that is not UTF-8 ending `--format json` in an internal error
// (exit 3), and a run table's GPU count read by nobody. The YAML and
// config.json second documents are tested in
// tests/job/job_input_test.cpp.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `--best` searched with tp 3 fixed (64 heads): nothing was evaluated and it
// said "no plan that megatron-core can launch fits in GPU memory", exit 1,
// where `search` names the rule and exits 2.
TEST(CliReliability7, BestWithAPlanKeyThatBreaksARuleNamesTheRule) {
    for (const std::string cmd : {"estimate", "explain"}) {
        const CliRun r = run_cli("--quiet " + cmd + " --best --set parallel.tp=3");
        EXPECT_EQ(r.code, 2) << cmd << ": " << r.all();
        EXPECT_TRUE(has(r.err, "no plan can be searched: parallel.tp: num_attention_heads 64 is not divisible by tp 3"))
            << r.err;
    }
    // export's search (the library's) says which keys, without the rule.
    const CliRun e = run_cli("--quiet export megatron --best --set parallel.tp=3");
    EXPECT_EQ(e.code, 2) << e.all();
    EXPECT_TRUE(has(e.err, "no plan can be searched: the job's parallel keys")) << e.err;
    // A job that fits nowhere is still exit 1.
    EXPECT_EQ(run_cli("--quiet estimate --best " + source_path("examples/gpt3-175b-8xa100.yaml")).code, 1);
}

// The JSON writer threw on a string that is not UTF-8: a job file whose path
// is not (the job's source) ended `estimate --format json` with "internal
// error: [json.exception.type_error.316]", exit 3; a --set value too.
class CliReliability7Scratch : public CliScratch {};
TEST_F(CliReliability7Scratch, BytesThatAreNotUtf8NeverEndJsonInAnInternalError) {
    const std::filesystem::path path = dir_ / "job\xFF.yaml";
    std::filesystem::copy_file(source_path("data/jobs/default.yaml"), path);
    const CliRun r = run_cli("--quiet estimate --format json '" + path.string() + "'");
    ASSERT_EQ(r.code, 0) << r.all();
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(has(j["job"]["file"].get<std::string>(), "job\xEF\xBF\xBD.yaml")) << j["job"]["file"];
    const CliRun set = run_cli("--quiet estimate --format json --set \"$(printf 'name=x\\300\\257')\"");
    EXPECT_EQ(set.code, 2) << set.all();
    EXPECT_TRUE(has(set.err, "--set name: line 1: binary data (invalid UTF-8)")) << set.err;
    EXPECT_EQ(nlohmann::json::parse(set.out)["error"]["exit_code"], 2) << set.out;
}

// A run table's num_gpus column was read by nobody: a row saying 64 GPUs
// beside a run file of 1,024 was validated on 1,024 without a word.
TEST_F(CliReliability7Scratch, ARunTablesGpuCountMustAgreeWithItsRunFile) {
    std::ifstream in(source_path("data/jobs/default.yaml"));
    write("runs/mine-a.yaml", std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    const std::string bad = write("bad.csv", "name,num_gpus,tokens_per_s_per_gpu\nmine-a,64,1000\n");
    const CliRun r = run_cli("--quiet validate " + bad);
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_TRUE(has(r.err, "line 2: num_gpus: 64 GPUs, where its run file")) << r.err;
    EXPECT_TRUE(has(r.err, "runs on 1024")) << r.err;
    const std::string good = write("good.csv", "name,num_gpus,tokens_per_s_per_gpu\nmine-a,1024,1000\n");
    EXPECT_EQ(run_cli("--quiet validate " + good).code, 0);
}

}  // namespace
}  // namespace lostflops::test
