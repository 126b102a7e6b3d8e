// The 49 real config.json files of ../shared/realworld/hf/hub2/ (38
// architectures) against the published parameter counts of
// tests/data/job/hub2_params.csv, each with its source: every file reads
// within 3 % of its figure, or is refused naming what is not modelled.
// Skipped, saying so, when ../shared is absent. A figure's `compare` column
// says what it counts: the whole model (a multimodal config: its text model),
// or the model without its embedding and output layer.
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "test_util.h"
#include "workload/flops.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

struct Row {
    std::string file, compare, refused_because, source;
    double published = 0;
};

// One CSV line; fields may be "quoted, with commas".
std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) out.emplace_back();
        else out.back() += c;
    }
    return out;
}

std::vector<Row> read_rows() {
    std::ifstream in(test::source_path("tests/data/job/hub2_params.csv"));
    std::vector<Row> rows;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        const auto f = csv_fields(line);
        if (f.size() != 5) {
            ADD_FAILURE() << "bad row: " << line;
            continue;
        }
        rows.push_back({f[0], f[2], f[3], f[4], std::stod(f[1])});
    }
    return rows;
}

Job load_config(const fs::path& config) {
    const std::string job = "model: {hf_config: " + config.string() + "}\n"
                            "cluster: {gpu: h100-sxm, num_gpus: 8}\n"
                            "training: {seq_length: 4096, global_batch_size: 64}\n"
                            "parallel: {tp: 1, pp: 1}\n";
    return parse_job(job, "job.yaml");
}

TEST(Hub2Configs, EveryFileWithinThreePercentOrRefusedByName) {
    const fs::path dir = test::source_path("../shared/realworld/hf/hub2");
    if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent (the shared folder of real inputs)";
    const auto rows = read_rows();
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".json";
    ASSERT_EQ(rows.size(), files) << "one row per config.json of " << dir;
    ASSERT_EQ(rows.size(), 49u);
    for (const Row& row : rows) {
        SCOPED_TRACE(row.file + " (" + row.source + ")");
        const fs::path config = dir / (row.file + ".json");
        ASSERT_TRUE(fs::exists(config));
        if (row.compare == "refused") {
            try {
                load_config(config);
                ADD_FAILURE() << "accepted";
            } catch (const InputError& e) {
                EXPECT_NE(std::string(e.what()).find(row.refused_because), std::string::npos) << e.what();
            }
            continue;
        }
        Job j;
        ASSERT_NO_THROW(j = load_config(config));
        // Every key of the file is one lostflops knows (read, ignored or noted).
        if (j.model.not_modelled) {
            for (const auto& n : *j.model.not_modelled) {
                EXPECT_EQ(n.why.find("does not know"), std::string::npos) << n.key;
            }
        }
        const ParamCount p = count_params(j.model);
        const double ours = row.compare == "non_embedding" ? p.total - p.embedding - p.output : p.total;
        EXPECT_NEAR(ours / row.published, 1.0, 0.03) << ours << " vs " << row.published;
    }
}

TEST(Hub2Configs, TheMultimodalConfigNamesWhatItLeavesOut) {
    const fs::path config = test::source_path("../shared/realworld/hf/hub2/gemma3-gemma-3-27b.json");
    if (!fs::exists(config)) GTEST_SKIP() << config << " is absent";
    const Job j = load_config(config);
    std::map<std::string, std::string> warned;
    for (const auto& w : model_warnings(j.model)) warned[w.key] = w.message;
    ASSERT_TRUE(warned.count("model.vision_config"));
    EXPECT_NE(warned["model.vision_config"].find("vision encoder"), std::string::npos);
    // text_config's gemma3_text rules: 62 layers, every sixth global.
    EXPECT_EQ(j.model.layers, 62);
    EXPECT_EQ(j.model.layer(5).attention.window, 0);
    EXPECT_EQ(j.model.layer(0).attention.window, 1024);
}

}  // namespace
}  // namespace lostflops
