// training.attention under framework hf is from_pretrained's
// attn_implementation (hf_attention.h hf_attention_keeps_scores): `unfused` keeps the
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
#include "lostflops/hf_attention.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "workload/eager_ledger.h"
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
const char* kGptOss = R"("model_type": "gpt_oss", "hidden_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 64, "vocab_size": 1000,
    "intermediate_size": 256, "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"])";

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
    // In a bf16 model (FSDP2) GPT-J's .to(float32) makes the first matmul
    // write fp32 scores: 4, / scale_attn 4 + 4, + the bf16 mask 4 + 2 + 4,
    // softmax 4 + 4, .to 4 + 2, the second matmul's read 2: 38.
    Job gptj_fsdp2 = hf_job(kGptj, "gptj_fsdp2", "auto");
    gptj_fsdp2.plan.zero = 3;
    EXPECT_DOUBLE_EQ(chain(gptj_fsdp2), (4 + 8 + 10 + 8 + 6 + 2) * elems);
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

// gpt-oss has no SDPA path (transformers: _supports_sdpa False, SDPA takes
// no sinks): its own eager attention with the sinks runs unless a flash
// kernel (corrected to kernels-community/vllm-flash-attn3) or flex is named.
TEST(HfAttention, GptOssRunsItsEagerAttentionWithSinksUnlessToldAFlashKernel) {
    const Job own = hf_job(kGptOss, "oss_auto", "auto");
    EXPECT_TRUE(hf_attention_keeps_scores(own.model, own.training));
    EXPECT_FALSE(hf_sdpa_attention(own.model, own.training));
    // Between the matmuls: 52 bytes a score element (model_families.h), and
    // five kernels beyond a fused softmax's two (scale, mask, cat, max, subtract).
    const double elems = 4.0 * 1024 * 1024;
    EXPECT_DOUBLE_EQ(layer_work(own.model, own.training, own.plan).mem_bytes_attention_fwd, 52 * elems);
    EXPECT_EQ(own.model.hf_eager_chain.kernels, 5);
    // Saved per score element: the fp32 softmax output and its bf16 cast
    // under autocast (6 bytes); in a bf16 model (FSDP2) the bf16 softmax
    // output alone (2): 4 heads x 1,024 keys a token.
    const auto scores = [](const Job& j) {
        const EagerLayerLedger l = eager_layer_ledger(j.model, j.model.kind(0), j.training, j.plan);
        for (int i = 0; i < l.count; ++i)
            if (std::string(l.entries[static_cast<size_t>(i)].what).rfind("attention scores", 0) == 0)
                return l.entries[static_cast<size_t>(i)].bytes_per_token;
        return 0.0;
    };
    EXPECT_DOUBLE_EQ(scores(own), 6.0 * 4 * 1024);
    Job fsdp2 = hf_job(kGptOss, "oss_fsdp2", "auto");
    fsdp2.plan.zero = 3;
    EXPECT_DOUBLE_EQ(scores(fsdp2), 2.0 * 4 * 1024);
    // The chain in that bf16 model: the matmul's scores (2), * scaling
    // (2 + 2), + the bf16 mask (2 + 2 + 2), cat (2 + 2), max (2), subtract
    // (2 + 2), softmax in bf16 (2 + 2), the second matmul's read (2): 28.
    EXPECT_DOUBLE_EQ(layer_work(fsdp2.model, fsdp2.training, fsdp2.plan).mem_bytes_attention_fwd,
                     (2 + 4 + 6 + 4 + 2 + 4 + 4 + 2) * elems);
    // eager_attention_forward's in a bf16 model: 2 + 4 + 6 + softmax reading
    // bf16 and writing fp32 (2 + 4) + .to (4 + 2) + 2 = 26.
    Job llama_fsdp2 = hf_job(kLlama, "llama_fsdp2_unfused", "unfused");
    llama_fsdp2.plan.zero = 3;
    EXPECT_DOUBLE_EQ(layer_work(llama_fsdp2.model, llama_fsdp2.training, llama_fsdp2.plan).mem_bytes_attention_fwd,
                     (2 + 4 + 6 + 6 + 6 + 2) * elems);
    // sdpa is refused by transformers: said, the eager attention priced.
    const Job sdpa = hf_job(std::string(kGptOss) + R"(, "attn_implementation": "sdpa")", "oss_sdpa", "auto");
    EXPECT_TRUE(hf_attention_keeps_scores(sdpa.model, sdpa.training));
    bool said = false;
    for (const auto& n : *sdpa.model.not_modelled) said = said || has(n.why, "no such attention");
    EXPECT_TRUE(said);
    // A flash kernel named in the config, or training.attention: flash, is
    // fused; the kernel takes the window itself.
    for (const char* name : {"flash_attention_2", "kernels-community/vllm-flash-attn3", "flex_attention"}) {
        const Job k = hf_job(std::string(kGptOss) + R"(, "attn_implementation": ")" + name + "\"", "oss_k", "auto");
        EXPECT_FALSE(hf_attention_keeps_scores(k.model, k.training)) << name;
        EXPECT_TRUE(k.model.hf_kernel_windows) << name;
    }
    const Job flash = hf_job(kGptOss, "oss_flash", "flash");
    EXPECT_FALSE(hf_attention_keeps_scores(flash.model, flash.training));
    EXPECT_TRUE(has(warning(flash, "training.attention"), "vllm-flash-attn3")) << warning(flash, "training.attention");
    // In fp32 the flash kernel cannot run: the eager attention stays, and is said.
    const Job fp32 = hf_job(kGptOss, "oss_fp32", "flash", ", precision: fp32");
    EXPECT_TRUE(hf_attention_keeps_scores(fp32.model, fp32.training));
    EXPECT_TRUE(has(warning(fp32, "training.attention"), "vllm-flash-attn3")) << warning(fp32, "training.attention");
}

}  // namespace
}  // namespace lostflops
