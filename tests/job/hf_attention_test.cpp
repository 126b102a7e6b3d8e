// training.attention under framework hf is from_pretrained's
// attn_implementation (spec.h hf_attention_keeps_scores): `unfused` keeps the
// scores in memory (eager), `flash` runs a fused kernel where transformers
// has one for the model (not BLOOM), over the family's or the config's own
// attention; `auto` leaves the model's. Checked on the estimate: the ledger's
// scores (6 bytes per score element under autocast, docs/memory.md), the
// kernels line and the warning.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

// A two-layer model of `config` (JSON keys) on one H100 under framework hf,
// 1,024 tokens, with `attention` (auto, flash, unfused) and `extra` keys of
// the training section.
Job hf_job(const std::string& config, const std::string& name, const std::string& attention,
           const std::string& extra = "") {
    const fs::path p = fs::temp_directory_path() / ("lostflops_hf_attention_" + name + ".json");
    std::ofstream(p) << "{" << config << "}";
    return parse_job("model: {hf_config: " + p.string() +
                         "}\ncluster: {gpu: h100-sxm, num_gpus: 1}\n"
                         "training: {seq_length: 1024, global_batch_size: 1, framework: hf, attention: " +
                         attention + extra + "}\nparallel: {}\n",
                     name + ".yaml");
}

std::string warning(const Job& job, const std::string& key) {
    for (const auto& w : job_warnings(job))
        if (w.key == key) return w.message;
    return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* kLlama = R"("model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000, "intermediate_size": 688)";
const char* kGptj = R"("model_type": "gptj", "n_embd": 256, "n_layer": 2, "n_head": 4, "vocab_size": 1000)";
const char* kBloom = R"("model_type": "bloom", "hidden_size": 256, "n_layer": 2, "n_head": 4, "vocab_size": 1000)";

TEST(HfAttention, UnfusedIsEagerOnAnSdpaModel) {
    const Calibration cal = default_calibration();
    const Job sdpa = hf_job(kLlama, "llama_auto", "auto");
    const Job eager = hf_job(kLlama, "llama_unfused", "unfused");
    EXPECT_FALSE(hf_attention_keeps_scores(sdpa.model, sdpa.training));
    EXPECT_TRUE(hf_attention_keeps_scores(eager.model, eager.training));
    // The scores kept: softmax's fp32 output and the bf16 probabilities, 6
    // bytes per score element (4 heads x 1,024 keys per token, 1,024 tokens,
    // 2 layers), less SDPA's log-sum-exp (4 fp32 a token and head) and plus
    // the matmuls' repeated key and value where SDPA keeps key and value
    // (the same under MHA: 2 q + 2 o against q + 2 kv + o). At least the
    // scores' bytes; their share is most of the difference.
    const double scores_bytes = 6.0 * 4 * 1024 * 1024 * 2;
    const double more = estimate(eager, cal).memory.activations_bytes - estimate(sdpa, cal).memory.activations_bytes;
    EXPECT_GT(more, 0.95 * scores_bytes) << more;
    EXPECT_LT(more, 1.05 * scores_bytes) << more;
    EXPECT_GT(estimate(eager, cal).step_time_s, estimate(sdpa, cal).step_time_s);
    EXPECT_EQ(warning(eager, "training.attention"), "");  // eager exists for every model: nothing to say
    EXPECT_TRUE(has(estimate_table(eager, estimate(eager, cal)), "eager (scores in memory) attention"));
}

TEST(HfAttention, FlashClearsAFamilysEagerAttentionWhereItHasAFusedOne) {
    const Calibration cal = default_calibration();
    const Job own = hf_job(kGptj, "gptj_auto", "auto");
    const Job flash = hf_job(kGptj, "gptj_flash", "flash");
    EXPECT_TRUE(hf_attention_keeps_scores(own.model, own.training));
    EXPECT_FALSE(hf_attention_keeps_scores(flash.model, flash.training));
    EXPECT_LT(estimate(flash, cal).memory.activations_bytes, estimate(own, cal).memory.activations_bytes);
    EXPECT_LT(estimate(flash, cal).step_time_s, estimate(own, cal).step_time_s);
    EXPECT_TRUE(has(warning(flash, "training.attention"), "fused kernel")) << warning(flash, "training.attention");
    EXPECT_EQ(warning(own, "training.attention"), "");
    // BLOOM has none: flash is said and its eager attention kept.
    const Job bloom = hf_job(kBloom, "bloom_flash", "flash");
    EXPECT_TRUE(hf_attention_keeps_scores(bloom.model, bloom.training));
    const std::string said = warning(bloom, "training.attention");
    EXPECT_TRUE(has(said, "no fused attention")) << said;
    EXPECT_DOUBLE_EQ(estimate(bloom, cal).step_time_s, estimate(hf_job(kBloom, "bloom_auto", "auto"), cal).step_time_s);
}

TEST(HfAttention, EagerChainBytesAreTheFamilys) {
    // Between the two matmuls, bytes per score element forward (1 x 4 heads
    // x 1,024 x 1,024 a layer): transformers' eager_attention_forward and
    // GPT-J's _attn 32, BLOOM's baddbmm chain 40 (model_families.h).
    const double elems = 4.0 * 1024 * 1024;
    const auto chain = [](const Job& j) { return layer_work(j.model, j.training, j.plan).mem_bytes_attention_fwd; };
    EXPECT_DOUBLE_EQ(chain(hf_job(kLlama, "llama_chain", "unfused")), 32 * elems);
    EXPECT_DOUBLE_EQ(chain(hf_job(kGptj, "gptj_chain", "auto")), 32 * elems);
    EXPECT_DOUBLE_EQ(chain(hf_job(kBloom, "bloom_chain", "auto")), 40 * elems);
    // Four kernels between the matmuls (scale, mask, softmax, cast), two
    // beyond a fused softmax's; BLOOM five, three beyond.
    EXPECT_EQ(hf_job(kGptj, "gptj_k", "auto").model.hf_eager_chain.kernels, 2);
    EXPECT_EQ(hf_job(kBloom, "bloom_k", "auto").model.hf_eager_chain.kernels, 3);
}

TEST(HfAttention, AutoIsTheModelsWhateverTheSourcesDate) {
    // attention: auto picks the unfused softmax for sources dated before
    // 2023 (Megatron-LM's); under hf the model decides: SDPA here.
    const Job old = parse_job(std::string("source: a 2021 recipe\n") +
                                  "model: {preset: llama3-8b}\ncluster: {gpu: h100-sxm, num_gpus: 1}\n"
                                  "training: {seq_length: 1024, global_batch_size: 1, framework: hf}\nparallel: {}\n",
                              "old.yaml");
    EXPECT_EQ(old.training.attention, AttentionKernel::flash);
    EXPECT_FALSE(hf_attention_keeps_scores(old.model, old.training));
}

TEST(HfAttention, FlashNeedsSixteenBitInputsWhereItIsFlashAttention2) {
    // GPT-J's one fused path is flash_attention_2 (bf16/fp16 only): in fp32
    // its eager attention stays, and is said; an SDPA model's fp32 SDPA runs.
    const Job gptj = hf_job(kGptj, "gptj_fp32", "flash", ", precision: fp32");
    EXPECT_TRUE(hf_attention_keeps_scores(gptj.model, gptj.training));
    EXPECT_TRUE(has(warning(gptj, "training.attention"), "fp32")) << warning(gptj, "training.attention");
    const Job llama = hf_job(kLlama, "llama_fp32", "flash", ", precision: fp32");
    EXPECT_FALSE(hf_attention_keeps_scores(llama.model, llama.training));
}

TEST(HfAttention, CompiledKeepsTheFirstMatmulsScoresOnlyWhereEager) {
    // Under torch.compile the partitioner keeps the first matmul's bf16
    // scores (2 bytes a score element) where the attention is eager.
    const Calibration cal = default_calibration();
    const double own = estimate(hf_job(kGptj, "gptj_c", "auto", ", compile: true"), cal).memory.activations_bytes;
    const double fused = estimate(hf_job(kGptj, "gptj_cf", "flash", ", compile: true"), cal).memory.activations_bytes;
    EXPECT_NEAR(own - fused, 2.0 * 4 * 1024 * 1024 * 2, 0.05 * 2.0 * 4 * 1024 * 1024 * 2);
}

TEST(HfAttention, OtherFrameworksKeepNoScores) {
    Job j = hf_job(kGptj, "gptj_fsdp", "auto");
    j.training.framework = Framework::fsdp;
    EXPECT_FALSE(hf_attention_keeps_scores(j.model, j.training));
}

}  // namespace
}  // namespace lostflops
