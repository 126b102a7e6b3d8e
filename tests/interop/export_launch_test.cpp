// Issue 37 item 7: `export megatron` writes a script a user can launch and
// that says what is theirs. For the issue's jobs (Llama 3.1 70B on 256 H100
// with the search's pp 4 x vpp 11 plan, Qwen3-30B-A3B on 64 H100 with
// experts) and the examples/ jobs Megatron launches: bash parses the script
// (`bash -n`) and, running it with a stand-in torchrun, passes the words that
// `lostflops import megatron` reads from it; every UPPERCASE placeholder is
// marked `# yours` and every mark is on one; torchrun gets a c10d rendezvous
// on several nodes and --standalone on one; a dense model gets no expert
// flags; the stages take the shortest flags Megatron-LM has; and the import
// gives the plan back.
#include <algorithm>
#include <regex>
#include <sstream>

#include "interop/export_util.h"
#include "interop/megatron_export_stages.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

namespace lostflops::test {
namespace {

// The words bash gives `torchrun` when it runs the script: a stand-in
// function prints them, one per line (none holds a newline).
std::vector<std::string> torchrun_words(const std::string& script) {
    const auto [code, out] = run_on("bash -c 'torchrun() { printf \"%s\\n\" \"$@\"; }; source {}'", script);
    EXPECT_EQ(code, 0) << out;
    std::vector<std::string> words;
    std::istringstream lines(out);
    for (std::string w; std::getline(lines, w);) words.push_back(w);
    return words;
}

std::string quoted_command(const std::vector<std::string>& words) {
    std::string s = "torchrun";
    for (const std::string& w : words) s += " '" + w + "'";
    return s + "\n";
}

// The imported job with the GPU type given back as a user would (`--set
// cluster.preset=...`): the GPU count and node size are the script's.
Job imported(const std::string& script, const Job& like) {
    const ImportResult r = import_megatron(script, "exported.sh");
    return parse_job(r.job_yaml, "round trip", {"cluster.preset=dgx-h100", "cluster.gpu=" + like.cluster.gpu.name});
}

bool has_flag(const std::vector<std::string>& words, const std::string& flag) {
    return std::find(words.begin(), words.end(), flag) != words.end();
}

std::string value_of(const std::vector<std::string>& words, const std::string& flag) {
    const auto it = std::find(words.begin(), words.end(), flag);
    return it == words.end() || it + 1 == words.end() ? "" : *(it + 1);
}

// Everything the script does for `job`, checked; returns torchrun's words.
std::vector<std::string> check_script(const Job& job, const std::string& what) {
    SCOPED_TRACE(what);
    const ExportResult e = export_megatron(job);
    const std::string& s = e.text;
    EXPECT_EQ(s.rfind("#!/bin/bash\n# ", 0), 0u) << s;
    EXPECT_NE(s.find("lostflops's plan"), std::string::npos);
    const std::vector<std::string> marked = check_marks(s);
    for (const char* p : {"DATA", "TOKENIZER", "LR", "CHECKPOINTS"})
        EXPECT_NE(std::find(marked.begin(), marked.end(), p), marked.end()) << p << " not a placeholder";
    if (!have_bash()) return {};
    const auto [code, out] = run_on("bash -n {}", s);
    EXPECT_EQ(code, 0) << out << s;
    const std::vector<std::string> words = torchrun_words(s);
    EXPECT_TRUE(has_flag(words, "pretrain_gpt.py")) << s;
    // The importer reads the script as bash runs it: the same job from bash's words.
    expect_same_plan(imported(quoted_command(words), job), imported(s, job), what + ": bash's words");
    // A note says what Megatron's flags could not carry (a vocabulary tp does not divide): no round trip then.
    if (e.notes.empty()) expect_same_plan(imported(s, job), job, what);
    return words;
}

TEST(ExportLaunch, TheIssuesJobsLaunchAsPrinted) {
    const Job llama = best_for_export(kLlama70, "megatron");
    const std::vector<std::string> w = check_script(llama, "llama 70B best");
    if (w.empty()) GTEST_SKIP() << "bash is not installed";
    // 256 GPUs on nodes of 8: 32 torchrun agents meeting at HOST.
    EXPECT_EQ(value_of(w, "--nnodes"), "32");
    EXPECT_EQ(value_of(w, "--nproc-per-node"), "8");
    EXPECT_EQ(value_of(w, "--rdzv-backend"), "c10d");
    EXPECT_EQ(value_of(w, "--rdzv-endpoint").rfind("HOST:", 0), 0u);
    EXPECT_FALSE(has_flag(w, "--standalone"));
    // A dense model: no expert or MoE flag at all.
    for (const std::string& f : w) EXPECT_TRUE(f.find("expert") == std::string::npos && f.rfind("--moe", 0) != 0) << f;

    const Job qwen = best_for_export(kQwen3, "megatron");
    ASSERT_GT(qwen.plan.ep, 1);
    const std::vector<std::string> q = check_script(qwen, "qwen3 best");
    EXPECT_EQ(value_of(q, "--expert-model-parallel-size"), std::to_string(qwen.plan.ep));
    EXPECT_EQ(value_of(q, "--num-experts"), std::to_string(qwen.model.kind(0).moe.experts));
    EXPECT_TRUE(has_flag(q, "--moe-token-dispatcher-type"));
}

TEST(ExportLaunch, ExamplesLaunchAsPrinted) {
    int checked = 0;
    for (const auto& e : std::filesystem::directory_iterator(source_path("examples"))) {
        if (e.path().extension() != ".yaml") continue;
        Job job;
        try {
            job = load_job(e.path().string());
            export_megatron(job);
        } catch (const InputError& err) {
            // A job without a plan (search examples), or one Megatron cannot run (DualPipe): said by key.
            EXPECT_FALSE(err.key().empty()) << e.path() << ": " << err.what();
            continue;
        }
        check_script(job, e.path().filename().string());
        ++checked;
    }
    EXPECT_GE(checked, 4);
}

TEST(ExportLaunch, OneNodeIsStandaloneAndPartNodesAreRefused) {
    if (!have_bash()) GTEST_SKIP() << "bash is not installed";
    const Job one = load_job(source_path("examples/gpt3-175b-8xa100.yaml"));
    const std::vector<std::string> w = torchrun_words(export_megatron(one).text);
    EXPECT_TRUE(has_flag(w, "--standalone"));
    EXPECT_EQ(value_of(w, "--nproc-per-node"), "8");
    for (const char* f : {"--nnodes", "--rdzv-backend", "--rdzv-endpoint", "--node-rank", "--master-addr"})
        EXPECT_FALSE(has_flag(w, f)) << f;
    // 12 GPUs on nodes of 8: torchrun cannot start 8 on one node and 4 on the other from one script.
    try {
        export_megatron(load_job(source_path("examples/gpt3-175b-8xa100.yaml"),
                                 {"cluster.num_gpus=12", "parallel.tp=4", "training.global_batch_size=12"}));
        FAIL() << "12 GPUs on nodes of 8 exported";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "cluster.num_gpus");
    }
}

// Megatron's own reading of a layout string (pipeline_parallel_layer_layout.py
// parse_str_to_list, from its documented grammar): "(X)*N" groups, then
// "x*N" characters, then '|' between stages; the decoder layers of each.
std::vector<int> megatron_layout_stages(std::string text) {
    for (const std::regex& pattern : {std::regex(R"(\(([^)]+)\)\*(\d+))"), std::regex(R"((.)\*(\d+))")}) {
        std::string out;
        std::smatch m;
        while (std::regex_search(text, m, pattern)) {
            out += m.prefix();
            for (int i = 0; i < std::stoi(m[2]); ++i) out += m[1];
            text = m.suffix();
        }
        text = out + text;
    }
    std::vector<int> stages(1, 0);
    for (char c : text) {
        if (c == '|') stages.push_back(0);
        if (c == 't') ++stages.back();
    }
    return stages;
}

TEST(ExportLaunch, StagesTakeTheShortestFlags) {
    // 126 layers on 16 ranks: the first and the last hold 7, the others 8.
    const Job llama405 = load_job(source_path("examples/llama3.1-405b-16384xh100-goodput.yaml"), {"parallel.vpp=1"});
    std::vector<std::string> model;
    EXPECT_EQ(interop::megatron_stage_flags(llama405, model),
              (std::vector<std::string>{"--decoder-first-pipeline-num-layers 7", "--decoder-last-pipeline-num-layers 7"}));
    check_script(llama405, "405B pp 16");
    // With two chunks a rank's chunks differ (3 + 4 layers): only a layout says it, grouped.
    const Job interleaved = load_job(source_path("examples/llama3.1-405b-16384xh100-goodput.yaml"));
    const std::string layout = interop::megatron_layout_text(interleaved);
    EXPECT_EQ(megatron_layout_stages(layout), stage_layers(interleaved)) << layout;
    EXPECT_LT(std::count(layout.begin(), layout.end(), '|'), interleaved.plan.pp * interleaved.plan.vpp - 1) << layout;
    // The issue's 44 virtual stages of 1 and 2 layers.
    const Job llama70 = best_for_export(kLlama70, "megatron");
    const std::string l70 = interop::megatron_layout_text(llama70);
    EXPECT_EQ(megatron_layout_stages(l70), stage_layers(llama70)) << l70;
    EXPECT_LT(l70.size(), 40u) << l70;  // before: 44 stages spelled out, 177 characters
    // Even chunks: one number; two ranks, the first lighter: only the first's count.
    const Job even = load_job(source_path("examples/llama3-70b-64xmi300x.yaml"), {"parallel.pp=4", "parallel.vpp=2"});
    EXPECT_EQ(interop::megatron_stage_flags(even, model),
              (std::vector<std::string>{"--num-layers-per-virtual-pipeline-stage 10"}));
    const Job two = load_job(source_path("examples/llama3-70b-64xmi300x.yaml"), {"parallel.first_stage_layers=38"});
    EXPECT_EQ(interop::megatron_stage_flags(two, model), (std::vector<std::string>{"--decoder-first-pipeline-num-layers 38"}));
    check_script(two, "first stage 38 of 80 on pp 2");
}

TEST(ExportLaunch, TokenBudgetIsWholeSequencesRoundedUp) {
    const Job job = load_job(source_path("examples/llama3-70b-64xmi300x.yaml"), {"training.train_tokens=1e12"});
    const std::string s = export_megatron(job).text;
    const int64_t samples = (1'000'000'000'000 + 8191) / 8192;  // seq_length 8192
    const size_t at = s.find("--train-samples " + std::to_string(samples) + "  # training.train_tokens is ");
    ASSERT_NE(at, std::string::npos) << s;
    EXPECT_NE(s.find("rounded up", at), std::string::npos);
    const Job none = load_job(source_path("examples/llama3-70b-64xmi300x.yaml"));
    EXPECT_NE(export_megatron(none).text.find("# --train-samples SAMPLES  # yours"), std::string::npos);
}

}  // namespace
}  // namespace lostflops::test
