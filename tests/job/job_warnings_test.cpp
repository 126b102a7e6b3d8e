// job_warnings: each setting that does nothing or costs much under the plan is
// named with its key and the job's numbers; a plain plan gets none.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

// The warnings of the small job with `overrides`.
std::vector<JobWarning> warnings_of(const std::vector<std::string>& overrides) {
    return job_warnings(parse_job(test::small_job_text(), "job.yaml", overrides));
}

// The message of the warning about `key`, or "" when there is none.
std::string warning(const std::vector<JobWarning>& all, const std::string& key) {
    for (const auto& w : all)
        if (w.key == key) return w.message;
    return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(JobWarnings, PlainPlanHasNone) {
    const auto w = warnings_of({});
    EXPECT_TRUE(w.empty()) << w.front().key << ": " << w.front().message;
}

TEST(JobWarnings, ExpertKeysOnADenseModelAreNamed) {
    // The small job is dense: each expert key given is named, none dropped in silence.
    const auto w = warnings_of({"parallel.moe_imbalance=1.5", "parallel.moe_capacity_factor=1.25",
                                "parallel.moe_pad_to_capacity=true", "parallel.moe_a2a_overlap=true",
                                "parallel.moe_dispatcher=allgather"});
    for (const char* key : {"parallel.moe_imbalance", "parallel.moe_capacity_factor", "parallel.moe_pad_to_capacity",
                            "parallel.moe_a2a_overlap", "parallel.moe_dispatcher"})
        EXPECT_TRUE(has(warning(w, key), "no mixture-of-experts")) << key;
    // Padding said false needs no capacity factor.
    EXPECT_TRUE(warnings_of({"parallel.moe_pad_to_capacity=false"}).empty());
}

TEST(JobWarnings, ZeroWithOneDataParallelRank) {
    const auto w = warnings_of({"cluster.num_gpus=4", "parallel.zero=1"});  // tp 2 x pp 2: dp 1
    EXPECT_TRUE(has(warning(w, "parallel.zero"), "does nothing")) << warning(w, "parallel.zero");
    EXPECT_EQ(warning(warnings_of({"parallel.zero=1"}), "parallel.zero"), "");  // dp 4
}

TEST(JobWarnings, TensorParallelGroupAcrossNodes) {
    const auto w = warnings_of({"parallel.tp=16", "cluster.num_gpus=32"});
    const std::string m = warning(w, "parallel.tp");
    EXPECT_TRUE(has(m, "16") && has(m, "8") && has(m, "2 nodes")) << m;
    // tp 16 on one node of 16 GPUs stays inside it.
    EXPECT_EQ(warning(warnings_of({"parallel.tp=16", "parallel.pp=1", "cluster.gpus_per_node=16"}), "parallel.tp"), "");
}

TEST(JobWarnings, ContextParallelRingAcrossNodes) {
    const auto w = warnings_of({"parallel.tp=8", "parallel.cp=2", "parallel.pp=1"});
    EXPECT_TRUE(has(warning(w, "parallel.cp"), "8 x 2 = 16")) << warning(w, "parallel.cp");
}

TEST(JobWarnings, SequenceParallelAndTpOverlapWithoutTp) {
    const auto w = warnings_of({"parallel.tp=1", "parallel.sequence_parallel=true", "parallel.tp_comm_overlap=true"});
    EXPECT_TRUE(has(warning(w, "parallel.sequence_parallel"), "tp = 1"));
    EXPECT_TRUE(has(warning(w, "parallel.tp_comm_overlap"), "tp = 1"));
}

TEST(JobWarnings, UnevenPipelineStages) {
    const auto w = warnings_of({"model.num_hidden_layers=25"});  // 13 and 12 layers on pp 2
    const std::string m = warning(w, "parallel.pp");
    EXPECT_TRUE(has(m, "25") && has(m, "13") && has(m, "12")) << m;
    // 24 layers over pp 2 x vpp 5 = 10 virtual stages: 4 of 3 layers, 6 of 2,
    // the light ones at both ends (stages 0-2 and 7-9): rank 0 holds stages
    // 0 2 4 6 8 = 2+2+3+3+2 = 12 layers, rank 1 stages 1 3 5 7 9 = 2+3+3+2+2 =
    // 12: no rank idles in the steady state, so no warning.
    EXPECT_EQ(warning(warnings_of({"parallel.vpp=5"}), "parallel.vpp"), "");
    // 25 layers: light stages 0-2 and 8-9; rank 0 holds 2+2+3+3+2 = 12, rank 1
    // 2+3+3+3+2 = 13: the emptiest idles 1/13 = 8 % of the steady state.
    const std::string v = warning(warnings_of({"parallel.vpp=5", "model.num_hidden_layers=25"}), "parallel.vpp");
    EXPECT_TRUE(has(v, "10 stages") && has(v, "ranks hold 12 to 13 layers") && has(v, "about 8 %")) << v;
    // 80 layers over pp 4 x vpp 11 = 44 stages (36 of 2, 8 of 1): 20 on every rank.
    EXPECT_EQ(warning(warnings_of({"model.num_hidden_layers=80", "parallel.vpp=11", "parallel.pp=4", "parallel.tp=1",
                                   "model.num_attention_heads=16"}),
                      "parallel.vpp"),
              "");
}

TEST(JobWarnings, FewerMicroBatchesThanStages) {
    const auto w = warnings_of({"training.global_batch_size=8"});  // 8 / (dp 4 x 2) = 1 micro-batch, pp 2
    EXPECT_TRUE(has(warning(w, "training.global_batch_size"), "step (1)")) << warning(w, "training.global_batch_size");
}

TEST(JobWarnings, RecomputeOfNoLayers) {
    const auto w = warnings_of({"parallel.recompute=full", "parallel.recompute_layers=0"});
    EXPECT_TRUE(has(warning(w, "parallel.recompute_layers"), "does nothing"));
}

TEST(JobWarnings, DeepSpeedPipelineWithZeroTwo) {
    const auto w = warnings_of({"training.framework=deepspeed", "parallel.zero=2"});
    EXPECT_TRUE(has(warning(w, "parallel.zero"), "DeepSpeed")) << warning(w, "parallel.zero");
}

TEST(JobWarnings, CompileOnAMegatronStack) {
    const auto w = warnings_of({"training.framework=megatron-core", "training.compile=true"});
    EXPECT_TRUE(has(warning(w, "training.compile"), "fused already")) << warning(w, "training.compile");
    EXPECT_EQ(warning(warnings_of({"training.framework=fsdp", "training.compile=true"}), "training.compile"), "");
}

// A TPU job launches under MaxText, whose pipeline takes no schedule by
// name: a schedule beyond the 1F1B family is named, priced as given.
TEST(JobWarnings, NamedScheduleOnATpuJob) {
    std::ifstream in(test::source_path("data/published/maxtext/runs/maxtext-llama2-70b-v5p-128.yaml"));
    std::stringstream text;
    text << in.rdbuf();
    const auto tpu = [&](const std::string& schedule) {
        return job_warnings(parse_job(text.str(), "tpu.yaml",
                                      {"parallel.pp=2", "parallel.vpp=2", "parallel.pipeline_schedule=" + schedule}));
    };
    const std::string w = warning(tpu("zbv"), "parallel.pipeline_schedule");
    EXPECT_TRUE(has(w, "MaxText") && has(w, "zbv")) << w;
    EXPECT_EQ(warning(tpu("interleaved"), "parallel.pipeline_schedule"), "");
    // On GPUs torchtitan runs it: no such warning.
    EXPECT_EQ(warning(warnings_of({"cluster.num_gpus=32", "parallel.pp=2", "parallel.vpp=2", "training.framework=fsdp",
                                   "parallel.pipeline_schedule=zbv"}),
                      "parallel.pipeline_schedule"),
              "");
}

TEST(JobWarnings, TrainTokensAreUsedByTheRunModel) {
    const auto w = warnings_of({"training.train_tokens=1e12"});
    EXPECT_EQ(warning(w, "training.train_tokens"), "");  // the whole-run model uses it (run_cost.h)
    EXPECT_TRUE(job_warnings(default_job()).empty());  // the default job sets nothing in vain
}

// A Llama-3.2-1B config.json inline (its model_type, as the Hub file has it)
// on one H200, its stack not said.
std::string hf_model_job(const std::string& extra_top = "") {
    return extra_top + R"(model:
  model_type: llama
  hidden_size: 2048
  intermediate_size: 8192
  num_hidden_layers: 16
  num_attention_heads: 32
  num_key_value_heads: 8
  vocab_size: 128256
  hidden_act: silu
  tie_word_embeddings: true
cluster: {gpu: h200-sxm, num_gpus: 1}
training: {seq_length: 2048, global_batch_size: 8, micro_batch_size: 8}
parallel: {}
)";
}

TEST(JobWarnings, StackGuessedForAHuggingFaceModelOnOneNode) {
    const auto with = [](const std::string& text, const std::vector<std::string>& sets = {}) {
        const Job job = parse_job(text, "hf.yaml", sets);
        return std::make_pair(job.training.framework, warning(job_warnings(job), "training.framework"));
    };
    // Not said: Megatron-Core is taken, and the warning names it and hf.
    const auto [fw, m] = with(hf_model_job());
    EXPECT_EQ(fw, Framework::megatron_core);
    EXPECT_TRUE(has(m, "not given") && has(m, "megatron-core") && has(m, "framework=hf") && has(m, "one node")) << m;
    // Said, or named by the job's source: no warning.
    EXPECT_EQ(with(hf_model_job(), {"training.framework=hf"}).second, "");
    EXPECT_EQ(with(hf_model_job(), {"training.framework=megatron-core"}).second, "");
    EXPECT_EQ(with(hf_model_job("source: torchtitan Llama 3 recipe\n")).second, "");
    // Over two nodes (a Megatron-Bridge or torchtitan run more likely): none.
    EXPECT_EQ(with(hf_model_job(), {"cluster.num_gpus=16", "cluster.gpus_per_node=8",
                                    "cluster.inter_node={bandwidth_GBps: 50, latency_us: 5}",
                                    "training.global_batch_size=128"})
                  .second,
              "");
    // Where hf would refuse the job (fp8; an SSM or MLA model; tensor parallelism), none.
    EXPECT_EQ(with(hf_model_job(), {"training.precision=fp8"}).second, "");
    // An unfused fallback (a source dated 2021: Megatron-LM's legacy stack) is named as such.
    const auto [legacy_fw, legacy] = with(hf_model_job("source: a 2021 paper\n"));
    EXPECT_EQ(legacy_fw, Framework::megatron_lm);
    EXPECT_TRUE(has(legacy, "megatron-lm") && has(legacy, "unfused")) << legacy;
    // A model not read from a Hugging Face config (the small job's hand-written keys): none.
    EXPECT_EQ(warning(warnings_of({"cluster.num_gpus=8", "parallel.pp=1"}), "training.framework"), "");
}

TEST(JobWarnings, Fp8RecipeItsStackDoesNotRun) {
    // torchao removed delayed scaling (v0.10); Transformer Engine has no
    // per-row recipe. Each priced as asked, and said.
    const auto ao = warnings_of({"cluster.gpu=h100-sxm", "training.precision=fp8", "training.framework=fsdp", "training.fp8_recipe=delayed"});
    EXPECT_TRUE(has(warning(ao, "training.fp8_recipe"), "torchao")) << warning(ao, "training.fp8_recipe");
    const auto te = warnings_of({"cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_recipe=rowwise"});
    EXPECT_TRUE(has(warning(te, "training.fp8_recipe"), "no rowwise recipe")) << warning(te, "training.fp8_recipe");
    // blockwise is no recipe of torchtitan's converters.
    const auto block = warnings_of({"cluster.gpu=h100-sxm", "training.precision=fp8", "training.framework=fsdp",
                                    "training.fp8_recipe=blockwise"});
    EXPECT_TRUE(has(warning(block, "training.fp8_recipe"), "tensorwise, rowwise, mxfp8"))
        << warning(block, "training.fp8_recipe");
    // Each stack's own recipes, and auto, say nothing.
    EXPECT_EQ(warning(warnings_of({"cluster.gpu=h100-sxm", "training.precision=fp8", "training.fp8_recipe=tensorwise"}), "training.fp8_recipe"),
              "");
    EXPECT_EQ(warning(warnings_of({"cluster.gpu=h100-sxm", "training.precision=fp8", "training.framework=fsdp"}), "training.fp8_recipe"), "");
}

}  // namespace
}  // namespace lostflops
