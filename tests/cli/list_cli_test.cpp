// `lostflops list gpus|models|clusters|frameworks`: every catalog entry
// listed once with its source, in the table and in JSON; the figures those
// lists print are the ones a job gets.
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "lostflops/catalog.h"
#include "lostflops/framework_rules.h"

namespace {

using lostflops::test::CliRun;
using lostflops::test::run_cli;

nlohmann::json list_json(const std::string& kind) {
    const CliRun r = run_cli("list " + kind + " --format json");
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)[kind];
}

// Each name once in JSON, each named in the table, and a non-empty source.
void expect_every_entry(const std::string& kind, const std::vector<std::string>& names) {
    const nlohmann::json arr = list_json(kind);
    std::set<std::string> listed;
    for (const auto& e : arr) {
        EXPECT_TRUE(listed.insert(e["name"].get<std::string>()).second) << e["name"];
        EXPECT_FALSE(e["source"].get<std::string>().empty()) << kind << " " << e["name"] << ": no source";
    }
    EXPECT_EQ(listed, std::set<std::string>(names.begin(), names.end()));
    const CliRun table = run_cli("list " + kind);
    ASSERT_EQ(table.code, 0) << table.err;
    for (const auto& n : names) EXPECT_NE(table.out.find(n + " "), std::string::npos) << n;
    EXPECT_NE(table.out.find("sources:"), std::string::npos);
}

TEST(ListCli, ModelsEveryPresetWithItsSource) { expect_every_entry("models", lostflops::model_names()); }
TEST(ListCli, ClustersEveryPresetWithItsSource) { expect_every_entry("clusters", lostflops::cluster_names()); }
TEST(ListCli, GpusEveryAcceleratorWithItsSource) { expect_every_entry("gpus", lostflops::gpu_names()); }

// A preset's parameters as listed are those `estimate` counts for a job of it.
TEST(ListCli, ModelParametersAreTheEstimates) {
    const nlohmann::json models = list_json("models");
    for (const char* name : {"llama3-70b", "mixtral-8x7b", "gpt3-175b"}) {
        const nlohmann::json* entry = nullptr;
        for (const auto& m : models)
            if (m["name"] == name) entry = &m;
        ASSERT_NE(entry, nullptr) << name;
        // The built-in job's plan (tp 8, pp 4, vpp 5) holds each of these.
        const CliRun e = run_cli(std::string("estimate --set 'model={preset: ") + name + "}' --format json");
        ASSERT_FALSE(e.out.empty()) << e.err;
        const auto j = nlohmann::json::parse(e.out);
        EXPECT_EQ((*entry)["params_total"], j["params_total"]) << name;
        EXPECT_EQ((*entry)["params_active"], j["params_active"]) << name;
        EXPECT_EQ((*entry)["num_hidden_layers"], j["job"]["model"]["num_hidden_layers"]) << name;
    }
}

// dgx-h100 as data/catalog/clusters.yaml gives it: 8 H100 SXM per node,
// NVLink 450 GB/s and one 400 Gb/s NIC (50 GB/s) per GPU; gb200-nvl72 a
// 72-GPU NVLink domain of 4-GPU trays.
TEST(ListCli, ClustersAsTheCatalogGivesThem) {
    for (const auto& c : list_json("clusters")) {
        if (c["name"] == "dgx-h100") {
            EXPECT_EQ(c["gpu"], "h100-sxm");
            EXPECT_EQ(c["gpus_per_node"], 8);
            EXPECT_EQ(c["scaleup_gpus"], 8);
            EXPECT_EQ(c["intra_node"]["bandwidth_GBps"], 450.0);
            EXPECT_EQ(c["inter_node"]["bandwidth_GBps"], 50.0);
        }
        if (c["name"] == "gb200-nvl72") {
            EXPECT_EQ(c["gpus_per_node"], 4);
            EXPECT_EQ(c["scaleup_gpus"], 72);
        }
    }
}

// Every rule of the table under the framework whose stack it is.
TEST(ListCli, FrameworksHoldEveryRuleOnce) {
    const nlohmann::json fw = list_json("frameworks");
    ASSERT_EQ(fw.size(), 5u);
    size_t rules = 0;
    std::set<std::string> names;
    for (const auto& f : fw) {
        names.insert(f["framework"].get<std::string>());
        rules += f["rules"].size();
        for (const auto& r : f["rules"]) EXPECT_FALSE(r["source"].get<std::string>().empty());
    }
    EXPECT_EQ(names, (std::set<std::string>{"megatron-core", "megatron-lm", "fsdp", "deepspeed", "hf"}));
    EXPECT_EQ(rules, lostflops::kFrameworkRules.size());
    const CliRun table = run_cli("list frameworks");
    ASSERT_EQ(table.code, 0) << table.err;
    for (const auto& r : lostflops::kFrameworkRules) EXPECT_NE(table.out.find(r.source), std::string::npos) << r.source;
}

TEST(ListCli, UnknownKindIsACommandLineError) {
    const CliRun r = run_cli("list planets");
    EXPECT_EQ(r.code, 2);
    EXPECT_FALSE(r.err.empty());
}

}  // namespace
