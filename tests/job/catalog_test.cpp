// Built-in catalogs: every entry parses, peaks are the dense figures, model
// presets have the parameter counts their publications state, cluster presets
// name catalog GPUs, and bad inline GPU specs are refused naming the key.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "job/gpu_parse.h"

namespace lostflops {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Catalog, EveryGpuParsesWithPositiveFigures) {
    const auto names = gpu_names();
    for (const char* required : {"v100-sxm2-32gb", "a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-80gb",
                                 "h100-sxm", "h100-pcie", "h800-sxm", "h200-sxm", "b200", "mi300x", "b300", "gb300",
                                 "mi325x", "mi355x", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu7x"})
        EXPECT_TRUE(contains(names, required)) << required;
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    for (const auto& n : names) {
        const auto g = find_gpu(n);
        ASSERT_TRUE(g) << n;
        EXPECT_EQ(g->name, n);
        // TPUs have no fp16 mode (bf16 only); every other part has both.
        const AcceleratorTraits* arch = find_accelerator(g->arch);
        ASSERT_TRUE(arch) << n;
        if (arch->vendor != Vendor::google) {
            EXPECT_GT(g->peak_fp16_tflops, 0) << n;
        }
        EXPECT_GT(std::max(g->peak_bf16_tflops, g->peak_fp16_tflops), 0) << n;  // V100: fp16 only
        EXPECT_GE(g->memory_bytes, int64_t{16} << 30) << n;
        EXPECT_FALSE(g->source.empty()) << n;
        EXPECT_GT(g->hbm_GBps, 0) << n;
        EXPECT_GT(g->nvlink_GBps, 0) << n;
        EXPECT_GT(g->sm_count, 0) << n;
        EXPECT_GT(g->tdp_w, 0) << n;
        // Where fp8 exists its dense peak is twice the 16-bit one on every
        // generation listed; a sparse figure slipped into one field breaks it.
        if (g->peak_fp8_tflops > 0) {
            EXPECT_NEAR(g->peak_fp8_tflops / g->peak_bf16_tflops, 2.0, 0.01) << n;
        }
        if (g->peak_bf16_tflops > 0 && g->peak_fp16_tflops > 0) {
            EXPECT_DOUBLE_EQ(g->peak_bf16_tflops, g->peak_fp16_tflops) << n;
        }
    }
    EXPECT_FALSE(find_gpu("h100"));
    EXPECT_FALSE(find_gpu(""));
}

TEST(Catalog, PeaksAreDense) {
    const auto h100 = *find_gpu("h100-sxm");
    EXPECT_DOUBLE_EQ(h100.peak_tflops(Precision::bf16), 989.4);
    EXPECT_DOUBLE_EQ(h100.peak_tflops(Precision::fp16), 989.4);
    EXPECT_DOUBLE_EQ(h100.peak_tflops(Precision::fp8), 1978.9);
    EXPECT_DOUBLE_EQ(find_gpu("a100-sxm-80gb")->peak_tflops(Precision::bf16), 312.0);
    EXPECT_EQ(find_gpu("a100-sxm-80gb")->peak_tflops(Precision::fp8), 0.0);
    EXPECT_DOUBLE_EQ(find_gpu("h200-sxm")->peak_tflops(Precision::bf16), 989.4);
    EXPECT_DOUBLE_EQ(find_gpu("b200")->peak_tflops(Precision::bf16), 2250.0);
    EXPECT_DOUBLE_EQ(find_gpu("mi300x")->peak_tflops(Precision::bf16), 1307.4);
    const auto v100 = *find_gpu("v100-sxm2-32gb");
    EXPECT_DOUBLE_EQ(v100.peak_tflops(Precision::fp16), 125.0);
    EXPECT_EQ(v100.peak_tflops(Precision::bf16), 0.0);  // no bf16 tensor cores
    EXPECT_EQ(v100.peak_tflops(Precision::fp8), 0.0);
}

TEST(Catalog, MemoryAndLinksInDocumentedUnits) {
    EXPECT_EQ(find_gpu("h100-sxm")->memory_bytes, int64_t{80} << 30);
    EXPECT_EQ(find_gpu("h200-sxm")->memory_bytes, int64_t{141} << 30);
    EXPECT_DOUBLE_EQ(find_gpu("h100-sxm")->nvlink_GBps, 450.0);  // 900 GB/s bidirectional
    EXPECT_DOUBLE_EQ(find_gpu("h800-sxm")->nvlink_GBps, 200.0);  // 400 GB/s bidirectional
    EXPECT_DOUBLE_EQ(find_gpu("h800-sxm")->peak_bf16_tflops, find_gpu("h100-sxm")->peak_bf16_tflops);
}

// Parameters of a decoder from a preset: embeddings V*h (twice if untied) plus
// per layer attention (q, o: h*h each; k, v: h*kv*d each) and the MLP (2 or 3
// matrices of h*f, times the experts for MoE). Norms and biases are left out.
struct Counts {
    double total = 0, active = 0;
};

Counts count_params(const YAML::Node& m) {
    const double L = m["num_hidden_layers"].as<double>();
    const double h = m["hidden_size"].as<double>();
    const double f = m["intermediate_size"].as<double>();
    const double a = m["num_attention_heads"].as<double>();
    const double kv = m["num_key_value_heads"].as<double>();
    const double V = m["vocab_size"].as<double>();
    const bool tied = m["tie_word_embeddings"].as<bool>();
    const double mats = m["hidden_act"].as<std::string>() == "silu" ? 3 : 2;
    const double experts = m["num_local_experts"] ? m["num_local_experts"].as<double>() : 1;
    const double routed = m["num_experts_per_tok"] ? m["num_experts_per_tok"].as<double>() : 1;
    const double emb = V * h * (tied ? 1 : 2);
    const double attn = 2 * h * h + 2 * h * kv * (h / a);
    const double mlp = mats * h * f;
    return {emb + L * (attn + experts * mlp), emb + L * (attn + routed * mlp)};
}

YAML::Node preset(const std::string& name) {
    const auto text = model_preset_yaml(name);
    if (!text) return YAML::Node();
    return YAML::Load(*text);
}

TEST(Catalog, ModelPresetsHaveTheirPublishedParameterCounts) {
    // Billions of parameters as published (papers / model cards); GPT-3 by its
    // table 2.1 names. The counter above is independent of these figures.
    const std::map<std::string, double> published_b = {
        {"gpt3-125m", 0.125}, {"gpt3-350m", 0.35},   {"gpt3-760m", 0.76},  {"gpt3-1.3b", 1.3},
        {"gpt3-2.7b", 2.7},   {"gpt3-6.7b", 6.7},    {"gpt3-13b", 13.0},   {"gpt3-175b", 174.6},
        {"llama2-7b", 6.74},  {"llama2-13b", 13.0},  {"llama2-70b", 69.0}, {"llama3-8b", 8.03},
        {"llama3-70b", 70.6}, {"llama3.1-8b", 8.03}, {"llama3.1-70b", 70.6},
        {"llama3.1-405b", 405.8}, {"mistral-7b", 7.24}, {"mixtral-8x7b", 46.7},
        {"mixtral-8x22b", 141.0}, {"qwen2.5-7b", 7.61}, {"qwen2.5-72b", 72.7}};
    const auto names = model_names();
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    for (const auto& [name, billions] : published_b) {
        ASSERT_TRUE(contains(names, name)) << name;
        const auto c = count_params(preset(name));
        EXPECT_NEAR(c.total / 1e9, billions, 0.03 * billions) << name;
    }
    // Active parameters of the mixtures (Mixtral paper: 12.9B and 39B active).
    EXPECT_NEAR(count_params(preset("mixtral-8x7b")).active / 1e9, 12.9, 0.3);
    EXPECT_NEAR(count_params(preset("mixtral-8x22b")).active / 1e9, 39.0, 0.8);
    EXPECT_FALSE(model_preset_yaml("llama3-7b"));
}

TEST(Catalog, ModelPresetsAreConsistentAndCarryNoSource) {
    for (const auto& name : model_names()) {
        const YAML::Node m = preset(name);
        ASSERT_TRUE(m.IsMap()) << name;
        EXPECT_FALSE(m["source"]) << name;
        // Presets of current families are their config.json's keys as
        // published (aliases, GeGLU, squared ReLU, MLA): catalog_modern_test.cpp.
        if (m["model_type"]) continue;
        for (const char* k : {"num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                              "num_key_value_heads", "vocab_size", "hidden_act", "tie_word_embeddings"})
            EXPECT_TRUE(m[k]) << name << " lacks " << k;
        const auto h = m["hidden_size"].as<int64_t>();
        const auto a = m["num_attention_heads"].as<int64_t>();
        const auto kv = m["num_key_value_heads"].as<int64_t>();
        EXPECT_EQ(h % a, 0) << name;
        EXPECT_EQ(a % kv, 0) << name;
        const auto act = m["hidden_act"].as<std::string>();
        EXPECT_TRUE(act == "silu" || act == "gelu") << name;
        EXPECT_EQ(static_cast<bool>(m["num_local_experts"]), static_cast<bool>(m["num_experts_per_tok"]))
            << name;
    }
}

TEST(Catalog, ClusterPresetsNameCatalogGpus) {
    const auto names = cluster_names();
    for (const char* required : {"dgx-a100", "dgx-h100", "dgx-b200"})
        EXPECT_TRUE(contains(names, required)) << required;
    for (const auto& name : names) {
        const YAML::Node c = YAML::Load(*cluster_preset_yaml(name));
        EXPECT_FALSE(c["source"]) << name;
        const auto gpu = find_gpu(c["gpu"].as<std::string>());
        ASSERT_TRUE(gpu) << name;
        EXPECT_GT(c["gpus_per_node"].as<int>(), 0) << name;
        const double intra = c["intra_node"]["bandwidth_GBps"].as<double>();
        const double inter = c["inter_node"]["bandwidth_GBps"].as<double>();
        EXPECT_DOUBLE_EQ(intra, gpu->nvlink_GBps) << name;  // the node's fabric is the GPU's
        EXPECT_GT(intra, inter) << name;
        EXPECT_GT(c["intra_node"]["latency_us"].as<double>(), 0) << name;
        EXPECT_GT(c["inter_node"]["latency_us"].as<double>(), 0) << name;
    }
    EXPECT_FALSE(cluster_preset_yaml("dgx-z100"));
}

// ---- inline GPU specs -------------------------------------------------------

const char* kGoodSpec = R"(
arch: hopper
peak_tflops: {fp16: 989.4, bf16: 989.4, fp8: 1978.9}
memory_GiB: 80
hbm_GBps: 3350
nvlink_GBps: 450
sm_count: 132
tdp_w: 700
)";

Gpu parse(const YAML::Node& n) { return parse_gpu_node(n, "job.yaml", "cluster.gpu"); }

// The key an inline spec is refused with, or "" when it parses.
std::string refused_key(const YAML::Node& n) {
    try {
        parse(n);
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), "job.yaml");
        return e.key();
    }
    return "";
}

TEST(GpuParse, InlineSpecMatchesCatalogEntry) {
    const Gpu g = parse(YAML::Load(kGoodSpec));
    const Gpu h = *find_gpu("h100-sxm");
    EXPECT_EQ(g.peak_bf16_tflops, h.peak_bf16_tflops);
    EXPECT_EQ(g.peak_fp8_tflops, h.peak_fp8_tflops);
    EXPECT_EQ(g.memory_bytes, h.memory_bytes);
    EXPECT_EQ(g.sm_count, h.sm_count);
    EXPECT_EQ(g.arch, "hopper");

    YAML::Node gb = YAML::Load(kGoodSpec);
    gb.remove("memory_GiB");
    gb["memory_GB"] = 96;
    gb["name"] = "my-gpu";
    gb["peak_tflops"].remove("fp8");
    const Gpu g2 = parse(gb);
    EXPECT_EQ(g2.memory_bytes, int64_t{96'000'000'000});
    EXPECT_EQ(g2.name, "my-gpu");
    EXPECT_EQ(g2.peak_tflops(Precision::fp8), 0.0);
}

TEST(GpuParse, BadInlineSpecsNameTheKey) {
    auto with = [](const std::string& key, const std::string& value) {
        YAML::Node n = YAML::Load(kGoodSpec);
        n[key] = YAML::Load(value);
        return n;
    };
    auto without = [](const std::string& key) {
        YAML::Node n = YAML::Load(kGoodSpec);
        n.remove(key);
        return n;
    };
    EXPECT_EQ(refused_key(YAML::Load(kGoodSpec)), "");
    EXPECT_EQ(refused_key(with("hbm_GBs", "3350")), "cluster.gpu.hbm_GBs");  // typo: unknown key
    EXPECT_EQ(refused_key(with("hbm_GBps", "-1")), "cluster.gpu.hbm_GBps");
    EXPECT_EQ(refused_key(with("hbm_GBps", "0")), "cluster.gpu.hbm_GBps");
    EXPECT_EQ(refused_key(with("hbm_GBps", "fast")), "cluster.gpu.hbm_GBps");
    EXPECT_EQ(refused_key(with("hbm_GBps", "[1, 2]")), "cluster.gpu.hbm_GBps");
    EXPECT_EQ(refused_key(with("nvlink_GBps", ".nan")), "cluster.gpu.nvlink_GBps");
    EXPECT_EQ(refused_key(with("memory_GiB", "20000")), "cluster.gpu.memory_GiB");   // > 10 TiB
    EXPECT_EQ(refused_key(with("memory_GB", "80")), "cluster.gpu.memory_GB");        // both given
    EXPECT_EQ(refused_key(without("memory_GiB")), "cluster.gpu.memory_GiB");
    EXPECT_EQ(refused_key(with("sm_count", "132.5")), "cluster.gpu.sm_count");
    EXPECT_EQ(refused_key(with("tdp_w", "0")), "cluster.gpu.tdp_w");
    EXPECT_EQ(refused_key(with("arch", "hoper")), "cluster.gpu.arch");
    EXPECT_EQ(refused_key(without("arch")), "cluster.gpu.arch");
    EXPECT_EQ(refused_key(without("peak_tflops")), "cluster.gpu.peak_tflops");
    EXPECT_EQ(refused_key(with("peak_tflops", "989")), "cluster.gpu.peak_tflops");
    EXPECT_EQ(refused_key(with("peak_tflops", "{fp16: 2e6, bf16: 989}")), "cluster.gpu.peak_tflops.fp16");
    EXPECT_EQ(refused_key(with("peak_tflops", "{fp16: 989, bf16: 989, fp4: 4000}")),
              "cluster.gpu.peak_tflops.fp4");
    EXPECT_EQ(refused_key(with("peak_tflops", "{fp16: 0, bf16: 0}")), "cluster.gpu.peak_tflops");
    EXPECT_EQ(refused_key(with("peak_tflops", "{fp16: 989}")), "cluster.gpu.peak_tflops.bf16");
    EXPECT_EQ(refused_key(YAML::Load("h100-sxm")), "cluster.gpu");  // a name is not a spec here
    EXPECT_EQ(refused_key(YAML::Node()), "cluster.gpu");
}

}  // namespace
}  // namespace lostflops
