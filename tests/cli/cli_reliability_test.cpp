// Issue 20's reproducers through the executable: lost output (a failed write
// to standard output, an output file that is an input), run names in
// validate's table, the report of a step too long to draw, and command-line
// values that were taken quietly (NaN, a 2^64 seed, --seed alone, GPU counts).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using lostflops::test::CliRun;
using lostflops::test::run_cli;
using lostflops::test::source_path;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class CliReliability : public lostflops::test::CliScratch {};

// Item 4: every command that prints exits non-zero, saying so, when standard
// output cannot be written.
TEST_F(CliReliability, FullStandardOutputIsAnError) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    const std::string runs = source_path("data/published/published-runs.csv");
    for (const std::string& cmd : std::vector<std::string>{"estimate", "estimate --format json", "search --top 2", "explain",
                                                           "export megatron", "goodput --set training.train_tokens=1e12",
                                                           "validate " + runs, "--help"}) {
        const CliRun r = run_cli(cmd + " >/dev/full");
        EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
        EXPECT_TRUE(has(r.err, "writing standard output")) << cmd << ": " << r.err;
    }
    // A command that failed already keeps its code and message.
    const CliRun bad = run_cli("estimate --set parallel.tp=3 >/dev/full");
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(has(bad.err, "parallel.tp")) << bad.err;
}

// Item 4: an output file that is an input is refused before anything is
// written, whatever path names it (a second name: a hard link).
TEST_F(CliReliability, OutputThatIsAnInputIsRefused) {
    const std::string job_text = slurp(source_path("data/jobs/default.yaml"));
    const std::string job = write("job.yaml", job_text);
    const std::string link = (dir_ / "same.yaml").string();
    ASSERT_EQ(::link(job.c_str(), link.c_str()), 0);
    const CliRun r = run_cli("report " + job + " -o " + link);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "-o")) << r.err;
    EXPECT_EQ(slurp(job), job_text);
    const std::string cal = write("cal.yaml", "kernel_overhead_us: 5\n");
    const std::string runs = source_path("data/published/published-runs.csv");
    const CliRun c = run_cli("calibrate runs " + runs + " --base " + cal + " -o " + cal);
    EXPECT_EQ(c.code, 2) << c.err;
    EXPECT_EQ(slurp(cal), "kernel_overhead_us: 5\n");
    const std::string trace = source_path("tests/data/trace");
    for (const auto& e : fs::directory_iterator(trace)) {
        if (e.path().string().find(".json") == std::string::npos) continue;
        const std::string copy = (dir_ / e.path().filename()).string();
        fs::copy_file(e.path(), copy);
        const std::string before = slurp(copy);
        for (const char* flag : {"--summary-out", "--report"}) {
            const CliRun t = run_cli("trace " + copy + " " + flag + " " + copy);
            EXPECT_EQ(t.code, 2) << flag << ": " << t.err;
            EXPECT_TRUE(has(t.err, flag)) << t.err;
        }
        EXPECT_EQ(slurp(copy), before);
        break;
    }
}

// Items 7 and 8: run names that leave runs/, are too long for a file name, or
// name a link loop are bad input, not a job from elsewhere or exit 3.
TEST_F(CliReliability, ValidateRunNamesStayInRuns) {
    fs::create_directories(dir_ / "outside");
    fs::copy_file(source_path("data/published/runs/megatron24-h100-gpt-70b.json"), dir_ / "outside" / "x.json");
    fs::create_symlink("loop_a", dir_ / "runs" / "loop_b.json");
    fs::create_symlink("loop_b.json", dir_ / "runs" / "loop_a");
    struct Case {
        std::string name, says;
    };
    for (const Case& c : {Case{"../outside/x", "a file name in runs/"}, Case{"..", "a file name in runs/"},
                          Case{std::string(300, 'a'), "at most 250 bytes"}, Case{"loop_b", "symbolic link loop"}}) {
        const std::string table = write("t.csv", "name,tokens_per_s_per_gpu\n" + c.name + ",100\n");
        const CliRun r = run_cli("validate " + table);
        EXPECT_EQ(r.code, 2) << c.name.substr(0, 20) << ": " << r.err;
        EXPECT_TRUE(has(r.err, c.says)) << r.err;
    }
}

// Bounded tables: 4 MiB of commas took 272 MB.
TEST_F(CliReliability, TableBounds) {
    const std::string commas = write("c.csv", "name,tokens_per_s_per_gpu\n" + std::string((4u << 20) - 64, ',') + "\n");
    const CliRun r = run_cli("validate " + commas);
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(has(r.err, "more than 1000 fields")) << r.err;
    std::string lines = "name,tokens_per_s_per_gpu\n";
    for (int i = 0; i < 100'001; ++i) lines += "a\n";
    const CliRun rows = run_cli("validate " + write("r.csv", lines));
    EXPECT_EQ(rows.code, 2);
    EXPECT_TRUE(has(rows.err, "more than 100000 rows")) << rows.err;
}

// Item 7: a step of more passes than the timeline simulates was an internal
// error in `report` while `estimate` accepted it.
TEST_F(CliReliability, ReportOfAStepTooLongToDraw) {
    const std::string job = write("g.yaml", "model: {preset: gpt3-175b}\ncluster: {preset: dgx-a100, num_gpus: 128}\n"
                                            "training: {seq_length: 2048, global_batch_size: 12288}\n"
                                            "parallel: {tp: 8, pp: 16, vpp: 6}\n");
    ASSERT_EQ(run_cli("estimate " + job).code, 0);
    const std::string html = (dir_ / "g.html").string();
    const CliRun r = run_cli("report " + job + " -o " + html);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(slurp(html), "Not drawn: the step has 1179648 passes"));
}

// Item 10 and 11: values the command line took quietly, and a range of 1.8e308.
TEST_F(CliReliability, OptionValues) {
    struct Case {
        std::string args, says;
    };
    const std::string tokens = "--set training.train_tokens=1e12 ";
    for (const Case& c : {Case{"search --gpu-hour-price nan", "finite"}, Case{"search --gpu-hour-price inf", "finite"},
                          Case{"goodput " + tokens + "--simulate 2 --seed 18446744073709551616", "2^64 - 1"},
                          Case{"goodput " + tokens + "--seed 5", "--simulate"},
                          Case{"import megatron --num-gpus 0 x.sh", "not in range 1 to 1000000"},
                          Case{"trace diff a b --threshold nan", "finite"}}) {
        const CliRun r = run_cli(c.args);
        EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
        EXPECT_TRUE(has(r.err, c.says)) << c.args << ": " << r.err;
        EXPECT_FALSE(has(r.err, "1797693")) << r.err;
    }
    EXPECT_EQ(run_cli("goodput " + tokens + "--simulate 2 --seed 18446744073709551615").code, 0);
}

// Item 11: a search with no valid layout said "no plan fits in GPU memory".
TEST_F(CliReliability, SearchWithoutAValidPlanSaysSo) {
    // A fix no plan satisfies is bad input naming the rule (exit 2), not "no valid plan".
    const CliRun r = run_cli("search --fix tp=3");
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_TRUE(has(r.err, "--fix tp=3: no plan can be searched: ")) << r.err;
    EXPECT_FALSE(has(r.out, "GPU memory")) << r.out;
    EXPECT_TRUE(has(run_cli("search --fix tp=8 --fix pp=1 --fix zero=0 --set cluster.num_gpus=8").out,
                    "no plan fits in GPU memory"));
    // Without --fix, the job's own parallel keys are blamed, its file named.
    const CliRun own = run_cli("search --set parallel.tp=3");
    EXPECT_EQ(own.code, 2) << own.all();
    EXPECT_TRUE(has(own.err, "data/jobs/default.yaml (built in): parallel: no plan can be searched: ")) << own.err;
}

}  // namespace
