// The real config.json files of ../shared/realworld/hf/ (30 current models)
// against the published total and active parameter counts of its
// params.csv. Skipped, saying so, when the folder is absent. Each
// publication's counting convention is its own (params.csv cites it): which
// embeddings an "active" or "total" figure includes is set per model below,
// with the reason; a published figure matches when the count lies within
// half a unit of its last significant digit below and one unit above (a
// rounded or truncated figure; trailing zeros of a whole number are not
// significant: "40B" is 35-50 B), or within 0.5 %.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "test_util.h"
#include "workload/flops.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

struct Figure {
    double value = 0;
    double unit = 1;  // of the last significant digit
};

Figure parse_figure(std::string s) {
    double scale = 1;
    if (!s.empty() && (s.back() == 'B' || s.back() == 'T')) {
        scale = s.back() == 'B' ? 1e9 : 1e12;
        s.pop_back();
    }
    Figure f;
    f.value = std::stod(s) * scale;
    const auto dot = s.find('.');
    if (dot != std::string::npos) {
        f.unit = std::pow(10.0, -static_cast<double>(s.size() - dot - 1)) * scale;
    } else {
        size_t zeros = 0;
        while (zeros + 1 < s.size() && s[s.size() - 1 - zeros] == '0') ++zeros;
        f.unit = std::pow(10.0, static_cast<double>(zeros)) * scale;
    }
    return f;
}

bool matches(double ours, const Figure& f) {
    const double lo = std::min(f.value - f.unit / 2, f.value * 0.995);
    const double hi = std::max(f.value + f.unit, f.value * 1.005);
    return ours >= lo && ours < hi;
}

// name -> (total, active) as params.csv gives them.
std::map<std::string, std::pair<std::string, std::string>> read_params_csv(const fs::path& p) {
    std::map<std::string, std::pair<std::string, std::string>> out;
    std::ifstream in(p);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::stringstream ss(line);
        std::string name, total, active;
        std::getline(ss, name, ',');
        std::getline(ss, total, ',');
        std::getline(ss, active, ',');
        if (!name.empty()) out[name] = {total, active};
    }
    return out;
}

// Each publication's convention (params.csv's sources).
struct Convention {
    bool total_without_embeddings = false;   // total leaves out the input embedding and output layer
    bool active_without_embedding = false;   // active leaves out the input embedding (a lookup)
    bool active_without_output = false;     // ... and the output layer
    const char* total_not_comparable = nullptr;  // why the total cannot be compared
};

const std::map<std::string, Convention>& conventions() {
    static const std::map<std::string, Convention> c = {
        // DeepSeek's activated counts leave out the input embedding:
        // DeepSeek-V2-Lite's 2.4 B is 2.45 B without it and 2.66 B with it.
        {"deepseek-v2-lite", {false, true}},
        {"deepseek-v3-0324", {false, true}},
        {"kimi-k2-instruct", {false, true}},
        // gpt-oss model card table 1: active counts the unembedding, not the embedding.
        {"gpt-oss-120b", {false, true}},
        {"gpt-oss-20b", {false, true}},
        // GLM-4.5 report table 1 caption: without word embeddings and output
        // layer. (It says the MTP layers are included; that reproduces
        // GLM-4.5's 355 B from its shape, but GLM-4.5-Air's 106 B only
        // without its MTP layer, which would make it 108 B.)
        {"glm-4.5-air", {true, true, true}},
        // MiniMax-M1: 456 B total with both embeddings, 45.9 B activated without them.
        {"minimax-m1", {false, true, true}},
        // The model card's total is the multimodal checkpoint's, vision
        // encoder included; the -trimmed config holds the text model only.
        {"llama-4-scout-17b-16e-instruct-trimmed", {false, false, false, "published total includes the vision encoder"}},
        // The model card's 32.5 B (31.0 B non-embedding) disagrees with its own
        // config: 64 layers x (62.9 M attention + 424.7 M MLP) = 31.2 B, the
        // same per-layer shape as Qwen3-32B, whose card gives 31.2 B.
        {"qwen2.5-32b", {false, false, false, "the card's figure disagrees with its own config (31.2 B non-embedding)"}},
    };
    return c;
}

TEST(RealworldHf, EveryConfigAgainstItsPublishedCounts) {
    const fs::path dir = test::source_path("../shared/realworld/hf");
    if (!fs::exists(dir / "params.csv")) GTEST_SKIP() << dir << " is absent (the shared folder of real inputs)";
    const auto published = read_params_csv(dir / "params.csv");
    ASSERT_EQ(published.size(), 30u);
    for (const auto& [name, figures] : published) {
        SCOPED_TRACE(name);
        const fs::path config = dir / (name + ".json");
        ASSERT_TRUE(fs::exists(config));
        const std::string job = "model: {hf_config: " + config.string() + "}\n"
                                "cluster: {gpu: h100-sxm, num_gpus: 8}\n"
                                "training: {seq_length: 4096, global_batch_size: 64}\nparallel: {pp: 1}\n";
        Job j;
        ASSERT_NO_THROW(j = parse_job(job, "job.yaml"));
        // Every key of the file is one lostflops knows (read, ignored or noted).
        if (j.model.not_modelled) {
            for (const auto& n : *j.model.not_modelled) {
                EXPECT_EQ(n.why.find("does not know"), std::string::npos) << n.key;
            }
        }
        const ParamCount p = count_params(j.model);
        const auto it = conventions().find(name);
        const Convention c = it == conventions().end() ? Convention{} : it->second;
        const double total = c.total_without_embeddings ? p.total - p.embedding - p.output : p.total;
        const double active = p.active - (c.active_without_embedding ? p.embedding : 0) -
                              (c.active_without_output ? p.output : 0);
        const Figure t = parse_figure(figures.first), a = parse_figure(figures.second);
        if (c.total_not_comparable != nullptr) {
            // Said, and held to within 3 % so that a change of the count still shows.
            std::printf("  %s: total not compared (%s): %.4g vs %.4g published\n", name.c_str(), c.total_not_comparable,
                        total, t.value);
            EXPECT_NEAR(total / t.value, 1.0, 0.03);
        } else {
            EXPECT_TRUE(matches(total, t)) << "total " << total << " vs " << figures.first;
        }
        if (c.total_not_comparable != nullptr && name == "qwen2.5-32b") {
            EXPECT_NEAR(active / a.value, 1.0, 0.03);
        } else {
            EXPECT_TRUE(matches(active, a)) << "active " << active << " vs " << figures.second;
        }
    }
}

TEST(RealworldHf, FigureParsing) {
    EXPECT_DOUBLE_EQ(parse_figure("40B").unit, 10e9);
    EXPECT_DOUBLE_EQ(parse_figure("671B").unit, 1e9);
    EXPECT_DOUBLE_EQ(parse_figure("45.9B").unit, 0.1e9);
    EXPECT_DOUBLE_EQ(parse_figure("1T").unit, 1e12);
    EXPECT_DOUBLE_EQ(parse_figure("9242164736").unit, 1);
    EXPECT_TRUE(matches(3.353e9, parse_figure("3.3B")));   // truncated
    EXPECT_FALSE(matches(3.45e9, parse_figure("3.3B")));
}

}  // namespace
}  // namespace lostflops
