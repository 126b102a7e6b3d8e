// Issue 36's reproducers through the executable: text from the input on the
// terminal (job names in tables, keys in errors, notes), `search --gpus`
// lists, `calibrate components` folders, `trace merge` of summaries that
// contradict themselves, kernels with no name, and `validate`'s duplicated
// columns and impossible measurements.
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// No raw control byte but the line feed.
void expect_no_controls(const std::string& text, const std::string& what) {
    for (unsigned char c : text) {
        if (c == '\n') continue;
        ASSERT_TRUE(c >= 0x20 && c != 0x7f) << what << ": byte " << int(c) << " in\n" << text;
    }
}

class CliReliability2 : public CliScratch {
public:
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
};

TEST_F(CliReliability2, TextFromTheInputReachesTheTerminalEscaped) {
    // Item 8: the job's name in estimate, explain and goodput tables; a key in an error.
    const std::string job = write("job.yaml", "name: \"x\\e]0;pwned\\ay\\nfake line\"\n" +
                                                  small_job_text().substr(
                                                      small_job_text().find('\n') + 1));
    for (const std::string& cmd : {"estimate " + job, "explain " + job,
                                  "goodput " + job + " --set training.train_tokens=1e9"}) {
        const CliRun r = run_cli(cmd);
        EXPECT_EQ(r.code, 0) << cmd << r.err;
        expect_no_controls(r.all(), cmd);
        EXPECT_TRUE(has(r.out, "x\\x1b]0;pwned\\x07y\\nfake line")) << cmd << r.out;
    }
    const CliRun key = run_cli("estimate --set \"$(printf 'model.\\033]0;pwned\\007=1')\"");
    EXPECT_EQ(key.code, 2);
    expect_no_controls(key.all(), "error");
    EXPECT_TRUE(has(key.err, "model.\\x1b]0;pwned\\x07")) << key.err;
    // A Megatron flag word with a newline: one note line, not a fake one.
    const std::string script = write("run.sh", "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                                               "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
                                               "--micro-batch-size 1 --global-batch-size 8 "
                                               "$'--fake-flag\\nlostflops: note: fake line\\e[2J'\n");
    const CliRun notes = run_cli("import megatron " + script + " --num-gpus 8");
    expect_no_controls(notes.err, "import notes");
    EXPECT_FALSE(has(notes.err, "\nlostflops: note: fake line")) << notes.err;
    EXPECT_TRUE(has(notes.err, "--fake-flag\\nlostflops: note: fake line\\x1b[2J")) << notes.err;
    // A MaxText key in a note.
    const std::string config = write("maxtext.yml", "\"odd\\ekey\\a\": 1\n");
    const CliRun maxtext = run_cli("import maxtext " + config + " --tpu v5e-8");
    expect_no_controls(maxtext.err, "maxtext notes");
    EXPECT_TRUE(has(maxtext.err, "odd\\x1bkey\\x07")) << maxtext.err;
}

TEST_F(CliReliability2, SearchGpusListIsBoundedAndBlamedOnItself) {
    // Item 5: 10,000 sizes printed nothing for 60 s; now at most 64.
    std::string sizes;
    for (int n = 8; n <= 800; n += 8) sizes += (sizes.empty() ? "" : ",") + std::to_string(n);
    const CliRun many = run_cli("search --gpus " + sizes);
    EXPECT_EQ(many.code, 2);
    EXPECT_TRUE(has(many.err, "--gpus: 100 sizes: a sweep searches each, at most 64")) << many.err;
    // Item 16: the size's error is the sweep's, not a --set the user never wrote.
    const CliRun nine = run_cli("search --gpus 9");
    EXPECT_FALSE(has(nine.err, "--set cluster.num_gpus=9")) << nine.err;
    EXPECT_TRUE(has(nine.err, "--gpus")) << nine.err;
}

TEST_F(CliReliability2, CalibrateComponentsFolders) {
    // Item 1: a number for the power limit was an internal error (exit 3).
    const std::string dir = path("h100-sxm");
    write("h100-sxm/meta.json", R"({"nvidia_smi": {"power.limit": 700}})");
    write("h100-sxm/gemm.csv", "dtype,scaling,m,n,k,what,time_us,tflops\nbf16,none,8192,8192,8192,square,1,578.7\n");
    const CliRun ok = run_cli("calibrate components --measured " + dir + " -o " + path("out.yaml"));
    EXPECT_EQ(ok.code, 0) << ok.err;
    write("h100-sxm/meta.json", R"({"nvidia_smi": {"power.limit": "nan W"}})");
    const CliRun nan = run_cli("calibrate components --measured " + dir);
    EXPECT_EQ(nan.code, 2);
    EXPECT_TRUE(has(nan.err, "nvidia_smi.power.limit: power limit 'nan W': expected watts from 70 to 1400")) << nan.err;
    // Item 16: a folder that is not there is named as such.
    const CliRun none = run_cli("calibrate components --measured /nonexistent/dir");
    EXPECT_EQ(none.code, 2);
    EXPECT_TRUE(has(none.err, "/nonexistent/dir: no such folder")) << none.err;
}

// A summary of two synthetic ranks, edited by `edit`.
std::string summary_with(CliReliability2& t, const std::string& traces, const std::function<void(nlohmann::json&)>& edit) {
    const std::string summary = traces + "/all.summary.json";
    std::ifstream in(summary);
    nlohmann::json j = nlohmann::json::parse(in);
    edit(j);
    return t.write("edited.summary.json", j.dump());
}

TEST_F(CliReliability2, TraceMergeRefusesImpossibleFigures) {
    // Item 13: 10000000000.0% compute, inf%, a 300-digit span, 5000.0% overlap.
    const std::string traces = path("traces");
    ASSERT_EQ(run_cli("trace synth " + traces + " --ranks 2 --gpus-per-node 2").code, 0);
    ASSERT_EQ(run_cli("trace " + traces + " --summary-out " + traces + "/all.summary.json").code, 0);
    const struct {
        const char* key;
        std::function<void(nlohmann::json&)> edit;
        const char* says;
    } cases[] = {
        {"compute_us", [](nlohmann::json& r) { r["compute_us"] = r["kernel_span_us"].get<double>() * 1e8; },
         "is more than kernel_span_us"},
        {"compute_us", [](nlohmann::json& r) { r["kernel_span_us"] = 0; }, "is more than kernel_span_us"},
        {"kernel_span_us", [](nlohmann::json& r) { r["kernel_span_us"] = 1e300; }, "more than a trace can span"},
        {"comm_comp_overlap_pct", [](nlohmann::json& r) { r["comm_comp_overlap_pct"] = 5000; },
         "expected a percentage from 0 to 100"},
    };
    for (const auto& c : cases) {
        const std::string file = summary_with(*this, traces, [&](nlohmann::json& j) { c.edit(j["ranks"][0]); });
        const CliRun r = run_cli("trace merge " + file);
        EXPECT_EQ(r.code, 2) << c.key << r.out;
        EXPECT_TRUE(has(r.err, std::string("ranks[0].") + c.key)) << r.err;
        EXPECT_TRUE(has(r.err, c.says)) << r.err;
    }
}

TEST_F(CliReliability2, KernelsWithNoNameAreSaidAndNotAdvisedOn) {
    // Item 14: every kernel "name": null became other compute without a word,
    // and the top advice was "93.8 % ... non-matmul".
    const std::string traces = path("named");
    ASSERT_EQ(run_cli("trace synth " + traces + " --ranks 1 --gpus-per-node 1").code, 0);
    const std::string file = traces + "/rank00000.json";
    std::ifstream in(file);
    nlohmann::json j = nlohmann::json::parse(in);
    in.close();
    for (auto& e : j["traceEvents"])
        if (e.value("cat", "") == "kernel") e["name"] = nullptr;
    const std::string unnamed = write("unnamed.json", j.dump());
    const CliRun r = run_cli("trace " + unnamed);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.all(), "unnamed-kernels: ")) << r.all();
    EXPECT_FALSE(has(r.out, "non-matmul")) << r.out;
}

TEST_F(CliReliability2, ValidateRefusesDuplicatedColumnsAndImpossibleValues) {
    // Item 15: a duplicated column used the first; 1e-300 printed a 300-digit error.
    const std::string run = "megatron24-h100-gpt-32b";
    fs::copy_file(source_path("data/published/runs/" + run + ".json"), dir_ / "runs" / (run + ".json"));
    const CliRun dup = run_cli("validate " + write("dup.csv", "name,tokens_per_s_per_gpu,tokens_per_s_per_gpu\n" + run +
                                                                  ",3000,4000\n"));
    EXPECT_EQ(dup.code, 2);
    EXPECT_TRUE(has(dup.err, "column 'tokens_per_s_per_gpu' appears twice (fields 2 and 3)")) << dup.err;
    for (const char* value : {"1e-300", "1e12"}) {
        const CliRun r = run_cli("validate " + write("tiny.csv", "name,tokens_per_s_per_gpu\n" + run + "," + value + "\n"));
        EXPECT_EQ(r.code, 2) << value << r.out;
        EXPECT_TRUE(has(r.err, "line 2: tokens_per_s_per_gpu")) << r.err;
        EXPECT_TRUE(has(r.err, "expected 0.01 % to 150 %")) << r.err;
        EXPECT_LT(r.all().size(), 1000u);
    }
}

}  // namespace
}  // namespace lostflops::test
