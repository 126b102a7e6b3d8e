// Reliability, sixth pass, through the executable (the fourth hunt): each
// input here was answered wrongly before its fix (the comment above each test
// says how): silent defaults (an empty file name, a null preset, a setting
// given twice), words without "did you mean", a report drawn over the trace of
// another model, counts read from " 5", GPUs for TPU chips, summary times
// past their span, and --strict refusing a key only after the whole search.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The command exits 2 and its standard error holds every part.
void expect_refused(const std::string& args, const std::vector<std::string>& parts) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.all();
    for (const std::string& part : parts) EXPECT_TRUE(has(r.err, part)) << args << ": " << r.err;
}

// report --trace drew a trace's memory over the job's prediction without the
// check `trace --job` makes: a trace of another model (here two GEMMs of
// 90 us a step against GPT-3 175B's 9.8 s) gave no job-mismatch warning.
class CliReliability6Scratch : public CliScratch {};
TEST_F(CliReliability6Scratch, ReportSaysATraceOfAnotherJob) {
    const std::string trace = source_path("tests/data/trace/memory-small.json");
    const std::string job = source_path("examples/gpt3-175b-8xa100.yaml");
    const CliRun other = run_cli("--quiet report " + job + " --trace " + trace + " -o " + (dir_ / "a.html").string());
    EXPECT_EQ(other.code, 1) << other.all();  // the plan does not fit; the report is written
    EXPECT_TRUE(has(other.err, "warning: job-mismatch: " + job + ": predicted compute")) << other.err;
}

// Counts were read by std::stol (search --top, --gpus) or CLI11's strtoll
// (--threads, --simulate, ...): " 5", "+5" and 0x5 were 5, where every
// real-valued option (--gpu-hour-price) refuses them. Now digits only.
TEST(CliReliability6, CountsAreDigitsOnly) {
    const std::string job = source_path("examples/gpt3-175b-8xa100.yaml");
    for (const std::string bad : {"' 5'", "+5", "0x5"}) {
        const CliRun top = run_cli("--quiet search --top " + bad + " " + job);
        EXPECT_EQ(top.code, 2) << bad << ": " << top.all();
        EXPECT_TRUE(has(top.err, "--top")) << top.err;
        const CliRun threads = run_cli("--quiet search --top 1 --threads " + bad + " " + job);
        EXPECT_EQ(threads.code, 2) << bad << ": " << threads.all();
        EXPECT_TRUE(has(threads.err, "expected a whole number")) << threads.err;
        const CliRun gpus = run_cli("--quiet search --gpus 8," + bad + " " + job);
        EXPECT_EQ(gpus.code, 2) << bad << ": " << gpus.all();
        EXPECT_TRUE(has(gpus.err, "expected a GPU count")) << gpus.err;
    }
    // The plain count still reads (exit 1: no plan of GPT-3 175B fits on 8 A100s).
    EXPECT_EQ(run_cli("--quiet search --top 5 --threads 1 " + job).code, 1);
}

// goodput's table counted a TPU slice's chips as "256 GPUs" and
// "GPU-hours"; estimate's whole-run section too.
TEST(CliReliability6, GoodputCountsTpuChips) {
    const std::string tpu = source_path("tests/data/tpu/llama2-7b-v5e-256.yaml");
    const CliRun g = run_cli("--quiet goodput --set training.train_tokens=1e12 " + tpu);
    ASSERT_EQ(g.code, 0) << g.all();
    EXPECT_TRUE(has(g.out, "256 chips")) << g.out;
    EXPECT_TRUE(has(g.out, "chip-hours")) << g.out;
    EXPECT_FALSE(has(g.out, "GPU-hours")) << g.out;
    const CliRun gpu = run_cli("--quiet goodput " + source_path("examples/deepseek-v3-2048xh800-goodput.yaml"));
    EXPECT_TRUE(has(gpu.out, "GPU-hours")) << gpu.all();
    EXPECT_TRUE(has(gpu.out, "2048 GPUs")) << gpu.out;
}

// import torchtitan took any [optimizer] name (torchtitan itself builds Adam
// or AdamW and raises on the rest): "Adamw" and "SGD" were priced as AdamW.
class CliReliability6Torchtitan : public CliScratch {};
TEST_F(CliReliability6Torchtitan, UnknownOptimizerIsRefused) {
    const std::string toml =
        slurp(source_path("tests/data/interop/torchtitan/torchtitan24-a100-llama3-8b-selective.toml"));
    const std::string named = "name = \"AdamW\"";
    const size_t at = toml.find(named);
    ASSERT_NE(at, std::string::npos);
    const auto with = [&](const std::string& name) {
        std::string t = toml;
        t.replace(at, named.size(), "name = \"" + name + "\"");
        return write(name + ".toml", t);
    };
    const CliRun typo = run_cli("import torchtitan --num-gpus 8 " + with("Adamw"));
    EXPECT_EQ(typo.code, 2) << typo.all();
    EXPECT_TRUE(has(typo.err, "optimizer.name: expected Adam or AdamW")) << typo.err;
    EXPECT_TRUE(has(typo.err, "did you mean `AdamW`?")) << typo.err;
    EXPECT_EQ(run_cli("import torchtitan --num-gpus 8 " + with("SGD")).code, 2);
    EXPECT_EQ(run_cli("import torchtitan --num-gpus 8 " + with("Adam")).code, 0);
}

// --strict estimate --best (and explain, report) searched every plan, said
// the search's best, and only then refused the model key the search had
// priced: the refusal now comes first, without the search's note.
TEST(CliReliability6, StrictRefusesBeforeTheSearch) {
    const std::string set = " --set model.attn_logit_softcapping=30";
    for (const std::string cmd : {"estimate --best", "explain --best"}) {
        const CliRun r = run_cli("--quiet --strict " + cmd + set);
        EXPECT_EQ(r.code, 2) << cmd << ": " << r.all();
        EXPECT_TRUE(has(r.err, "model.attn_logit_softcapping: not modelled")) << r.err;
        EXPECT_FALSE(has(r.err, "the plan is the search's best")) << r.err;
    }
}

// An unknown model.preset listed every preset but named none, where an
// unknown cluster.preset (and every unknown key) says "did you mean".
TEST(CliReliability6, UnknownModelPresetSaysDidYouMean) {
    expect_refused("--quiet estimate --set model.preset=llama3-70 " + source_path("examples/llama3-70b-64xmi300x.yaml"),
                   {"unknown model 'llama3-70'; known: ", "did you mean `llama3-70b`?"});
}

// KEY=null is the key's default, and model.preset's is none: yet
// `--set model.preset=null --set model.hf_config=PATH` on a job with a preset
// was refused as "given together with model.hf_config", and `preset: null`
// alone as "unknown model ''".
TEST(CliReliability6, NullPresetIsNoPreset) {
    const std::string job = source_path("examples/llama3-70b-64xmi300x.yaml");
    const CliRun swap = run_cli("--quiet estimate --format json --set model.preset=null --set model.hf_config=" +
                                source_path("tests/data/job/tiny-llama/config.json") + " " + job);
    EXPECT_NE(swap.code, 2) << swap.all();
    EXPECT_TRUE(has(swap.out, "\"name\": \"tiny-llama\"")) << swap.out.substr(0, 400);
    const CliRun none = run_cli("--quiet estimate --set model.preset=null " + job);
    EXPECT_EQ(none.code, 2) << none.all();
    EXPECT_TRUE(has(none.err, "model.num_hidden_layers: missing")) << none.err;
}

// A trace cut before its first kernel was refused for having no kernels,
// without the cause: the cut, which a trace cut later warns of.
TEST_F(CliReliability6Scratch, TraceCutBeforeItsKernelsSaysSo) {
    const std::string text = slurp(source_path("tests/data/trace/memory-small.json"));
    const size_t kernel = text.find("{\"ph\": \"X\", \"cat\": \"kernel\"");
    ASSERT_NE(kernel, std::string::npos);
    const CliRun r = run_cli("--quiet trace " + write("cut.json", text.substr(0, kernel)));
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_TRUE(has(r.err, "no GPU kernels to analyse")) << r.err;
    EXPECT_TRUE(has(r.err, "; truncated: the file ends at byte")) << r.err;
}

// An empty file name was read as an option not given: `estimate ""` the
// built-in job, `--calibration ""` the built-in profile, `trace --job ""` no
// comparison and `--summary-out ""` no summary, each exit 0 without a word
// (validate "" and trace "" said "empty file name").
TEST(CliReliability6, EmptyFileNamesAreRefused) {
    const std::string trace = source_path("tests/data/trace/memory-small.json");
    for (const std::string& args : std::vector<std::string>{
             "estimate ''", "explain ''", "export megatron ''", "search --top 1 ''", "estimate --calibration ''",
             "trace --job '' " + trace, "trace --summary-out '' " + trace, "report -o ''"}) {
        const CliRun r = run_cli("--quiet " + args);
        EXPECT_EQ(r.code, 2) << args << ": " << r.all();
        EXPECT_TRUE(has(r.err, "empty file name")) << args << ": " << r.err;
    }
}

// search --fix tp=8,tp=4 (or --fix tp=8 --fix tp=4) searched tp 4 without a
// word: the last value of a setting given twice won.
TEST(CliReliability6, FixGivenTwiceIsRefused) {
    const std::string job = source_path("examples/gpt3-175b-8xa100.yaml");
    for (const std::string fix : {"--fix tp=8,tp=4", "--fix tp=8 --fix tp=4", "--fix mbs=1,micro_batch_size=2"}) {
        const CliRun r = run_cli("--quiet search --top 1 " + fix + " " + job);
        EXPECT_EQ(r.code, 2) << fix << ": " << r.all();
        EXPECT_TRUE(has(r.err, "; give one value")) << fix << ": " << r.err;
    }
    // The same value twice is one setting (exit 1: nothing fits on 8 A100s).
    EXPECT_EQ(run_cli("--quiet search --top 1 --fix tp=8 --fix tp=8 " + job).code, 1);
}

// --strict or --quiet after the command got CLI11's "The following argument
// was not expected: --strict", as a typo does: now where it goes.
TEST(CliReliability6, GlobalFlagAfterTheCommandSaysWhereItGoes) {
    const CliRun r = run_cli("estimate --strict " + source_path("examples/gpt3-175b-8xa100.yaml"));
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_TRUE(has(r.err, "--strict is an option of lostflops itself: give it before the command "
                           "(lostflops --strict estimate ...)"))
        << r.err;
    // A word no command takes is still CLI11's.
    EXPECT_TRUE(has(run_cli("estimate --bogus").err, "not expected: --bogus"));
}

// A mistyped torchtitan table ([traning]) dropped its keys, batch and
// sequence among them, with "not a torchtitan setting lostflops knows" and no
// hint, where a mistyped job key or Megatron flag gets "did you mean".
TEST_F(CliReliability6Torchtitan, UnknownKeySaysDidYouMean) {
    std::string toml =
        slurp(source_path("tests/data/interop/torchtitan/torchtitan24-a100-llama3-8b-selective.toml"));
    const size_t at = toml.find("\n[training]\n");
    ASSERT_NE(at, std::string::npos);
    toml.replace(at, 12, "\n[traning]\n");
    const CliRun r = run_cli("import torchtitan --num-gpus 64 " + write("typo.toml", toml));
    EXPECT_TRUE(has(r.err, "unknown: traning.seq_len: not a torchtitan setting lostflops knows; not used; "
                           "did you mean `training.seq_len`?"))
        << r.all();
}

// A torchtitan model named in another case (flavor = "8b", name = "Llama3")
// listed every flavour lostflops knows but named none.
TEST_F(CliReliability6Torchtitan, UnknownFlavorSaysDidYouMean) {
    std::string toml =
        slurp(source_path("tests/data/interop/torchtitan/torchtitan24-a100-llama3-8b-selective.toml"));
    const std::string given = "flavor = \"8B\"";
    const size_t at = toml.find(given);
    ASSERT_NE(at, std::string::npos);
    toml.replace(at, given.size(), "flavor = \"8b\"");
    const CliRun r = run_cli("import torchtitan --num-gpus 64 " + write("flavor.toml", toml));
    EXPECT_EQ(r.code, 2) << r.all();
    EXPECT_TRUE(has(r.err, "no lostflops preset for torchtitan's llama3 '8b'")) << r.err;
    EXPECT_TRUE(has(r.err, "did you mean `llama3 8B`?")) << r.err;
}

// import maxtext's unknown remat_policy ("Full") listed the policies and
// named none.
TEST(CliReliability6, MaxTextRematPolicySaysDidYouMean) {
    expect_refused("import maxtext --tpu v5p-128 --set remat_policy=Full " +
                       source_path("tests/data/interop/maxtext/llama2-70b-v5p-128.yml"),
                   {"remat_policy: 'Full'; expected full, none", "did you mean `full`?"});
}

// trace merge took a summary whose idle_us is -1e308 (printed "-inf%" as the
// rank's idle share) or whose comm_us is 1e308: only compute, idle and the
// exposed times were held to the kernel span, and none from below.
TEST_F(CliReliability6Scratch, MergeRefusesSummaryTimesPastTheSpan) {
    const std::string summary = (dir_ / "s.json").string();
    ASSERT_EQ(run_cli("--quiet trace --summary-out " + summary + " " +
                      source_path("tests/data/trace/memory-small.json")).code, 0);
    const nlohmann::json good = nlohmann::json::parse(slurp(summary));
    EXPECT_EQ(run_cli("--quiet trace merge " + summary).code, 0);
    for (const auto& [key, value] : std::vector<std::pair<std::string, double>>{{"idle_us", -1e308}, {"comm_us", 1e308},
                                                                                {"matmul_us", -5}}) {
        nlohmann::json bad = good;
        bad["ranks"][0][key] = value;
        const CliRun r = run_cli("--quiet trace merge " + write("bad.json", bad.dump()));
        EXPECT_EQ(r.code, 2) << key << ": " << r.all();
        EXPECT_TRUE(has(r.err, key)) << r.err;
    }
}

// `trace - -`, `trace diff - -` and `trace merge - -` read standard input
// twice: the second read found it empty and said "empty file" (or "not valid
// JSON") of an input that was given.
TEST(CliReliability6, StandardInputTwiceIsRefused) {
    const std::string trace = source_path("tests/data/trace/memory-small.json");
    for (const std::string cmd : {"trace - -", "trace diff - -", "trace merge - -"}) {
        const CliRun r = run_cli("--quiet " + cmd + " < " + trace);
        EXPECT_EQ(r.code, 2) << cmd << ": " << r.all();
        EXPECT_TRUE(has(r.err, "it is read once")) << cmd << ": " << r.err;
    }
}

// A headroom of the whole memory or more was cut down to the usable memory
// without a word: `--headroom 100` on an 80 GB H100 said "usable less 78.6
// GiB headroom: DOES NOT FIT by 0.1 GiB" and the JSON headroom_bytes 78.6 GiB.
TEST(CliReliability6, HeadroomOfTheWholeMemoryIsRefused) {
    const std::string job = " " + source_path("data/jobs/default.yaml");
    const CliRun big = run_cli("--quiet estimate --headroom 100 --set cluster.gpu=h100-sxm" + job);
    EXPECT_EQ(big.code, 2) << big.all();
    EXPECT_TRUE(has(big.err, "cluster.memory_headroom: 100 GiB is at least the whole memory of a h100-sxm")) << big.err;
    EXPECT_NE(run_cli("--quiet estimate --headroom 6 --set cluster.gpu=h100-sxm" + job).code, 2);
}

// trace synth: --slow-rank -1 was taken as "none" (as the default), and a
// rank given twice to --rank was written once and counted twice.
TEST_F(CliReliability6Scratch, TraceSynthRefusesNegativeSlowRanksAndRepeatedRanks) {
    const std::string dir = " " + (dir_ / "synth").string();
    for (const std::string opt : {"--slow-rank -1", "--slow-node -1"}) {
        const CliRun r = run_cli("--quiet trace synth" + dir + " " + opt);
        EXPECT_EQ(r.code, 2) << opt << ": " << r.all();
    }
    const CliRun twice = run_cli("trace synth" + dir + " --rank 1 --rank 1");
    EXPECT_EQ(twice.code, 2) << twice.all();
    EXPECT_TRUE(has(twice.err, "rank 1 given twice")) << twice.err;
    const CliRun once = run_cli("trace synth" + dir + " --rank 1 --rank 2 --slow-rank 0");
    EXPECT_EQ(once.code, 0) << once.all();
    EXPECT_TRUE(has(once.err, "wrote 2 trace(s)")) << once.err;
}

}  // namespace
}  // namespace lostflops::test
