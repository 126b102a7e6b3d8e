// Megatron's flags for layers of several kinds (src/interop/megatron_layers.cpp):
// launch flags written for these tests from the published shapes of
// DeepSeek-V3 (arXiv 2412.19437 sec. 4.2), Nemotron-H 8B (arXiv 2504.03624
// table 1) and gpt-oss-20b (arXiv 2508.10925 table 1), as Megatron-LM's
// examples give them (examples/megatron_fsdp, examples/mamba, examples/
// gptoss), give the same layers and parameter counts as the same models in
// config.json keys (tests/data/job/models/*.yaml). What Megatron's flags
// cannot say (the family's biases, sinks and routing bias) is left to the
// parameter tolerance.
#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

Job imported(const std::string& flags, const std::string& fixture) {
    ImportOptions o;
    o.num_gpus = 8;
    const ImportResult r = import_megatron(flags, "flags", o);
    const Job ref = load_job(source_path("tests/data/job/models/" + fixture));
    return parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100", "cluster.num_gpus=" + std::to_string(ref.cluster.num_gpus)});
}

void expect_same_layers(const Job& a, const Job& b, double params_tolerance) {
    ASSERT_EQ(a.model.layers, b.model.layers);
    EXPECT_EQ(a.model.hidden, b.model.hidden);
    EXPECT_EQ(a.model.vocab, b.model.vocab);
    EXPECT_EQ(a.model.mtp_layers, b.model.mtp_layers);
    for (int i = 0; i < a.model.layers; ++i) {
        SCOPED_TRACE("layer " + std::to_string(i));
        const LayerKind& x = a.model.layer(i);
        const LayerKind& y = b.model.layer(i);
        EXPECT_EQ(x.mixer, y.mixer);
        EXPECT_EQ(x.attention.heads, y.attention.heads);
        EXPECT_EQ(x.attention.kv_heads, y.attention.kv_heads);
        EXPECT_EQ(x.attention.head_dim, y.attention.head_dim);
        EXPECT_EQ(x.attention.v_head_dim, y.attention.v_head_dim);
        EXPECT_EQ(x.attention.q_lora_rank, y.attention.q_lora_rank);
        EXPECT_EQ(x.attention.kv_lora_rank, y.attention.kv_lora_rank);
        EXPECT_EQ(x.attention.window, y.attention.window);
        EXPECT_EQ(x.linear.heads, y.linear.heads);
        EXPECT_EQ(x.linear.head_dim, y.linear.head_dim);
        EXPECT_EQ(x.linear.state_dim, y.linear.state_dim);
        EXPECT_EQ(x.mlp.kind, y.mlp.kind);
        EXPECT_EQ(x.mlp.ffn, y.mlp.ffn);
        EXPECT_EQ(x.moe.experts, y.moe.experts);
        EXPECT_EQ(x.moe.top_k, y.moe.top_k);
        EXPECT_EQ(x.moe.expert.ffn, y.moe.expert.ffn);
        EXPECT_EQ(x.moe.shared_ffn, y.moe.shared_ffn);
    }
    const Calibration cal = default_calibration();
    const Estimate ea = estimate(a, cal), eb = estimate(b, cal);
    EXPECT_NEAR(ea.params_total, eb.params_total, params_tolerance * eb.params_total);
    EXPECT_NEAR(ea.params_active, eb.params_active, params_tolerance * eb.params_active);
}

TEST(MegatronLayers, DeepSeekV3FromItsFlags) {
    const Job j = imported(
        "torchrun pretrain_gpt.py --num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 "
        "--kv-channels 128 --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
        "--qk-pos-emb-head-dim 64 --v-head-dim 128 --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 "
        "--moe-shared-expert-intermediate-size 2048 --moe-layer-freq [0]*3+[1]*58 --mtp-num-layers 1 "
        "--swiglu --untie-embeddings-and-output-weights --padded-vocab-size 129280 --seq-length 4096 "
        "--micro-batch-size 1 --global-batch-size 512 --bf16 --pipeline-model-parallel-size 16 "
        "--expert-model-parallel-size 16",
        "deepseek-v3.yaml");
    expect_same_layers(j, load_job(source_path("tests/data/job/models/deepseek-v3.yaml")), 0.001);
}

TEST(MegatronLayers, NemotronHFromItsFlags) {
    const Job j = imported(
        "torchrun --nproc_per_node 8 pretrain_hybrid.py --hybrid-layer-pattern "
        "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M- --hidden-size 4096 --ffn-hidden-size 21504 "
        "--num-attention-heads 32 --group-query-attention --num-query-groups 8 --kv-channels 128 --squared-relu "
        "--mamba-num-heads 128 --mamba-head-dim 64 --mamba-num-groups 8 --mamba-state-dim 128 "
        "--untie-embeddings-and-output-weights --vocab-size 131072 --seq-length 8192 --micro-batch-size 1 "
        "--global-batch-size 64 --bf16 --tensor-model-parallel-size 2",
        "nemotron-h-8b.yaml");
    expect_same_layers(j, load_job(source_path("tests/data/job/models/nemotron-h-8b.yaml")), 0.001);
}

TEST(MegatronLayers, GptOssFromItsFlags) {
    const Job j = imported(
        "torchrun pretrain_gpt.py --num-layers 24 --hidden-size 2880 --ffn-hidden-size 2880 --num-attention-heads 64 "
        "--group-query-attention --num-query-groups 8 --kv-channels 64 --num-experts 32 --moe-router-topk 4 "
        "--moe-ffn-hidden-size 2880 --window-size 127,0 --window-attn-skip-freq 2 --softmax-type learnable "
        "--quick-geglu --untie-embeddings-and-output-weights --padded-vocab-size 201088 --seq-length 4096 "
        "--micro-batch-size 1 --global-batch-size 64 --bf16 --expert-model-parallel-size 8",
        "gpt-oss-20b.yaml");
    // The family's attention biases and sinks are not in Megatron's flags (--add-qkv-bias covers QKV only).
    expect_same_layers(j, load_job(source_path("tests/data/job/models/gpt-oss-20b.yaml")), 0.002);
}

// export megatron writes the layers back: export, import, the same layers.
// Qwen3-Next's gated attention and shared-expert gate go out as
// --attention-output-gate and --moe-shared-expert-gate, which the job file
// has no key for yet: the import says so, and they are the difference in
// parameters (a second query-sized projection per attention layer).
TEST(MegatronLayers, ExportWritesTheLayersBack) {
    for (const char* name : {"deepseek-v3.yaml", "nemotron-h-8b.yaml", "gpt-oss-20b.yaml", "qwen3-next-80b-a3b.yaml"}) {
        SCOPED_TRACE(name);
        const bool qwen = std::string(name).rfind("qwen3-next", 0) == 0;
        const Job job = load_job(source_path(std::string("tests/data/job/models/") + name));
        const ExportResult e = export_megatron(job);
        for (const auto& n : e.notes) ADD_FAILURE() << n.setting << ": " << n.message;
        const ImportResult r = import_megatron(e.text, std::string(name) + " (exported)");
        int gates = 0;
        for (const auto& n : r.notes)
            gates += n.setting == "--attention-output-gate" || n.setting == "--moe-shared-expert-gate";
        EXPECT_EQ(gates, qwen ? 2 : 0);
        const Job back = parse_job(r.job_yaml, "round trip", {"cluster.preset=dgx-h100", "cluster.num_gpus=" +
                                                                                             std::to_string(job.cluster.num_gpus)});
        expect_same_layers(back, job, qwen ? 0.03 : 0.003);
    }
}

TEST(MegatronLayers, PatternsAsMegatronEvaluatesThem) {
    ImportOptions o;
    o.num_gpus = 8;
    const std::string base = "--num-layers 12 --hidden-size 512 --num-attention-heads 8 --seq-length 128 "
                             "--micro-batch-size 1 --global-batch-size 8 --vocab-size 1024 --bf16 --num-experts 8 ";
    const auto moe_layers = [&](const std::string& freq) {
        const Job j = parse_job(import_megatron(base + "--moe-layer-freq " + freq, "f", o).job_yaml, "i",
                                {"cluster.preset=dgx-h100"});
        int n = 0;
        for (int i = 0; i < j.model.layers; ++i) n += j.model.layer(i).is_moe();
        return n;
    };
    EXPECT_EQ(moe_layers("1"), 12);
    EXPECT_EQ(moe_layers("3"), 4);                      // layers 0, 3, 6, 9
    EXPECT_EQ(moe_layers("'([1]*3+[0]*1)*3'"), 9);
    EXPECT_EQ(moe_layers("[0]+[1]*11"), 11);
    EXPECT_THROW(moe_layers("[0]*3+[1]*8"), InputError);  // 11 entries for 12 layers
    EXPECT_THROW(moe_layers("__import__"), InputError);   // nothing but lists, numbers, +, * and ()
    EXPECT_THROW(import_megatron(base + "--hybrid-layer-pattern M*G-", "f", o), InputError);
}

}  // namespace
}  // namespace lostflops::test
