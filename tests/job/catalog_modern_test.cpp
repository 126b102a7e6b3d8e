// The presets of current families in data/catalog/models.yaml (DeepSeek-V3,
// Qwen3 dense and MoE, Llama 4, gpt-oss, Gemma 3, Nemotron-H): each preset's
// total and active (per token) parameter counts against the figure its
// publisher states, cited per row below, under that publisher's convention
// (which embeddings a figure includes). A figure matches when the count lies
// within half a unit of its last printed digit (a rounded figure: "37B" is
// 36.5-37.5 B) or within `tolerance` of it. Where the shared real
// config.json files (../shared/realworld/hf/) are present, each preset also
// gives exactly the counts of its model's own config.json.
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "test_util.h"
#include "workload/flops.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

struct Published {
    double value;      // parameters
    double unit;       // of the last printed digit
};

struct PresetRow {
    const char* preset;
    Published total;
    Published active;
    bool active_without_embedding;  // the active figure leaves out the input embedding (a lookup)
    double tolerance;               // relative, beside the rounding
    const char* config;             // ../shared/realworld/hf/ file of the same model, or nullptr
    const char* source;             // where the figures are published
};

constexpr double B = 1e9;

// Each figure as published (the rounding is the figure's own).
const PresetRow kRows[] = {
    {"deepseek-v3", {671 * B, 1 * B}, {37 * B, 1 * B}, true, 0.01, "deepseek-v3-0324.json",
     "DeepSeek-V3 Technical Report (arXiv 2412.19437) abstract: 671B total, 37B activated per token "
     "(main model; the MTP module's 14B is counted apart); activated leaves out the input embedding"},
    {"qwen3-32b", {32.8 * B, 0.1 * B}, {32.8 * B, 0.1 * B}, false, 0.01, "qwen3-32b.json",
     "Qwen/Qwen3-32B model card: Number of Parameters 32.8B"},
    {"qwen3-8b", {8.2 * B, 0.1 * B}, {8.2 * B, 0.1 * B}, false, 0.01, "qwen3-8b.json",
     "Qwen/Qwen3-8B model card: Number of Parameters 8.2B"},
    {"qwen3-30b-a3b", {30.5 * B, 0.1 * B}, {3.3 * B, 0.1 * B}, false, 0.02, "qwen3-30b-a3b.json",
     "Qwen/Qwen3-30B-A3B model card: 30.5B in total and 3.3B activated (3.35 B: the card truncates)"},
    {"qwen3-235b-a22b", {235 * B, 1 * B}, {22 * B, 1 * B}, false, 0.01, "qwen3-235b-a22b.json",
     "Qwen/Qwen3-235B-A22B model card and Qwen3 Technical Report (arXiv 2505.09388): 235B total, 22B activated"},
    // The card's total is the multimodal checkpoint's (vision encoder
    // included); the preset is the text model, 1.1 % below it.
    {"llama4-scout", {109 * B, 1 * B}, {17 * B, 1 * B}, false, 0.02, "llama-4-scout-17b-16e-instruct-trimmed.json",
     "meta-llama/llama-models models/llama4/MODEL_CARD.md: Llama 4 Scout 17B activated, 109B total"},
    {"llama4-maverick", {400 * B, 1 * B}, {17 * B, 1 * B}, false, 0.01, "llama-4-maverick-17b-128e-instruct-trimmed.json",
     "meta-llama/llama-models models/llama4/MODEL_CARD.md: Llama 4 Maverick 17B activated, 400B total"},
    {"gpt-oss-20b", {20.91 * B, 0.01 * B}, {3.61 * B, 0.01 * B}, true, 0.01, "gpt-oss-20b.json",
     "gpt-oss model card (arXiv 2508.10925) table 1: 20.91B total, 3.61B active (unembedding counted, embedding not)"},
    {"gpt-oss-120b", {116.83 * B, 0.01 * B}, {5.13 * B, 0.01 * B}, true, 0.01, "gpt-oss-120b.json",
     "gpt-oss model card (arXiv 2508.10925) table 1: 116.83B total, 5.13B active (unembedding counted, embedding not)"},
    {"gemma3-27b", {27 * B, 1 * B}, {27 * B, 1 * B}, false, 0.01, nullptr,
     "google/gemma-3-27b-pt model card and Gemma 3 Technical Report (arXiv 2503.19786): 27B (text model; the "
     "417M vision encoder is apart)"},
    // Published as the nominal "8B"; the preset counts 8.10 B.
    {"nemotron-h-8b", {8 * B, 1 * B}, {8 * B, 1 * B}, false, 0.02, nullptr,
     "Nemotron-H paper (arXiv 2504.03624) and nvidia/Nemotron-H-8B-Base-8K card: 8B, dense"},
    {"nemotron-h-56b", {56 * B, 1 * B}, {56 * B, 1 * B}, false, 0.01, "nemotron-h-56b-base-8k.json",
     "Nemotron-H paper (arXiv 2504.03624) and nvidia/Nemotron-H-56B-Base-8K card: 56B, dense"},
};

bool matches(double ours, const Published& p, double tolerance) {
    return std::abs(ours - p.value) <= p.unit / 2 || std::abs(ours / p.value - 1) <= tolerance;
}

Job job_of(const std::string& model) {
    return parse_job("model: " + model + "\n"
                     "cluster: {gpu: h100-sxm, num_gpus: 8}\n"
                     "training: {seq_length: 4096, global_batch_size: 64}\nparallel: {pp: 1}\n",
                     "job.yaml");
}

TEST(CatalogModern, PresetsHaveTheirPublishedParameterCounts) {
    for (const PresetRow& r : kRows) {
        SCOPED_TRACE(std::string(r.preset) + " (" + r.source + ")");
        Job j;
        ASSERT_NO_THROW(j = job_of(std::string("{preset: ") + r.preset + "}"));
        // A preset is made of keys lostflops models: nothing is warned.
        EXPECT_TRUE(!j.model.not_modelled || j.model.not_modelled->empty());
        const ParamCount p = count_params(j.model);
        const double active = p.active - (r.active_without_embedding ? p.embedding : 0);
        EXPECT_TRUE(matches(p.total, r.total, r.tolerance)) << "total " << p.total << " vs " << r.total.value;
        EXPECT_TRUE(matches(active, r.active, r.tolerance)) << "active " << active << " vs " << r.active.value;
    }
}

TEST(CatalogModern, MoePresetsAreSparseAndDensePresetsAreNot) {
    for (const PresetRow& r : kRows) {
        SCOPED_TRACE(r.preset);
        const ParamCount p = count_params(job_of(std::string("{preset: ") + r.preset + "}").model);
        if (r.total.value == r.active.value)
            EXPECT_DOUBLE_EQ(p.active, p.total);
        else
            EXPECT_LT(p.active, 0.25 * p.total);
    }
    // DeepSeek-V3's multi-token-prediction module is counted apart. The
    // deepseek-ai/DeepSeek-V3 README: the Hugging Face checkpoint is 685B,
    // "671B of the Main Model weights and 14B of the Multi-Token Prediction
    // (MTP) Module weights"; the checkpoint stores the module with its own
    // copies of the embedding and output head, which training shares.
    const ParamCount v3 = count_params(job_of("{preset: deepseek-v3}").model);
    EXPECT_TRUE(matches(v3.total + v3.mtp + v3.embedding + v3.output, {685 * B, 1 * B}, 0.01))
        << v3.total + v3.mtp + v3.embedding + v3.output;
}

TEST(CatalogModern, PresetsGiveTheCountsOfTheirOwnConfigJson) {
    const fs::path dir = test::source_path("../shared/realworld/hf");
    if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent (the shared folder of real inputs)";
    for (const PresetRow& r : kRows) {
        if (r.config == nullptr) continue;
        SCOPED_TRACE(r.preset);
        const ParamCount preset = count_params(job_of(std::string("{preset: ") + r.preset + "}").model);
        const ParamCount config = count_params(job_of("{hf_config: " + (dir / r.config).string() + "}").model);
        EXPECT_DOUBLE_EQ(preset.total, config.total);
        EXPECT_DOUBLE_EQ(preset.active, config.active);
        EXPECT_DOUBLE_EQ(preset.mtp, config.mtp);
    }
}

}  // namespace
}  // namespace lostflops
