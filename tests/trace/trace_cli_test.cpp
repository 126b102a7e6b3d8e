// The `lostflops trace` command end to end: the JSON contract fields, a
// summary written and merged, and exit code 2 on a bad file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

struct Run {
    int code = -1;
    std::string out;
};

// Standard error is dropped, or kept after standard output with `with_stderr`;
// `timeout` (coreutils) stops a run that would hang on a bad input.
Run run(const std::string& args, bool with_stderr = false) {
    Run r;
    const std::string cmd = "timeout 60 " + std::string(LOSTFLOPS_BINARY) + " " + args +
                            (with_stderr ? " 2>&1" : " 2>/dev/null");
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// Two ranks of a generated job (trace_synth.h).
std::vector<std::string> two_ranks(const std::string& dir) {
    SynthSpec s;
    s.ranks = 2;
    s.slow_rank = 1;
    return test::write_synth(s, {0, 1}, dir);
}

TEST(TraceCli, JsonContractAndMerge) {
    const std::filesystem::path dir = test::temp_dir("trace_cli_test");
    const auto traces = two_ranks(dir.string());
    const std::string s0 = (dir / "s0.json").string(), s1 = (dir / "s1.json").string();
    const auto a = run("trace --hta-compatible --format json --summary-out " + s0 + " " + traces[0]);
    ASSERT_EQ(a.code, 0);
    const auto j = nlohmann::json::parse(a.out);
    ASSERT_EQ(j["ranks"].size(), 1u);
    for (const char* key : {"rank", "kernel_span_us", "compute_us", "non_compute_us", "idle_us",
                            "comm_comp_overlap_pct"}) {
        EXPECT_TRUE(j["ranks"][0].contains(key)) << key;
    }
    ASSERT_EQ(run("trace --summary-out " + s1 + " " + traces[1]).code, 0);
    const auto m = run("trace merge --format json " + s0 + " " + s1);
    ASSERT_EQ(m.code, 0);
    const auto mj = nlohmann::json::parse(m.out);
    ASSERT_EQ(mj["ranks"].size(), 2u);
    EXPECT_EQ(mj["ranks"][1]["rank"], 1);
    EXPECT_EQ(mj["cluster"]["slow_ranks"].size(), 1u);  // the slower of the two, against the faster
    EXPECT_EQ(mj["cluster"]["slow_ranks"][0]["rank"], 1);
    // The parent's --format reaches merge when merge has none of its own.
    const auto pm = run("trace --format json merge " + s0 + " " + s1);
    EXPECT_TRUE(nlohmann::json::accept(pm.out)) << pm.out;
    std::filesystem::remove_all(dir);
}

// A kernel name with a byte that is not UTF-8 (a generated trace's, one
// byte inserted in a kernel's name) is text from the file: JSON output
// replaces it, exit 0.
TEST(TraceCli, InvalidUtf8InANameIsReplacedInJson) {
    const std::filesystem::path dir = test::temp_dir("trace_cli_utf8");
    std::string text = synth_trace(SynthSpec{}, 0);
    int changed = 0;
    for (size_t at = text.find("CUDAFunctor_add"); at != std::string::npos; at = text.find("CUDAFunctor_add", at + 2)) {
        text.insert(at, 1, '\xff');  // not the string overload: gcc 12 warns falsely (-Wrestrict)
        ++changed;
    }
    ASSERT_GT(changed, 0);
    const std::string bad = (dir / "bad.json").string();
    std::ofstream(bad, std::ios::binary) << text;
    const auto r = run("trace --format json " + bad);
    EXPECT_EQ(r.code, 0);
    EXPECT_TRUE(nlohmann::json::accept(r.out));
    EXPECT_NE(r.out.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
    std::filesystem::remove_all(dir);
}

// --set and --calibration change the estimate of --job; without it they would
// do nothing, so they are refused.
TEST(TraceCli, JobOptionsNeedJob) {
    const std::string dir = test::temp_dir("trace_cli_job");
    const std::string trace = two_ranks(dir)[0];
    for (const std::string opt : {"--set parallel.tp=2 ", "--calibration x.yaml "}) {
        const auto r = run("trace " + opt + trace, true);
        EXPECT_EQ(r.code, 2) << opt << r.out;
        EXPECT_NE(r.out.find("--job"), std::string::npos) << r.out;
    }
    std::filesystem::remove_all(dir);
}

// --job: measured MFU uses the job's FLOPs, GPUs and peak like the estimate,
// so measured/predicted MFU is the inverse ratio of the step times; the
// measured walls split the measured step.
TEST(TraceCli, JobGivesMeasuredMfuAndWalls) {
    const std::string dir = test::temp_dir("trace_cli_mfu");
    const std::string trace = two_ranks(dir)[0];
    const auto r = run("trace --format json --job " + test::data_path("job-gpt3-125m-16xa100.yaml") + " " + trace);
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
    EXPECT_EQ(run("trace --job /nonexistent/job.yaml " + trace).code, 2);
    std::filesystem::remove_all(dir);
}

// Measured memory (trace_memory.h) in the text and the JSON; nothing of it
// for a trace without [memory] events; standard input read once; --job
// rows against the estimate's predicted peak.
TEST(TraceCli, MemoryOfATraceWithMemoryEvents) {
    const std::string small = test::data_path("memory-small.json");
    const auto text = run("trace " + small);
    ASSERT_EQ(text.code, 0);
    EXPECT_NE(text.out.find("Memory (the CUDA caching allocator's [memory] events"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("aten::mm (in autograd::engine::evaluate_function: MmBackward0)"), std::string::npos)
        << text.out;
    const auto js = run("trace --format json " + small);
    ASSERT_EQ(js.code, 0);
    const auto m = nlohmann::json::parse(js.out)["ranks"][0]["memory"];
    EXPECT_EQ(m["peak_allocated_bytes"], 9000);
    EXPECT_EQ(m["peak_reserved_bytes"], 20480);
    EXPECT_EQ(m["peak_allocated_ts_us"], 1550);
    EXPECT_EQ(m["peak_allocated_step"], 5);
    EXPECT_EQ(m["peak_allocated_step_offset_us"], 550);
    EXPECT_EQ(m["peak_op"], "aten::mm");
    ASSERT_EQ(m["timeline"].size(), 6u);
    EXPECT_EQ(m["timeline"][2], nlohmann::json::parse("[1550.0, 9000.0, 16384.0]"));
    const auto stdin_run = run("trace - < " + small, true);
    EXPECT_EQ(stdin_run.code, 0);
    EXPECT_NE(stdin_run.out.find("memory-peak-op: standard input is read once"), std::string::npos) << stdin_run.out;

    const std::string job = test::data_path("job-gpt3-125m-16xa100.yaml");
    const auto with_job = run("trace --format json --job " + job + " " + small);
    ASSERT_EQ(with_job.code, 0);
    const auto rows = nlohmann::json::parse(with_job.out)["job"]["memory"];
    // Predicted: estimate's allocated and reserved (Memory::allocated_bytes, reserved_bytes).
    const auto est = nlohmann::json::parse(run("estimate --format json " + job).out)["memory"];
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["memory"], "peak allocated");
    EXPECT_EQ(rows[0]["measured_bytes"], 9000);
    EXPECT_EQ(rows[0]["predicted_bytes"].get<double>(), est["allocated_bytes"].get<double>());
    EXPECT_EQ(rows[1]["memory"], "peak reserved");
    EXPECT_EQ(rows[1]["measured_bytes"], 20480);
    EXPECT_EQ(rows[1]["predicted_bytes"].get<double>(), est["reserved_bytes"].get<double>());
    EXPECT_LT(est["allocated_bytes"].get<double>(), est["reserved_bytes"].get<double>());

    const std::string dir = test::temp_dir("trace_cli_memory");
    const std::string plain = two_ranks(dir)[0];
    EXPECT_EQ(run("trace " + plain).out.find("Memory ("), std::string::npos);
    const auto plain_json = nlohmann::json::parse(run("trace --format json --job " + job + " " + plain).out);
    EXPECT_FALSE(plain_json["ranks"][0].contains("memory"));
    EXPECT_TRUE(plain_json["job"]["memory"].empty());
    std::filesystem::remove_all(dir);
}

TEST(TraceCli, BadInputExitsTwo) {
    EXPECT_EQ(run("trace " + std::string(LOSTFLOPS_SOURCE_DIR) + "/README.md").code, 2);
    EXPECT_EQ(run("trace /nonexistent/x.json").code, 2);
    EXPECT_NE(run("trace").code, 0);
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// Devices and pipes are refused with a message, never read (before: `trace
// merge /dev/zero` grew memory without end).
TEST(TraceCli, DevicesAreRefused) {
    for (const char* args : {"trace /dev/zero", "trace /dev/urandom", "trace merge /dev/zero"}) {
        const auto r = run(args, true);
        EXPECT_EQ(r.code, 2) << args;
        EXPECT_TRUE(contains(r.out, "character device")) << args << ": " << r.out;
    }
}

// One rule for `trace` and `trace merge`: a rank given twice is an error
// naming both files.
TEST(TraceCli, SameRankTwiceIsRejectedNamingBothFiles) {
    const std::filesystem::path dir = test::temp_dir("trace_cli_dup");
    const std::string a = two_ranks(dir.string())[0];
    const std::string b = (dir / "copy.json").string();
    std::filesystem::copy_file(a, b, std::filesystem::copy_options::overwrite_existing);
    const auto r = run("trace " + a + " " + b, true);
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(contains(r.out, "appears twice") && contains(r.out, a) && contains(r.out, b)) << r.out;
    std::filesystem::remove_all(dir);
}

// Trace tables: the rows of ranks that hold the others back carry their unit
// in the column header; the per-rank rows name their file; every column is
// defined in docs/traces.md (the manual the README links to).
TEST(TraceCli, TableColumnsUnitsFilesAndDefinitions) {
    const std::string dir = test::temp_dir("trace_cli_columns");
    const auto traces = two_ranks(dir);
    const std::string f0 = traces[0], f1 = traces[1];
    const auto r = run("trace " + f0 + " " + f1);
    ASSERT_EQ(r.code, 0);
    std::istringstream lines(r.out);
    std::string line, per_rank_header, slow_header;
    int rows_with_file = 0;
    while (std::getline(lines, line)) {
        if (contains(line, " rank ") && contains(line, "span_ms")) per_rank_header = line;
        if (contains(line, "held_back_ms")) slow_header = line;
        if (contains(line, f0) || contains(line, f1)) ++rows_with_file;
    }
    EXPECT_GE(rows_with_file, 2);
    EXPECT_TRUE(contains(per_rank_header, "file"));
    ASSERT_FALSE(slow_header.empty()) << r.out;
    std::ifstream readme(std::string(LOSTFLOPS_SOURCE_DIR) + "/docs/traces.md");
    const std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
    std::istringstream words(per_rank_header + " " + slow_header);
    std::string w;
    while (words >> w) EXPECT_TRUE(contains(text, "`" + w + "`")) << "column " << w << " not defined in docs/traces.md";
    std::filesystem::remove_all(dir);
}

// --format is declared the way `estimate` declares it.
TEST(TraceCli, FormatOptionAsEstimate) {
    const auto format_line = [](const std::string& help) {
        const auto at = help.find("--format");
        return at == std::string::npos ? std::string("none") : help.substr(at, help.find('\n', at) - at);
    };
    const std::string est = format_line(run("estimate --help").out);
    EXPECT_EQ(format_line(run("trace --help").out), est);
    EXPECT_EQ(format_line(run("trace merge --help").out), est);
}

}  // namespace
}  // namespace lostflops::trace
