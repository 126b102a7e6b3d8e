// Job loading: valid files parse to the expected values, presets and
// overrides apply, and every class of bad input is an InputError naming the
// file and the key.
#include <cctype>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

using test::parse_error;
using test::small_job_text;

TEST(Job, SmallJobParsesAndDerivesDp) {
    const Job j = parse_job(small_job_text(), "job.yaml");
    EXPECT_EQ(j.model.layers, 24);
    EXPECT_EQ(test::mlp_of(j.model).ffn, 4 * 2048);     // default 4 x hidden
    EXPECT_EQ(test::attention_of(j.model).kv_heads, 16);      // default = heads
    EXPECT_EQ(j.plan.dp, 4);              // 16 / (2 * 2)
    EXPECT_EQ(j.plan.micro_batches(j.training), 8);
    EXPECT_EQ(j.cluster.gpu.name, "a100-sxm-80gb");
}

TEST(Job, DefaultJobIsLlama3On1024H100) {
    const Job j = default_job();
    EXPECT_EQ(j.cluster.num_gpus, 1024);
    EXPECT_EQ(j.model.layers, 80);
    EXPECT_EQ(test::attention_of(j.model).kv_heads, 8);
    EXPECT_EQ(test::mlp_of(j.model).kind, MlpKind::gated);
}

TEST(Job, OverridesApplyWithTypes) {
    const Job j = parse_job(small_job_text(), "job.yaml", {"parallel.tp=4", "parallel.sequence_parallel=true",
                                                            "cluster.inter_node.bandwidth_GBps=50"});
    EXPECT_EQ(j.plan.tp, 4);
    EXPECT_TRUE(j.plan.sequence_parallel);
    EXPECT_DOUBLE_EQ(j.cluster.inter_node.bandwidth_GBps, 50);
    EXPECT_EQ(j.plan.dp, 2);
}

// A cluster preset's link given in part keeps the preset's other figure:
// `--set cluster.inter_node.latency_us=10` over dgx-h100 was refused as
// "cluster.inter_node.bandwidth_GBps: missing" (found by the hunt helper).
TEST(Job, ClusterPresetLinkGivenInPart) {
    const Job preset = default_job();
    const Job j = default_job({"cluster.inter_node.latency_us=10", "cluster.intra_node={bandwidth_GBps: 300}"});
    EXPECT_DOUBLE_EQ(j.cluster.inter_node.latency_us, 10);
    EXPECT_DOUBLE_EQ(j.cluster.inter_node.bandwidth_GBps, preset.cluster.inter_node.bandwidth_GBps);
    EXPECT_DOUBLE_EQ(j.cluster.intra_node.bandwidth_GBps, 300);
    EXPECT_DOUBLE_EQ(j.cluster.intra_node.latency_us, preset.cluster.intra_node.latency_us);
    EXPECT_NE(preset.cluster.inter_node.latency_us, 10);
    // The merged link is still read whole: an unknown key in it is refused.
    EXPECT_THROW(default_job({"cluster.inter_node.latency=10"}), InputError);
}

TEST(Job, ModelPresetUnderUserKeys) {
    const Job j = parse_job(small_job_text(), "job.yaml",
                            {"model={preset: llama2-7b, num_hidden_layers: 4}", "parallel.tp=1", "parallel.pp=1"});
    EXPECT_EQ(j.model.layers, 4);
    EXPECT_EQ(j.model.hidden, 4096);
}

TEST(Job, ReferenceRunsAllLoad) {
    for (const char* name : {"narayanan21-t1-gpt-1008b", "korthikanti22-t5-gpt-175b-selective",
                             "megatron24-h100-gpt-462b", "torchtitan24-a100-llama3-70b-full"}) {
        const Job j = load_job(test::source_path(std::string("data/published/runs/") + name + ".json"));
        EXPECT_GT(j.plan.dp, 0) << name;
    }
}

struct BadCase {
    const char* what;
    std::vector<std::string> overrides;  // applied to the small job
    const char* key;                      // must appear in the message
};
// What gtest prints for a case (ctest lists it by this, not by raw bytes).
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.what; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, IsAnInputErrorNamingFileAndKey) {
    const BadCase& c = GetParam();
    const std::string msg = parse_error(small_job_text(), c.overrides);
    ASSERT_FALSE(msg.empty()) << c.what << ": parsed without error";
    // Every case's bad value comes from a --set: the error names it (issue 7),
    // or the file when the key the error is about is the file's.
    bool named = msg.find("job.yaml") != std::string::npos;
    for (const auto& o : c.overrides) named = named || msg.find("--set " + o) != std::string::npos;
    EXPECT_TRUE(named) << msg;
    EXPECT_NE(msg.find(c.key), std::string::npos) << c.what << ": " << msg;
}

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) {
    std::string n;
    for (const char* c = info.param.what; *c; ++c) n += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
    return n;
}

INSTANTIATE_TEST_SUITE_P(
    Classes, BadInput,
    ::testing::Values(
        BadCase{"unknown gpu", {"cluster.gpu=h100-sxm9"}, "cluster.gpu"},
        BadCase{"unknown model preset", {"model.preset=gpt-5"}, "model.preset"},
        BadCase{"unknown cluster preset", {"cluster.preset=dgx-z"}, "cluster.preset"},
        BadCase{"unknown recompute", {"parallel.recompute=some"}, "parallel.recompute"},
        BadCase{"unknown precision", {"training.precision=fp4"}, "training.precision"},
        BadCase{"unknown key", {"parallel.tensor_parallel=2"}, "parallel.tensor_parallel"},
        BadCase{"wrong type string", {"parallel.tp=eight"}, "parallel.tp"},
        BadCase{"wrong type list", {"parallel.tp=[1, 2]"}, "parallel.tp"},
        BadCase{"wrong type fraction", {"training.seq_length=2048.5"}, "training.seq_length"},
        BadCase{"wrong type bool", {"parallel.sequence_parallel=maybe"}, "parallel.sequence_parallel"},
        BadCase{"negative", {"model.hidden_size=-2048"}, "model.hidden_size"},
        BadCase{"zero", {"training.global_batch_size=0"}, "training.global_batch_size"},
        BadCase{"absurd", {"cluster.num_gpus=1e12"}, "cluster.num_gpus"},
        BadCase{"absurd bandwidth", {"cluster.inter_node.bandwidth_GBps=1e30"}, "bandwidth_GBps"},
        BadCase{"heads by tp", {"parallel.tp=3", "cluster.num_gpus=6"}, "parallel.tp"},
        BadCase{"gpus by tp*pp*cp", {"cluster.gpus_per_node=4", "cluster.num_gpus=12", "parallel.pp=4"}, "tp*pp*cp"},
        BadCase{"batch by dp*mb", {"training.global_batch_size=60"}, "training.global_batch_size"},
        BadCase{"dp disagrees", {"parallel.dp=3"}, "parallel.dp"},
        BadCase{"layers below pp*vpp", {"parallel.pp=2", "parallel.vpp=13"}, "parallel.pp"},
        BadCase{"zero stage", {"parallel.zero=4"}, "parallel.zero"},
        BadCase{"ep on dense", {"parallel.ep=2"}, "parallel.ep"},
        BadCase{"fp8 on A100", {"training.precision=fp8"}, "training.precision"},
        BadCase{"unschedulable batch", {"training.global_batch_size=1000000000", "training.micro_batch_size=1"},
                "training.global_batch_size"},
        BadCase{"fp8 without bf16", {"training.precision=fp8",
                                     "cluster.gpu={arch: hopper, peak_tflops: {fp16: 100, bf16: 0, fp8: 200}, memory_GB: 80, hbm_GBps: 3000, nvlink_GBps: 400, sm_count: 132, tdp_w: 700}"},
                "bf16"},
        BadCase{"moe ffn by tp", {"model={preset: mixtral-8x7b, moe_intermediate_size: 1001}", "parallel.tp=2"}, "parallel.tp"},
        BadCase{"sp seq by tp", {"parallel.sequence_parallel=true", "training.seq_length=2047"}, "sequence_parallel"},
        BadCase{"pad without capacity", {"model={preset: mixtral-8x7b}", "parallel.ep=2", "parallel.moe_pad_to_capacity=true"},
                "parallel.moe_pad_to_capacity"},
        BadCase{"pad on deepep", {"model={preset: mixtral-8x7b}", "parallel.ep=2", "parallel.moe_dispatcher=deepep",
                                  "parallel.moe_capacity_factor=1", "parallel.moe_pad_to_capacity=true"},
                "parallel.moe_pad_to_capacity"},
        BadCase{"pad past every token", {"model={preset: mixtral-8x7b}", "parallel.ep=2", "parallel.moe_capacity_factor=4.5",
                                         "parallel.moe_pad_to_capacity=true"},
                "parallel.moe_capacity_factor"},
        BadCase{"inline gpu bad key", {"cluster.gpu={arch: ampere, peak_tflops: {bf16: 100}, bogus: 1}"}, "cluster.gpu"}),
    case_name);

TEST(Job, MissingSections) {
    for (const char* section : {"model", "cluster", "training", "parallel"}) {
        std::string text = small_job_text();
        // Remove the section by renaming it to an unknown top-level key.
        const auto pos = text.find(std::string(section) + ":\n");
        ASSERT_NE(pos, std::string::npos);
        text.replace(pos, std::string(section).size(), std::string("x_") + section);
        const std::string msg = parse_error(text);
        EXPECT_NE(msg.find(section), std::string::npos) << msg;
    }
}

TEST(Job, UnparseableYamlNamesTheLine) {
    const std::string msg = parse_error("model:\n  num_hidden_layers: [1, 2\ncluster: {");
    EXPECT_NE(msg.find("job.yaml"), std::string::npos);
    EXPECT_NE(msg.find("line"), std::string::npos) << msg;
}

TEST(Job, EmptyAndBinaryFiles) {
    EXPECT_NE(parse_error("").find("empty"), std::string::npos);
    EXPECT_NE(parse_error("  \n\n").find("white space"), std::string::npos);
    EXPECT_NE(parse_error(std::string("model:\0\x01\x02", 9)).find("binary"), std::string::npos);
    EXPECT_NE(parse_error("model: \xff\xfe\n").find("binary"), std::string::npos);
    EXPECT_FALSE(parse_error("- a\n- b\n").empty());  // a list, not a mapping
    EXPECT_FALSE(parse_error("42").empty());
}

TEST(Job, DeepNestingIsAnErrorNotACrash) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_FALSE(parse_error(deep).empty());
}

TEST(Job, MissingFile) {
    try {
        load_job("/nonexistent/job.yaml");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/job.yaml"), std::string::npos);
    }
}

TEST(Job, BadOverrideSyntax) {
    EXPECT_FALSE(parse_error(small_job_text(), {"parallel.tp"}).empty());
    EXPECT_FALSE(parse_error(small_job_text(), {"tp=2"}).empty());  // unknown top-level key
    EXPECT_FALSE(parse_error(small_job_text(), {"=2"}).empty());
    EXPECT_FALSE(parse_error(small_job_text(), {"parallel..tp=2"}).empty());
}

}  // namespace
}  // namespace lostflops

namespace lostflops {
namespace {

TEST(Job, HfConfigRelativeToTheJobFile) {
    const Job j = load_job(test::source_path("tests/data/job/hf_job.yaml"));
    EXPECT_EQ(j.model.layers, 22);
    EXPECT_EQ(test::attention_of(j.model).kv_heads, 4);
    EXPECT_EQ(test::mlp_of(j.model).ffn, 5632);
    EXPECT_EQ(test::mlp_of(j.model).kind, MlpKind::gated);
    EXPECT_FALSE(j.model.tied_embeddings);
    EXPECT_EQ(j.plan.dp, 8);
    EXPECT_EQ(j.name, "hf_job");
}

TEST(Job, AttentionAutoFollowsTheSourceDate) {
    EXPECT_EQ(default_attention("Narayanan et al. 2021, SC21, Table 1"), AttentionKernel::unfused);
    EXPECT_EQ(default_attention("Korthikanti et al. 2022, Table 5"), AttentionKernel::unfused);
    EXPECT_EQ(default_attention("torchtitan docs/performance.md (Oct 2024)"), AttentionKernel::flash);
    EXPECT_EQ(default_attention(""), AttentionKernel::flash);
    EXPECT_EQ(default_attention("run 12345 on cluster 7"), AttentionKernel::flash);
    const Job j = parse_job("source: 'Narayanan et al. 2021'\n" + test::small_job_text(), "job.yaml");
    EXPECT_EQ(j.training.attention, AttentionKernel::unfused);
    const Job k = parse_job("source: 'Narayanan et al. 2021'\n" + test::small_job_text(), "job.yaml",
                            {"training.attention=flash"});
    EXPECT_EQ(k.training.attention, AttentionKernel::flash);
}

}  // namespace
}  // namespace lostflops
