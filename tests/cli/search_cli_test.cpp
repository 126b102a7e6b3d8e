// `lostflops search` from the command line: the JSON contract scripts rely
// on, exit codes, fixed settings, --compare, --gpus and --min-gpus.
#include <algorithm>
#include <cctype>
#include <functional>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace {

using lostflops::test::CliRun;
using lostflops::test::run_cli;

// The default job's model and cluster (Llama-3-70B, DGX H100) on 64 GPUs: a
// search of a few hundred thousand plans.
const std::string kSmall = "search --set cluster.num_gpus=64 --set training.global_batch_size=64 ";

TEST(SearchCli, JsonContract) {
    const CliRun r = run_cli(kSmall + "--fix tp=8 --format json --top all");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    for (const char* k : {"plans", "enumerated", "pruned_divisibility", "pruned_memory", "evaluated", "skipped"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["enumerated"].get<int64_t>(), j["pruned_divisibility"].get<int64_t>() +
                                                   j["pruned_memory"].get<int64_t>() + j["evaluated"].get<int64_t>());
    EXPECT_EQ(j["skipped"].get<int64_t>(), 0);  // a whole ranking skips nothing
    // A listing of the first plans skips the layouts whose floor ranks after
    // the plans it keeps (search/step_floor.h); every plan is still counted.
    const CliRun listing = run_cli(kSmall + "--fix tp=8 --format json");
    ASSERT_EQ(listing.code, 0) << listing.err;
    const auto l = nlohmann::json::parse(listing.out);
    EXPECT_EQ(l["enumerated"].get<int64_t>(), j["enumerated"].get<int64_t>());
    EXPECT_EQ(l["layouts"].get<int64_t>(), j["layouts"].get<int64_t>());
    EXPECT_EQ(l["pruned_memory"].get<int64_t>() + l["evaluated"].get<int64_t>() + l["skipped"].get<int64_t>(),
              j["pruned_memory"].get<int64_t>() + j["evaluated"].get<int64_t>());
    EXPECT_GT(l["skipped"].get<int64_t>(), 0);
    EXPECT_EQ(l["plans"][0], j["plans"][0]);
    const auto& plans = j["plans"];
    ASSERT_EQ(plans.size(), j["evaluated"].get<size_t>());  // the whole ranking
    for (size_t i = 0; i < plans.size(); ++i) {
        EXPECT_EQ(plans[i]["rank"], i + 1);
        EXPECT_EQ(plans[i]["parallel"]["tp"], 8);
        for (const char* k : {"tokens_per_s_per_gpu", "step_time_s", "mfu", "peak_bytes"})
            ASSERT_TRUE(plans[i].contains(k)) << k;
        if (i > 0) { EXPECT_GE(plans[i - 1]["tokens_per_s_per_gpu"], plans[i]["tokens_per_s_per_gpu"]); }
    }
}

TEST(SearchCli, JsonAndCsvListTheTableTopByDefault) {
    const std::string job = kSmall + "--fix tp=8 ";
    const auto j = nlohmann::json::parse(run_cli(job + "--format json").out);
    ASSERT_EQ(j["plans"].size(), 5u);
    EXPECT_EQ(j["top"].size(), 5u);
    const auto all = nlohmann::json::parse(run_cli(job + "--format json --top all").out);
    ASSERT_GT(all["plans"].size(), 5u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(j["plans"][i], all["plans"][i]) << i;
    EXPECT_EQ(j["other_shapes"], all["other_shapes"]);
    const CliRun csv = run_cli(job + "--format csv");
    EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 6);  // the header and 5 plans
    const CliRun csv_all = run_cli(job + "--format csv --top all");
    EXPECT_EQ(static_cast<size_t>(std::count(csv_all.out.begin(), csv_all.out.end(), '\n')), all["plans"].size() + 1);
    EXPECT_EQ(csv_all.out.substr(0, csv.out.size()), csv.out);
}

TEST(SearchCli, TableTopAllListsEveryPlanAndTopNTheJsonOrder) {
    const std::string job = kSmall + "--fix tp=8,pp=4,zero=1 ";
    const CliRun j = run_cli(job + "--format json --top all");
    ASSERT_EQ(j.code, 0) << j.err;
    const auto plans = nlohmann::json::parse(j.out)["plans"];
    ASSERT_GT(plans.size(), 20u);
    const auto rows = [](const std::string& out) {  // plan rows: lines that start with a rank
        size_t n = 0, at = 0;
        while (at < out.size()) {
            const size_t end = out.find('\n', at);
            const std::string line = out.substr(at, end - at);
            if (line.size() > 5 && line.find_first_not_of(' ') < 5 && std::isdigit(static_cast<unsigned char>(line[4])))
                ++n;
            at = end == std::string::npos ? out.size() : end + 1;
        }
        return n;
    };
    const CliRun all = run_cli(job + "--top all");
    ASSERT_EQ(all.code, 0) << all.err;
    EXPECT_GE(rows(all.out), plans.size());  // every plan, then the other shapes
    const CliRun top = run_cli(job + "--top 7");
    ASSERT_EQ(top.code, 0) << top.err;
    // The table keeps only the best plans (SearchOptions::keep_best): its
    // seventh plan is still the JSON ranking's seventh.
    const std::string seventh = "\n    7 ";
    const size_t at = top.out.find(seventh);
    ASSERT_NE(at, std::string::npos) << top.out;
    const std::string line = top.out.substr(at + 1, top.out.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(fmt::format("{:>9.0f}", plans[6]["tokens_per_s_per_gpu"].get<double>())), std::string::npos)
        << line;
}

TEST(SearchCli, BestPlanAgreesWithEstimate) {
    const CliRun s = run_cli(kSmall + "--fix tp=8 --format json --top 1");
    ASSERT_EQ(s.code, 0) << s.err;
    const auto best = nlohmann::json::parse(s.out)["plans"][0];
    const auto& p = best["parallel"];
    std::string set = " --set cluster.num_gpus=64 --set training.global_batch_size=64";
    for (const char* k : {"tp", "cp", "pp", "dp", "vpp", "ep", "zero"}) set += " --set parallel." + std::string(k) + "=" + p[k].dump();
    for (const char* k : {"sequence_parallel", "tp_comm_overlap", "overlap_grad_reduce"})
        set += " --set parallel." + std::string(k) + "=" + p[k].dump();
    set += " --set parallel.recompute=" + p["recompute"].get<std::string>();
    if (!p["recompute_layers"].is_null()) set += " --set parallel.recompute_layers=" + p["recompute_layers"].dump();
    set += " --set training.micro_batch_size=" + best["micro_batch_size"].dump();
    const CliRun e = run_cli("estimate --format json" + set);
    ASSERT_EQ(e.code, 0) << e.err;
    const auto est = nlohmann::json::parse(e.out);
    EXPECT_DOUBLE_EQ(est["step_time_s"].get<double>(), best["step_time_s"].get<double>());
}

TEST(SearchCli, ExitCodes) {
    EXPECT_EQ(run_cli("search --set model.preset=llama3.1-405b --set cluster.num_gpus=8 "
                      "--set training.global_batch_size=8").code, 1);
    const CliRun bad = run_cli(kSmall + "--fix tp=three");
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("--fix tp=three"), std::string::npos) << bad.err;
    EXPECT_EQ(run_cli(kSmall + "--gpus 64..32").code, 2);
}

TEST(SearchCli, CompareNamesRankAndWalls) {
    const CliRun r = run_cli(kSmall + "--compare tp=8,pp=4,vpp=1,zero=1,mbs=1");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("compare: rank "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("walls that differ most"), std::string::npos) << r.out;
    const CliRun none = run_cli(kSmall + "--compare tp=1,pp=1,cp=1,zero=0");
    EXPECT_NE(none.out.find("does not fit"), std::string::npos) << none.out;
}

TEST(SearchCli, SweepAndMinGpus) {
    const CliRun r = run_cli("search --set training.global_batch_size=256 --gpus 32..128 --format json --fix tp=8");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto sweep = nlohmann::json::parse(r.out)["sweep"];
    ASSERT_EQ(sweep.size(), 3u);
    EXPECT_EQ(sweep[0]["num_gpus"], 32);
    EXPECT_EQ(sweep[2]["num_gpus"], 128);
    const CliRun m = run_cli("search --set training.global_batch_size=256 --min-gpus --format json --fix tp=8");
    ASSERT_EQ(m.code, 0) << m.err;
    const auto pts = nlohmann::json::parse(m.out)["sweep"];
    ASSERT_EQ(pts.size(), 1u);
    const int n = pts[0]["num_gpus"];
    // One node fewer does not fit.
    const CliRun fewer = run_cli("search --set training.global_batch_size=256 --fix tp=8 --set cluster.num_gpus=" +
                                 std::to_string(n - 8));
    EXPECT_EQ(fewer.code, 1) << fewer.out;
    // From part of a node: every count within the node, then whole nodes (not 9).
    const CliRun part = run_cli("search --set cluster.num_gpus=1 --set training.global_batch_size=8 --min-gpus --format json");
    ASSERT_EQ(part.code, 0) << part.err;
    const int p = nlohmann::json::parse(part.out)["sweep"][0]["num_gpus"];
    EXPECT_TRUE(p <= 8 || p % 8 == 0) << p;
    const CliRun below = run_cli("search --set training.global_batch_size=8 --set cluster.num_gpus=" +
                                 std::to_string(p <= 8 ? p - 1 : p - 8));
    EXPECT_EQ(below.code, 1) << below.out;
}

}  // namespace

namespace {

TEST(SearchCli, EstimateThatDoesNotFitNamesTheNearestFittingPlan) {
    const std::string job = "estimate --set parallel.recompute=none --set parallel.zero=0 "
                            "--set training.micro_batch_size=4 --format json";
    const CliRun r = run_cli(job);
    ASSERT_EQ(r.code, 1) << r.err;
    const auto advice = nlohmann::json::parse(r.out);
    const auto* nearest = &advice;
    // The advice object sits beside the estimate; find "nearest_fitting_plan".
    std::function<const nlohmann::json*(const nlohmann::json&)> find = [&](const nlohmann::json& j) -> const nlohmann::json* {
        if (!j.is_object()) return nullptr;
        if (j.contains("nearest_fitting_plan")) return &j["nearest_fitting_plan"];
        for (const auto& [k, v] : j.items())
            if (const auto* f = find(v)) return f;
        return nullptr;
    };
    nearest = find(advice);
    ASSERT_NE(nearest, nullptr) << r.out;
    ASSERT_TRUE(nearest->is_object());
    std::string set;
    for (const auto& s : (*nearest)["set"]) set += " --set " + s.get<std::string>();
    EXPECT_EQ(static_cast<size_t>((*nearest)["changes"].get<int>()), (*nearest)["set"].size());
    // Its --set arguments on top of the job make it fit.
    const CliRun fixed = run_cli("estimate --set parallel.recompute=none --set parallel.zero=0 "
                                 "--set training.micro_batch_size=4" + set);
    EXPECT_EQ(fixed.code, 0) << set << "\n" << fixed.out;
}

}  // namespace
