// The model section: every key read, ignored with a reason or noted as not
// modelled (src/job/model_keys.h); the layer kinds the families' rules give;
// the fixtures of tests/data/job/models against their published counts.
#include <set>
#include <string_view>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "job/model_keys.h"
#include "test_util.h"
#include "workload/flops.h"

namespace lostflops {
namespace {

Job fixture(const std::string& name, const std::vector<std::string>& set = {}) {
    return load_job(test::source_path("tests/data/job/models/" + name + ".yaml"), set);
}

// Within half a unit of the published figure's last digit below and one unit
// above (a rounded or truncated figure), or 0.5 %.
void expect_published(double ours, double published, double unit, const std::string& what) {
    const double lo = std::min(published - unit / 2, published * 0.995);
    const double hi = std::max(published + unit, published * 1.005);
    EXPECT_TRUE(ours >= lo && ours < hi) << what << ": " << ours << " outside [" << lo << ", " << hi << ")";
}

TEST(ModelKeys, TableHasEachKeyOnce) {
    std::set<std::string_view> seen;
    for (const auto& row : kModelKeys) {
        EXPECT_TRUE(seen.insert(row.key).second) << row.key;
        EXPECT_NE(std::string_view(row.note), "") << row.key;
    }
}

TEST(ModelFixtures, DeepSeekV3) {
    // 671 B total, 37 B activated (technical report abstract); MTP apart.
    const Job j = fixture("deepseek-v3");
    const ParamCount p = count_params(j.model);
    expect_published(p.total, 671e9, 1e9, "total");
    expect_published(p.active, 37e9, 1e9, "active");
    EXPECT_EQ(j.model.mtp_layers, 1);
    EXPECT_GT(p.mtp, 11e9);  // one MoE layer (~11.5 B) and its projection; 685 B - 671 B = 14 B with its own embedding copy
    ASSERT_EQ(j.model.kinds().size(), 2u);
    EXPECT_EQ(j.model.kind_count(0), 3);   // first_k_dense_replace
    EXPECT_EQ(j.model.kind_count(1), 58);
    EXPECT_EQ(j.model.kind(1).moe.shared_ffn, 2048);
    EXPECT_TRUE(j.model.kind(1).moe.score_bias);
}

TEST(ModelFixtures, Gemma2NonEmbeddingCountIsExact) {
    // Gemma 2 report table 2: 8,324,201,984 non-embedding parameters.
    const Job j = fixture("gemma-2-9b");
    const ParamCount p = count_params(j.model);
    EXPECT_DOUBLE_EQ(p.total - p.embedding, 8'324'201'984.0);
    // Local and global layers alternate, the first one local.
    for (int i = 0; i < j.model.layers; ++i) EXPECT_EQ(j.model.layer(i).attention.window, i % 2 == 0 ? 4096 : 0) << i;
    EXPECT_EQ(j.model.layer(0).mlp.kind, MlpKind::gated);
    EXPECT_EQ(j.model.layer(0).mlp.act, Activation::gelu_tanh);
}

TEST(ModelFixtures, NemotronH8B) {
    const Job j = fixture("nemotron-h-8b");
    expect_published(count_params(j.model).total, 8e9, 1e9, "total");  // "8B"
    int mamba = 0, attn = 0, mlp = 0;
    for (int i = 0; i < j.model.layers; ++i) {
        const LayerKind& k = j.model.layer(i);
        mamba += k.mixer == MixerKind::mamba2;
        attn += k.mixer == MixerKind::attention;
        mlp += k.mixer == MixerKind::none && k.mlp.kind == MlpKind::dense;
    }
    EXPECT_EQ(mamba, 24);  // paper table 1
    EXPECT_EQ(attn, 4);
    EXPECT_EQ(mlp, 24);
}

TEST(ModelFixtures, Qwen3Next) {
    // Model card: 80 B total, 3 B activated, 79 B without embeddings.
    const Job j = fixture("qwen3-next-80b-a3b");
    const ParamCount p = count_params(j.model);
    expect_published(p.total, 80e9, 10e9, "total");
    expect_published(p.total - p.embedding - p.output, 79e9, 1e9, "non-embedding");
    expect_published(p.active, 3e9, 1e9, "active");
    int linear = 0;
    for (int i = 0; i < j.model.layers; ++i) linear += j.model.layer(i).mixer == MixerKind::gated_deltanet;
    EXPECT_EQ(linear, 36);
}

TEST(ModelFixtures, GptOss20B) {
    // Model card table 1: 20.91 B total, 3.61 B active (the unembedding
    // counted, the embedding not).
    const Job j = fixture("gpt-oss-20b");
    const ParamCount p = count_params(j.model);
    expect_published(p.total, 20.91e9, 0.01e9, "total");
    expect_published(p.active - p.embedding, 3.61e9, 0.01e9, "active");
    EXPECT_TRUE(j.model.kind(0).attention.sinks);
    EXPECT_TRUE(j.model.kind(0).moe.expert.bias);
}

TEST(ModelKeys, SetHeadDimTakesEffect) {
    const Job base = parse_job(test::small_job_text(), "job.yaml");
    const Job set = parse_job(test::small_job_text(), "job.yaml", {"model.head_dim=256"});
    EXPECT_EQ(test::attention_of(base.model).head_dim, 2048 / 16);
    EXPECT_EQ(test::attention_of(set.model).head_dim, 256);
    EXPECT_GT(count_params(set.model).total, count_params(base.model).total);
}

TEST(ModelKeys, ConfigKeysNotModelledAreNotedAndUnknownOnesToo) {
    const Job j = load_job(test::source_path("tests/data/job/hf_softcap_job.yaml"));
    ASSERT_TRUE(j.model.not_modelled);
    std::set<std::string> keys;
    for (const auto& n : *j.model.not_modelled) keys.insert(n.key);
    EXPECT_EQ(keys, (std::set<std::string>{"attn_logit_softcapping", "final_logit_softcapping", "a_key_from_the_future"}));
    // The same unknown key written in the job's own model section is an error.
    try {
        parse_job(test::small_job_text(), "job.yaml", {"model.a_key_from_the_future=7"});
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "model.a_key_from_the_future");
    }
}

TEST(ModelKeys, BadShapesNameTheirKey) {
    const auto key_of = [](const std::vector<std::string>& set) {
        try {
            parse_job(test::small_job_text(), "job.yaml", set);
        } catch (const InputError& e) {
            return e.key();
        }
        return std::string("accepted");
    };
    // Two names of one key that disagree.
    EXPECT_EQ(key_of({"model.n_head=8"}), "model.n_head");
    // One pattern character per layer (24 layers).
    EXPECT_EQ(key_of({"model.hybrid_override_pattern=M*-"}), "model.hybrid_override_pattern");
    EXPECT_EQ(key_of({"model.layer_types=[full_attention]"}), "model.layer_types");
    EXPECT_EQ(key_of({"model.hidden_act=tanh"}), "model.hidden_act");
    // MLA needs its head dims.
    EXPECT_EQ(key_of({"model.kv_lora_rank=512"}), "model.kv_lora_rank");
    EXPECT_EQ(key_of({"model.num_local_experts=8"}), "model.num_experts_per_tok");
}

TEST(ModelKeys, ExistingJobsKeepTheirShape) {
    // A GPT-style hand-written model: two-matrix GELU MLP, tied embeddings,
    // head_dim hidden / heads, RMS-style norms: the uniform stack the cost
    // model had before layer kinds.
    const Job j = parse_job(test::small_job_text(), "job.yaml");
    ASSERT_TRUE(j.model.uniform());
    const LayerKind& k = j.model.kind(0);
    EXPECT_EQ(k.mixer, MixerKind::attention);
    EXPECT_EQ(k.mlp.kind, MlpKind::dense);
    EXPECT_EQ(k.mlp.ffn, 4 * 2048);
    EXPECT_EQ(k.norms, 2);
    EXPECT_FALSE(k.attention.qkv_bias);
    EXPECT_TRUE(j.model.tied_embeddings);
    EXPECT_FALSE(j.model.not_modelled);
}

}  // namespace
}  // namespace lostflops
