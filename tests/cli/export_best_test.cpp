// `export KIND --best` exports the best plan under the cost of the stack that
// will run it (issue 37 item 1; lostflops/search_listing.h export_framework):
// torchtitan's is the search with training.framework fsdp, megatron's the
// search with megatron-core for a job that says fsdp; EP where the stack has it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops {
namespace {

std::string write_job(const std::string& name, const std::string& text) {
    const auto p = std::filesystem::temp_directory_path() / ("lostflops-" + name + "-" + std::to_string(getpid()) + ".yaml");
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

// The integer after `key` in text ("key = 4" or "key 4"), -1 when absent.
int value_after(const std::string& text, const std::string& key) {
    const size_t at = text.find(key);
    if (at == std::string::npos) return -1;
    size_t i = at + key.size();
    while (i < text.size() && (text[i] == ' ' || text[i] == '=')) ++i;
    return std::stoi(text.substr(i));
}

nlohmann::json best_of_search(const std::string& job, const std::string& framework) {
    const auto r = test::run_cli("search " + job + " --set training.framework=" + framework + " --top 1 --format json");
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("plans").at(0).at("parallel");
}

const char* kLlama =
    "name: llama70-256\nmodel: {preset: llama3.1-70b}\ncluster: {preset: dgx-h100, num_gpus: 256}\n"
    "training: {seq_length: 8192, global_batch_size: 256, micro_batch_size: 1}\n";
const char* kQwen =
    "name: qwen3-30b-64\nmodel: {preset: qwen3-30b-a3b}\ncluster: {preset: dgx-h100, num_gpus: 64}\n"
    "training: {seq_length: 4096, global_batch_size: 512, micro_batch_size: 1}\n";

TEST(ExportBest, TorchtitanIsTheBestPlanUnderFsdp) {
    for (const char* text : {kLlama, kQwen}) {
        const std::string job = write_job("export-best", text);
        const nlohmann::json best = best_of_search(job, "fsdp");
        const auto r = test::run_cli("export torchtitan " + job + " --best");
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_NE(r.err.find("priced under training.framework fsdp (the job says megatron-core)"), std::string::npos) << r.err;
        EXPECT_EQ(value_after(r.out, "tensor_parallel_degree"), best.at("tp").get<int>()) << r.out;
        EXPECT_EQ(value_after(r.out, "context_parallel_degree"), best.at("cp").get<int>()) << r.out;
        EXPECT_EQ(value_after(r.out, "pipeline_parallel_degree"), best.at("pp").get<int>()) << r.out;
        const int ep = best.at("ep").get<int>();
        EXPECT_EQ(value_after(r.out, "expert_parallel_degree"), ep > 1 ? ep : -1) << r.out;
        std::filesystem::remove(job);
    }
}

TEST(ExportBest, MegatronOfAnFsdpJobIsTheBestPlanUnderMegatronCore) {
    const std::string plain = write_job("export-best-mc", kQwen);
    const nlohmann::json best = best_of_search(plain, "megatron-core");
    const auto r = test::run_cli("export megatron " + plain + " --best --set training.framework=fsdp");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("priced under training.framework megatron-core (the job says fsdp)"), std::string::npos) << r.err;
    EXPECT_EQ(value_after(r.out, "--tensor-model-parallel-size"), best.at("tp").get<int>()) << r.out;
    EXPECT_EQ(value_after(r.out, "--pipeline-model-parallel-size"), best.at("pp").get<int>()) << r.out;
    EXPECT_EQ(value_after(r.out, "--expert-model-parallel-size"), best.at("ep").get<int>()) << r.out;
    std::filesystem::remove(plain);
}

}  // namespace
}  // namespace lostflops

namespace lostflops {
namespace {

// The DeepSeek-V3 example runs DualPipe, which Megatron-Core does not launch:
// --best searches without that schedule and says so, instead of refusing
// (it refused: "no plan with it can be launched"); the plan it exports or
// costs runs the 1F1B family.
TEST(ExportBest, BestSearchesWithoutWhatTheStackCannotRun) {
    const std::string job = test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml");
    const auto g = test::run_cli("goodput --best " + job);
    ASSERT_EQ(g.code, 0) << g.err;
    EXPECT_NE(g.err.find("--best searched without parallel.pipeline_schedule: cannot launch in megatron-core"),
              std::string::npos) << g.err;
    const auto m = test::run_cli("export megatron --best " + job);
    ASSERT_EQ(m.code, 0) << m.err;
    EXPECT_EQ(m.out.find("dualpipe"), std::string::npos) << m.out;
    // `search` itself keeps the job's settings and names the rule.
    const auto s = test::run_cli("search " + job + " --top 1");
    EXPECT_EQ(s.code, 2) << s.err;
    EXPECT_NE(s.err.find("no plan with it can be launched"), std::string::npos) << s.err;
}

// The DeepSeek-V3 example under torchtitan: its MTP module is not in
// torchtitan's deepseek_v3 671B flavour, so --best searches, prices and
// exports the flavour (said on stderr), the best plan of the same search with
// the module dropped by hand, DeepEP written as torchtitan's backend.
TEST(ExportBest, TorchtitanOfTheDeepSeekExampleIsItsFlavour) {
    const std::string job = test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml");
    const auto r = test::run_cli("export torchtitan --best " + job);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("no multi-token prediction module (model.num_nextn_predict_layers: 0); searched and priced so"),
              std::string::npos) << r.err;
    EXPECT_NE(r.err.find("training.optimizer adam-bf16-moments is torch's AdamW (fp32 state) in torchtitan"),
              std::string::npos) << r.err;
    EXPECT_NE(r.out.find("flavor = \"671B\""), std::string::npos) << r.out;
    const auto s = test::run_cli("search " + job +
                                 " --set model.num_nextn_predict_layers=0 --set parallel.pipeline_layout=null"
                                 " --set parallel.pipeline_schedule=null --set parallel.zero=null --set parallel.recompute_modules=null"
                                 " --set training.optimizer=adam"
                                 " --set training.framework=fsdp --top 1 --format json");
    ASSERT_EQ(s.code, 0) << s.err;
    const nlohmann::json best = nlohmann::json::parse(s.out).at("plans").at(0).at("parallel");
    EXPECT_EQ(value_after(r.out, "pipeline_parallel_degree"), best.at("pp").get<int>()) << r.out;
    EXPECT_EQ(value_after(r.out, "expert_parallel_degree"), best.at("ep").get<int>()) << r.out;
    EXPECT_NE(r.out.find("expert_parallel_comm_backend = \"deepep\""), std::string::npos) << r.out;
    // Read back, the backend is the job's dispatcher.
    const std::string toml = write_job("export-best-dsv3", r.out);
    const auto back = test::run_cli("import torchtitan " + toml);
    ASSERT_EQ(back.code, 0) << back.err;
    EXPECT_NE(back.out.find("moe_dispatcher: deepep"), std::string::npos) << back.out;
    std::filesystem::remove(toml);
}

}  // namespace
}  // namespace lostflops
