// Headroom (cluster.memory_headroom, --headroom) and a plan that fits tightly
// (report.h's tight_fit, memory_savers): the headroom comes off what the plan
// may take, by hand-computed bytes, in the estimate's verdict and in the
// search's pruning alike; a tight plan lists changes that each free memory.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/error.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "lostflops/search.h"
#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A dense 8B-shaped job on 8 GPUs of `memory_GiB` (an inline GPU, H100-like otherwise).
std::string job_text(double memory_GiB, const std::string& headroom = "") {
    return fmt::format(R"(model: {{num_hidden_layers: 32, hidden_size: 4096, num_attention_heads: 32,
        num_key_value_heads: 8, intermediate_size: 14336, vocab_size: 128256}}
cluster:
  num_gpus: 8
  gpu: {{arch: hopper, peak_tflops: {{fp16: 989.4, bf16: 989.4, fp8: 1978.9}}, memory_GiB: {}, hbm_GBps: 3350,
        nvlink_GBps: 450, sm_count: 132, tdp_w: 700}}
  {}
training: {{seq_length: 4096, global_batch_size: 32, micro_batch_size: 2, framework: megatron-core}}
parallel: {{tp: 2, pp: 1, zero: 1, recompute: selective}}
)",
                       memory_GiB, headroom.empty() ? "" : "memory_headroom: " + headroom);
}

Estimate run(const std::string& text) { return estimate(parse_job(text, "job.yaml"), default_calibration()); }

TEST(Headroom, GiBAndShareAreReadAndBadValuesNamed) {
    EXPECT_DOUBLE_EQ(parse_job(job_text(80, "6"), "job.yaml").cluster.memory_headroom_bytes, 6 * kGiB);
    EXPECT_DOUBLE_EQ(parse_job(job_text(80, "\"6.5 GiB\""), "job.yaml").cluster.memory_headroom_bytes, 6.5 * kGiB);
    EXPECT_DOUBLE_EQ(parse_job(job_text(80, "\"10 %\""), "job.yaml").cluster.memory_headroom_fraction, 0.10);
    EXPECT_DOUBLE_EQ(parse_job(job_text(80), "job.yaml").cluster.memory_headroom_bytes, 0.0);
    for (const char* bad : {"six", "\"6 GB\"", "-1", "\"95 %\"", "[1, 2]", "\"%\""}) {
        try {
            (void)parse_job(job_text(80, bad), "job.yaml");
            ADD_FAILURE() << bad << " was accepted";
        } catch (const InputError& e) {
            EXPECT_EQ(e.key(), "cluster.memory_headroom") << bad;
        }
    }
}

TEST(Headroom, ComesOffWhatThePlanMayTakeByHand) {
    const Estimate none = run(job_text(80));
    const Estimate gib = run(job_text(80, "6"));
    const Estimate share = run(job_text(80, "\"10 %\""));
    // The ledger itself does not move; only the budget does.
    EXPECT_DOUBLE_EQ(gib.memory.reserved_bytes, none.memory.reserved_bytes);
    EXPECT_DOUBLE_EQ(gib.memory.usable_bytes, none.memory.usable_bytes);
    EXPECT_DOUBLE_EQ(none.memory.headroom_bytes, 0.0);
    EXPECT_DOUBLE_EQ(gib.memory.headroom_bytes, 6 * kGiB);
    EXPECT_NEAR(gib.memory.capacity_bytes, none.memory.capacity_bytes - 6 * kGiB, 1.0);
    EXPECT_NEAR(gib.memory.margin_bytes, none.memory.margin_bytes - 6 * kGiB, 1.0);
    EXPECT_NEAR(share.memory.headroom_bytes, 0.10 * none.memory.usable_bytes, 1.0);
    // A headroom just above the spare turns "fits" into "does not fit".
    ASSERT_TRUE(none.memory.fits);
    const double over_GiB = none.memory.margin_bytes / kGiB + 0.5;
    EXPECT_FALSE(run(job_text(80, fmt::format("{:.3f}", over_GiB))).memory.fits);
    EXPECT_TRUE(run(job_text(80, fmt::format("{:.3f}", over_GiB - 1.0))).memory.fits);
}

TEST(Headroom, TheSearchKeepsIt) {
    const Calibration& cal = default_calibration();
    SearchOptions o;
    o.threads = 1;
    const auto search = [&](const std::string& text) {
        return search_plans(parse_search_job(text, "job.yaml", {}, SearchJobPlan::ignore).job, cal, o);
    };
    const SearchResult free = search(job_text(80));
    ASSERT_FALSE(free.ranked.empty());
    const double usable = run(job_text(80)).memory.usable_bytes;
    // Ask for all but 1 GiB less than the winner's peak: the winner is out,
    // and every plan kept leaves the headroom free.
    const double headroom = usable - free.ranked.front().peak_bytes + 1 * kGiB;
    const SearchResult kept = search(job_text(80, fmt::format("{:.4f}", headroom / kGiB)));
    ASSERT_FALSE(kept.ranked.empty());
    for (std::size_t i = 0; i < kept.sorted; ++i) EXPECT_LE(kept.ranked[i].peak_bytes, usable - headroom + 1.0);
    EXPECT_LT(kept.ranked.front().peak_bytes, free.ranked.front().peak_bytes);
}

TEST(Headroom, ATightPlanListsWhatFreesMemory) {
    const Estimate roomy = run(job_text(80));
    ASSERT_TRUE(roomy.memory.fits);
    EXPECT_FALSE(tight_fit(roomy.memory));
    // A GPU whose usable memory is the reserved peak plus 5 %: fits, tightly
    // (the reserved figure does not depend on the GPU's size).
    const double outside = 0.99 * 80 * kGiB - roomy.memory.usable_bytes;
    const double memory_GiB = (1.05 * roomy.memory.reserved_bytes + outside) / 0.99 / kGiB;
    const Job tight_job = parse_job(job_text(memory_GiB), "job.yaml");
    const Estimate tight = estimate(tight_job, default_calibration());
    ASSERT_TRUE(tight.memory.fits);
    EXPECT_TRUE(tight_fit(tight.memory));
    // A headroom frees no memory: with 3 % it still fits and is still tight
    // (spare and headroom together are the same 4.8 %); with 10 % it does not fit.
    const Estimate asked = run(job_text(memory_GiB, "\"3 %\""));
    EXPECT_TRUE(asked.memory.fits);
    EXPECT_TRUE(tight_fit(asked.memory));
    EXPECT_FALSE(run(job_text(memory_GiB, "\"10 %\"")).memory.fits);
    const ReportExtras x = estimate_extras(tight_job, tight, default_calibration(), AdviceSearch::if_cheap);
    ASSERT_FALSE(x.savers.empty());
    for (const PlanChange& c : x.savers) EXPECT_LT(c.peak_bytes, tight.memory.peak_bytes) << c.change;
    const std::string text = estimate_table(tight_job, tight, x);
    EXPECT_NE(text.find("tight: the spare is under 10 %"), std::string::npos) << text;
    EXPECT_NE(text.find("if it runs out of memory"), std::string::npos) << text;
    EXPECT_NE(text.find(x.savers.front().set.front()), std::string::npos) << text;
    const nlohmann::json j = estimate_json(tight_job, tight, x);
    EXPECT_TRUE(j.at("memory").at("tight").get<bool>());
    EXPECT_EQ(j.at("memory_savers").size(), x.savers.size());
    // Not tight: no savers, no line.
    const ReportExtras rx = estimate_extras(parse_job(job_text(80), "job.yaml"), roomy, default_calibration(),
                                            AdviceSearch::if_cheap);
    EXPECT_TRUE(rx.savers.empty());
}

TEST(Headroom, CliFlagSaysItAndBadValueExitsTwo) {
    const auto r = test::run_cli("estimate --headroom 10%");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("headroom: fits"), std::string::npos) << r.out;
    const auto bad = test::run_cli("estimate --headroom lots");
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("cluster.memory_headroom"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace lostflops
