// The executable's conventions (issue 7): a JSON output a script can trust
// (schema version, the resolved job, units in every key, warnings), a JSON
// error object with --format json, documented exit codes, --version, the same
// --format help in every subcommand.
#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

using test::CliRun;
using test::run_cli;
using test::source_path;

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(CliJson, EstimateCarriesSchemaVersionAndTheResolvedJob) {
    const CliRun r = run_cli("estimate --format json");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("schema_version"));
    EXPECT_TRUE(j["schema_version"].is_number_integer());
    EXPECT_GE(j["schema_version"].get<int>(), 1);

    const Job job = default_job();
    const auto& rj = j.at("job");
    EXPECT_EQ(rj["name"], job.name);
    EXPECT_EQ(rj["model"]["name"], job.model.name);
    EXPECT_EQ(rj["model"]["num_hidden_layers"], job.model.layers);
    EXPECT_EQ(rj["model"]["hidden_size"], job.model.hidden);
    EXPECT_EQ(rj["model"]["num_key_value_heads"], job.model.kind(0).attention.kv_heads);
    EXPECT_EQ(rj["cluster"]["gpu"]["name"], job.cluster.gpu.name);
    EXPECT_EQ(rj["cluster"]["gpu"]["memory_bytes"], job.cluster.gpu.memory_bytes);
    EXPECT_DOUBLE_EQ(rj["cluster"]["gpu"]["peak_tflops_used"].get<double>(),
                     job.cluster.gpu.peak_tflops(job.training.precision));
    EXPECT_EQ(rj["cluster"]["num_gpus"], job.cluster.num_gpus);
    EXPECT_EQ(rj["cluster"]["gpus_per_node"], job.cluster.gpus_per_node);
    const auto& p = rj.at("parallel");
    EXPECT_EQ(p["tp"], job.plan.tp);
    EXPECT_EQ(p["pp"], job.plan.pp);
    EXPECT_EQ(p["dp"], job.plan.dp);
    EXPECT_EQ(p["vpp"], job.plan.vpp);
    EXPECT_EQ(p["zero"], job.plan.zero);
    EXPECT_EQ(p["recompute"], to_string(job.plan.recompute));
    EXPECT_EQ(p["sequence_parallel"], job.plan.sequence_parallel);
    // Resolved only inside the library until now.
    EXPECT_EQ(p["overlap_grad_reduce"], job.plan.overlap_grad_reduce);
    EXPECT_EQ(p["tp_comm_overlap"], job.plan.tp_comm_overlap);
    EXPECT_EQ(rj["training"]["attention"], to_string(job.training.attention));
    EXPECT_EQ(rj["training"]["framework"], to_string(job.training.framework));
    EXPECT_EQ(rj["training"]["micro_batch_size"], job.training.micro_batch);
}

// Every number's key names its unit: seconds, bytes, rates per second, or a
// count / fraction the README's schema lists.
TEST(CliJson, EveryNumberHasItsUnitInTheKey) {
    const CliRun r = run_cli("estimate --format json");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["breakdown"].empty());
    double sum = 0;
    for (const auto& [k, v] : j["breakdown"].items()) {
        EXPECT_TRUE(ends_with(k, "_s")) << "breakdown." << k;
        sum += v.get<double>();
    }
    EXPECT_NEAR(sum, j["step_time_s"].get<double>(), 1e-9 * sum);
    const std::set<std::string> counts = {"worst_pipeline_rank", "inflight_micro_batches", "warmup_forward_passes",
                                          "zero_live_params", "moment_micro_batch", "moment_chunk"};
    for (const auto& [k, v] : j["memory"].items()) {
        if (!v.is_number()) continue;
        EXPECT_TRUE(ends_with(k, "_bytes") || ends_with(k, "_GiB") || counts.count(k)) << "memory." << k;
    }
    const std::set<std::string> top_counts = {"schema_version", "mfu", "hfu", "bubble_fraction",
                                              "micro_batches_per_step"};
    for (const auto& [k, v] : j.items()) {
        if (!v.is_number()) continue;
        const bool unit = ends_with(k, "_s") || ends_with(k, "_per_gpu") || ends_with(k, "_per_step") ||
                          k.rfind("params_", 0) == 0;  // parameter counts
        EXPECT_TRUE(unit || top_counts.count(k)) << k;
    }
}

TEST(CliJson, ErrorWithFormatJsonIsAJsonObjectOnStdout) {
    const std::string bad = source_path("tests/data/cli/bad_tp.yaml");
    const CliRun r = run_cli("estimate --format json " + bad);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("parallel.tp"), std::string::npos) << r.err;  // the message stays on stderr
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["schema_version"], 1);
    const auto& e = j.at("error");
    EXPECT_EQ(e["exit_code"], r.code);
    EXPECT_EQ(e["kind"], "bad_input");
    EXPECT_EQ(e["file"], bad);
    EXPECT_EQ(e["key"], "parallel.tp");
    EXPECT_NE(e["message"].get<std::string>().find("tp 3"), std::string::npos) << e;

    // A command-line error, and another subcommand with --format.
    const CliRun usage = run_cli("estimate --format json --no-such-flag");
    EXPECT_EQ(usage.code, 2);
    EXPECT_EQ(nlohmann::json::parse(usage.out)["error"]["exit_code"], 2);
    const CliRun table = run_cli("validate --format json /nonexistent/runs.csv");
    EXPECT_EQ(table.code, 2);
    EXPECT_EQ(nlohmann::json::parse(table.out)["error"]["file"], "/nonexistent/runs.csv");
    // Without --format json, nothing on stdout.
    EXPECT_EQ(run_cli("validate /nonexistent/runs.csv").out, "");
}

TEST(CliExitCodes, EveryCommandReturnsTwoOnBadInput) {
    const std::string missing = "/nonexistent/input";
    const std::vector<std::string> commands = {
        "estimate " + missing, "estimate --set parallel.tp=0", "estimate --format xml", "estimate --format 1",
        "estimate --schedule 1", "validate " + missing + ".csv", "validate", "trace " + missing + ".json",
        "trace", "trace merge " + missing + ".json", "trace merge", "calibrate", "calibrate nccl " + missing,
        "calibrate nccl", "calibrate nccl --op nonsense " + missing, "calibrate runs " + missing + ".csv",
        "calibrate runs", "no-such-command", ""};
    for (const std::string& args : commands) {
        const CliRun r = run_cli(args);
        EXPECT_EQ(r.code, 2) << "lostflops " << args << "\n" << r.all();
        EXPECT_FALSE(r.err.empty()) << "lostflops " << args;
    }
}

TEST(CliExitCodes, HelpListsEveryCode) {
    const CliRun r = run_cli("--help");
    ASSERT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("Exit codes"), std::string::npos) << r.out;
    for (const char* line : {"  0  success", "  1  estimate: the plan does not fit", "  2  bad input",
                             "  3  internal error"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    EXPECT_NE(run_cli("estimate --help").out.find("Exit codes"), std::string::npos);
}

TEST(CliVersion, PrintsTheVersionAndTheGitRevision) {
    const CliRun r = run_cli("--version");
    ASSERT_EQ(r.code, 0) << r.all();
    // The version is project(... VERSION x.y.z) of the top-level CMakeLists.txt.
    std::ifstream cmake(source_path("CMakeLists.txt"));
    const std::string text((std::istreambuf_iterator<char>(cmake)), std::istreambuf_iterator<char>());
    std::smatch v;
    ASSERT_TRUE(std::regex_search(text, v, std::regex(R"(project\(lostflops VERSION ([0-9.]+))")));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(^lostflops ([0-9.]+) \(git ([0-9a-f]+|unknown)\)\n$)")))
        << r.out;
    EXPECT_EQ(m[1].str(), v[1].str());
    int in_git = -1;
    test::shell_output("git -C '" + source_path("") + "' rev-parse --is-inside-work-tree >/dev/null 2>&1", &in_git);
    if (in_git == 0) {
        // A commit of this repository (the one configured; HEAD may have moved since).
        int found = -1;
        test::shell_output("git -C '" + source_path("") + "' cat-file -e '" + m[2].str() + "^{commit}' 2>/dev/null",
                           &found);
        EXPECT_EQ(found, 0) << m[2].str();
    } else {
        EXPECT_EQ(m[2].str(), "unknown");
    }
}

TEST(CliHelp, FormatIsSpelledTheSameInEverySubcommand) {
    for (const std::string& cmd : std::vector<std::string>{"estimate", "validate", "trace", "trace merge"}) {
        const CliRun r = run_cli(cmd + " --help");
        ASSERT_EQ(r.code, 0) << cmd;
        EXPECT_NE(r.out.find("--format {table,json}"), std::string::npos) << cmd << "\n" << r.out;
        EXPECT_EQ(r.out.find("->"), std::string::npos) << cmd << "\n" << r.out;
        EXPECT_EQ(r.out.find("ENUM"), std::string::npos) << cmd << "\n" << r.out;
    }
    const CliRun est = run_cli("estimate --help");
    EXPECT_NE(est.out.find("--schedule {closed,simulate}"), std::string::npos) << est.out;
    // Names only: the numbers behind the enums are not accepted.
    EXPECT_EQ(run_cli("estimate --format 0").code, 2);
    EXPECT_EQ(run_cli("estimate --schedule 0").code, 2);
    EXPECT_EQ(run_cli("estimate --schedule simulate --format json").code, 0);
}

TEST(CliWarnings, EstimatePrintsTheJobWarningsOnStderrAndInJson) {
    const std::string job = source_path("examples/gpt3-175b-8xa100.yaml");
    // ZeRO with dp = 1 shards nothing: a warning (job_warnings, spec).
    const std::vector<JobWarning> expected = job_warnings(load_job(job, {"parallel.zero=1"}));
    ASSERT_FALSE(expected.empty()) << "job_warnings gives nothing for zero 1 with dp 1";
    const CliRun text = run_cli("estimate " + job + " --set parallel.zero=1");
    const CliRun json = run_cli("estimate " + job + " --set parallel.zero=1 --format json");
    const auto j = nlohmann::json::parse(json.out);
    ASSERT_EQ(j["warnings"].size(), expected.size()) << j["warnings"];
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const std::string line = "lostflops: warning: " + expected[i].key + ": " + expected[i].message + "\n";
        EXPECT_NE(text.err.find(line), std::string::npos) << line << text.err;
        EXPECT_NE(json.err.find(line), std::string::npos) << line << json.err;
        EXPECT_EQ(j["warnings"][i]["key"], expected[i].key);
        EXPECT_EQ(j["warnings"][i]["message"], expected[i].message);
    }
    // A job without warnings: an empty array, still there.
    const Job plain = default_job();
    if (job_warnings(plain).empty()) {
        const auto d = nlohmann::json::parse(run_cli("estimate --format json").out);
        ASSERT_TRUE(d["warnings"].is_array());
        EXPECT_TRUE(d["warnings"].empty());
    }
}

}  // namespace
// `--set k=v JOB` and `JOB --set k=v` are the same job: --set takes one value,
// so the job file after it stays the positional (before: it was taken as a
// second --set and refused).
TEST(CliArgs, SetTakesOneValueSoTheJobMayFollowIt) {
    const std::string job = source_path("examples/gpt3-175b-8xa100.yaml");
    const CliRun before = run_cli("estimate --format json --set parallel.recompute=full " + job);
    const CliRun after = run_cli("estimate --format json " + job + " --set parallel.recompute=full");
    ASSERT_TRUE(before.code == 0 || before.code == 1) << before.all();
    EXPECT_EQ(before.out, after.out);
    EXPECT_EQ(nlohmann::json::parse(before.out)["job"]["parallel"]["recompute"], "full");
}

}  // namespace lostflops
