// The measured curves an estimate names (collective_curves.h): each group's
// collectives matched by placement as the cost model matches them, a curve
// from another GPU warned about, the estimate's table and JSON naming them.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/calibrate_test_util.h"
#include "cli/cli_util.h"
#include "lostflops/collective_curves.h"
#include "lostflops/job.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/report.h"
#include "test_util.h"

namespace lostflops {
namespace {

// GPT 32B on 384 H100 (8 per node): tp 8 with sequence parallelism inside a
// node, dp 48 with one rank per node.
const char* kJob = "data/published/runs/megatron24-h100-gpt-32b.json";

// A point of a curve on `ranks` ranks, its time as nccl-tests reports it.
BusBwPoint pt(Collective op, int ranks, double bytes, double busbw_GBps) {
    return {bytes, busbw_GBps, bytes * bus_factor(op, ranks) / (busbw_GBps * 1e3)};
}

Calibration with_curves() {
    Calibration c = default_calibration();
    const auto ag = Collective::all_gather, rs = Collective::reduce_scatter;
    c.nccl.push_back({ag, LinkScope::intra_node, 8, {pt(ag, 8, 1e6, 100), pt(ag, 8, 1e9, 350)}, 8, 1,
                      "NVIDIA H100 80GB HBM3"});
    c.nccl.push_back({rs, LinkScope::intra_node, 8, {pt(rs, 8, 1e6, 10), pt(rs, 8, 1e9, 40)}, 8, 1, "Tesla T4"});
    // 2 nodes x 8: must not price dp's 48 nodes x 1.
    c.nccl.push_back({rs, LinkScope::inter_node, 16, {pt(rs, 16, 1e6, 10), pt(rs, 16, 1e9, 40)}, 8, 2,
                      "NVIDIA H100 80GB HBM3"});
    return c;
}

TEST(CollectiveCurves, NamesTheCurvesThePlacementMatches) {
    const Job job = load_job(test::source_path(kJob));
    const Calibration cal = with_curves();
    const auto uses = collective_curves(job, cal);
    ASSERT_EQ(uses.size(), 4u);  // tp all_gather, tp reduce_scatter, dp reduce_scatter, dp all_gather
    EXPECT_EQ(uses[0].group, "tp");
    EXPECT_EQ(uses[0].op, Collective::all_gather);
    ASSERT_NE(uses[0].curve, nullptr);
    EXPECT_EQ(uses[0].gpu_warning, "");
    ASSERT_NE(uses[1].curve, nullptr);
    EXPECT_NE(uses[1].gpu_warning.find("Tesla T4"), std::string::npos);
    EXPECT_EQ(uses[2].group, "dp");
    EXPECT_EQ(uses[2].placement.ranks_per_node, 1);
    EXPECT_EQ(uses[2].placement.nodes, 48);
    EXPECT_EQ(uses[2].curve, nullptr);  // never the 2 x 8 curve
    EXPECT_EQ(collective_curve_warnings(uses).size(), 1u);
    const std::string text = collective_curves_text(uses);
    EXPECT_NE(text.find("tp all_gather (8 ranks on one node): curve all_gather measured on 8 ranks on one node"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("dp reduce_scatter (48 ranks, 1 per node on 48 nodes): no curve of this placement"),
              std::string::npos)
        << text;
    const nlohmann::json j = collective_curves_json(uses);
    EXPECT_EQ(j[0]["curve"]["gpu"], "NVIDIA H100 80GB HBM3");
    EXPECT_TRUE(j[2]["curve"].is_null());
    // Without measured curves there is nothing to name.
    EXPECT_TRUE(collective_curves(job, default_calibration()).empty());
}

TEST(CollectiveCurves, EstimateNamesThemAndWarns) {
    test::TempFile prof("curves.yaml", calibration_to_yaml(with_curves()));
    const test::CliRun t = test::run_cli("estimate " + test::source_path(kJob) + " --calibration " + prof.path());
    EXPECT_NE(t.out.find("collectives priced by measured nccl-tests curves"), std::string::npos) << t.out;
    EXPECT_NE(t.err.find("warning: calibration.nccl: nccl curve reduce_scatter on 8 ranks"), std::string::npos) << t.err;
    const test::CliRun j =
        test::run_cli("estimate --format json " + test::source_path(kJob) + " --calibration " + prof.path());
    const auto doc = nlohmann::json::parse(j.out);
    ASSERT_TRUE(doc.contains("collective_curves"));
    EXPECT_EQ(doc["collective_curves"].size(), 4u);
    bool warned = false;
    for (const auto& w : doc["warnings"]) warned |= w["key"] == "calibration.nccl";
    EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace lostflops
