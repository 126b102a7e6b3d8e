// Reliability, seventh pass, through the executable (the fifth hunt, by two
// read-only helpers, 2026-12-05): each input here was answered wrongly
// before its fix (the comment above each test says how): --best reporting a
// plan key that breaks a rule as "no plan fits" (exit 1), and a job path or
// --set value that is not UTF-8 ending `--format json` in an internal error
// (exit 3), a run table's GPU count and GPU read by nobody, and its
// misspelt column taken for a note without a word; a blank search option
// taken for an absent one; an error's line that was a row's index; the run
// files' own warnings never shown. The YAML and
// config.json second documents are tested in
// tests/job/job_input_test.cpp.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

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
    // The gpu column likewise, when it names a catalog GPU (the job runs on
    // dgx-h100's h100-sxm); any other text is a note.
    const CliRun gpu = run_cli("--quiet validate " + write("gpu.csv", "name,gpu,tokens_per_s_per_gpu\nmine-a,a100-sxm-80gb,1000\n"));
    EXPECT_EQ(gpu.code, 2) << gpu.all();
    EXPECT_TRUE(has(gpu.err, "line 2: gpu: a100-sxm-80gb, where its run file")) << gpu.err;
    EXPECT_TRUE(has(gpu.err, "runs on h100-sxm")) << gpu.err;
    EXPECT_EQ(run_cli("--quiet validate " + write("gpu2.csv", "name,gpu,tokens_per_s_per_gpu\nmine-a,h100-sxm,1000\n")).code, 0);
    EXPECT_EQ(run_cli("--quiet validate " + write("gpu3.csv", "name,gpu,tokens_per_s_per_gpu\nmine-a,inline h100 (96 GiB),1000\n")).code, 0);
}

// A column a typo away from one validate reads would be taken for a note and
// the runs validated without it: it is named, with what it was near, on
// standard error and in the JSON's warnings. Notes far from every read column
// (source, derivation) are not.
TEST_F(CliReliability7Scratch, ARunTablesMisspeltColumnIsNamed) {
    std::ifstream in(source_path("data/jobs/default.yaml"));
    write("runs/mine-a.yaml", std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    const std::string table = write("typo.csv", "name,recipie,source,derivation,tokens_per_s_per_gpu\nmine-a,fsdp2,x,y,1000\n");
    const CliRun text = run_cli("--quiet validate " + table);
    EXPECT_EQ(text.code, 0) << text.all();
    EXPECT_TRUE(has(text.err, "lostflops: warning: " + table + ": line 1: column 'recipie' is not read (a note); did "
                              "you mean `recipe`?")) << text.err;
    EXPECT_FALSE(has(text.err, "'source'")) << text.err;
    EXPECT_FALSE(has(text.err, "'derivation'")) << text.err;
    const CliRun json = run_cli("--quiet validate --format json " + table);
    ASSERT_EQ(json.code, 0) << json.all();
    const auto j = nlohmann::json::parse(json.out);
    ASSERT_EQ(j["warnings"].size(), 1u) << json.out;
    EXPECT_TRUE(has(j["warnings"][0].get<std::string>(), "column 'recipie'"));
    const CliRun clean = run_cli("--quiet validate --format json " + write("clean.csv", "name,source,tokens_per_s_per_gpu\nmine-a,x,1000\n"));
    ASSERT_EQ(clean.code, 0) << clean.all();
    EXPECT_TRUE(nlohmann::json::parse(clean.out)["warnings"].empty()) << clean.out;
    // calibrate runs reads the same table and says the same.
    const CliRun cal = run_cli("--quiet calibrate runs " + table);
    EXPECT_TRUE(has(cal.err, "column 'recipie' is not read")) << cal.all();
}

// An empty value of these options meant "not given": `search --gpus ''` ran
// the one job, `--compare ''` the plain search, `--fix ''` and `--top ''`
// the defaults, each without a word. A blank value is refused, exit 2.
TEST(CliReliability7, ABlankSearchOptionIsRefusedNotTakenForAbsent) {
    const std::pair<const char*, const char*> cases[] = {
        {"search --gpus ''", "--gpus: empty; expected GPU counts"},
        {"search --fix ' '", "--fix: empty; expected settings"},
        {"search --compare ''", "--compare: empty; expected a plan"},
        {"search --top ''", "--top: empty; expected a positive count or all"},
        {"report -o x.html --gpus ''", "--gpus: empty; expected GPU counts"},
    };
    for (const auto& [args, message] : cases) {
        const CliRun r = run_cli(std::string("--quiet ") + args);
        EXPECT_EQ(r.code, 2) << args << ": " << r.all();
        EXPECT_TRUE(has(r.err, message)) << args << ": " << r.err;
    }
}

// A run table's error named the row's index as its line: after a blank line
// or a note quoted over two lines, the line said was not the row's. And
// "0x2448" was read as 9,288 tokens/s.
TEST_F(CliReliability7Scratch, ARunTablesErrorNamesTheRowsLineInTheFile) {
    const CliRun hex = run_cli("--quiet validate " + write("hex.csv", "name,tokens_per_s_per_gpu\n\n\na,0x2448\n"));
    EXPECT_EQ(hex.code, 2) << hex.all();
    EXPECT_TRUE(has(hex.err, "hex.csv: line 4: tokens_per_s_per_gpu: expected a positive number")) << hex.err;
    std::ifstream in(source_path("data/jobs/default.yaml"));
    write("runs/a.yaml", std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    const CliRun note = run_cli("--quiet validate " + write("note.csv", "\nname,note,tokens_per_s_per_gpu\n"
                                                                        "a,\"one\ntwo\",1000\nb,x,abc\n"));
    EXPECT_EQ(note.code, 2) << note.all();
    EXPECT_TRUE(has(note.err, "note.csv: line 5: tokens_per_s_per_gpu")) << note.err;
}

// The warnings estimate prints on a run file (a TP group across nodes, a
// plan the framework refuses) were never shown by validate: counted on
// standard error, listed in the JSON's run_warnings.
TEST_F(CliReliability7Scratch, ValidateSaysWhatItsRunFilesWarnOf) {
    std::ifstream in(source_path("data/jobs/default.yaml"));
    std::string job(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>{});
    write("runs/plain.yaml", job);
    job.replace(job.find("  tp: 8"), 7, "  tp: 16");
    write("runs/wide.yaml", job);
    const std::string table = write("t.csv", "name,tokens_per_s_per_gpu\nplain,1000\nwide,1000\n");
    const CliRun text = run_cli("--quiet validate " + table);
    ASSERT_EQ(text.code, 0) << text.all();
    EXPECT_TRUE(has(text.err, "lostflops: note: 2 warning(s) on 1 run file(s), as estimate prints them (first: wide: "
                              "parallel.tp)")) << text.err;
    const CliRun json = run_cli("--quiet validate --format json " + table);
    ASSERT_EQ(json.code, 0) << json.all();
    const auto j = nlohmann::json::parse(json.out);
    ASSERT_EQ(j["run_warnings"].size(), 2u) << json.out;
    EXPECT_EQ(j["run_warnings"][0]["run"], "wide");
    EXPECT_EQ(j["run_warnings"][0]["key"], "parallel.tp");
    EXPECT_TRUE(has(j["run_warnings"][0]["message"].get<std::string>(), "more than the 8 GPUs of a node"));
    EXPECT_FALSE(has(json.err, "note:")) << json.err;
    const CliRun one = run_cli("--quiet validate " + write("one.csv", "name,tokens_per_s_per_gpu\nplain,1000\n"));
    EXPECT_FALSE(has(one.err, "note:")) << one.err;
}

}  // namespace
}  // namespace lostflops::test
