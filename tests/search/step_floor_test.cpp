// The search's floor (search/step_floor.h) against every plan, as
// test-backend-ops holds a backend to its reference: on jobs of each regime
// the floor rests on (a dense stack split unevenly, a MoE stack with and
// without the overlapped all-to-all, torchtitan's FSDP2, a Hugging Face model
// on one node), the exact search's every plan has a step at or above its
// layout's floor, and the floor is not idle (most layouts' floors are within
// a factor of three of their best plan, as on the DeepSeek-V3 example, where
// 1,917,901 of 2,045,628 layouts have a floor above twice the best plan).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/job.h"
#include "lostflops/search.h"
#include "search/step_floor.h"

namespace lostflops {
namespace {

const char* kCluster =
    "cluster:\n  gpu: h100-sxm\n  num_gpus: 16\n  gpus_per_node: 8\n  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n"
    "  inter_node: {bandwidth_GBps: 50, latency_us: 5}\n";

std::string dense(const std::string& framework) {
    return std::string("model:\n  num_hidden_layers: 30\n  hidden_size: 2048\n  num_attention_heads: 16\n"
                       "  intermediate_size: 8192\n  vocab_size: 32000\n") +
           kCluster + "training:\n  seq_length: 4096\n  global_batch_size: 64\n  framework: " + framework + "\n";
}

std::string moe(const std::string& framework) {
    return std::string("model:\n  num_hidden_layers: 6\n  hidden_size: 1024\n  num_attention_heads: 8\n"
                       "  num_local_experts: 8\n  num_experts_per_tok: 2\n  moe_intermediate_size: 512\n"
                       "  intermediate_size: 2048\n  vocab_size: 32000\n  hidden_act: silu\n") +
           kCluster + "training:\n  seq_length: 2048\n  global_batch_size: 32\n  framework: " + framework + "\n";
}

// Every plan of the job's search at or above its layout's floor; returns the
// share of layouts with a plan whose floor is at least a third of their best.
double check_floors(const std::string& text, size_t min_plans = 100) {
    const SearchJob sj = parse_search_job(text, "floor.yaml", {}, SearchJobPlan::fixed_where_given);
    const Calibration cal = default_calibration();
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = 2;  // sort_top 0, every plan kept: each exact, none skipped
    const SearchResult r = search_plans(sj.job, cal, o);
    EXPECT_EQ(r.counts.skipped, 0);
    EXPECT_GE(r.ranked.size(), min_plans);
    const std::vector<double> floors = search::step_floors(sj.job, cal, o.fix, r.layouts, 2);
    std::vector<double> best(r.layouts.size(), -1);
    int below = 0;
    for (const RankedPlan& p : r.ranked) {
        const size_t i = p.order >> 32;
        if (!(floors[i] <= p.step_time_s * (1 + 1e-12)) && below++ < 5)
            ADD_FAILURE() << "layout " << i << ": floor " << floors[i] << " s above a plan's step " << p.step_time_s << " s";
        if (best[i] < 0 || p.step_time_s < best[i]) best[i] = p.step_time_s;
    }
    int with_plans = 0, tight = 0;
    for (size_t i = 0; i < best.size(); ++i) {
        if (best[i] < 0) continue;
        ++with_plans;
        tight += floors[i] >= best[i] / 3 ? 1 : 0;
    }
    return with_plans > 0 ? static_cast<double>(tight) / with_plans : 0.0;
}

TEST(StepFloor, BelowEveryPlanOfItsLayout) {
    EXPECT_GT(check_floors(dense("megatron-core")), 0.5);
    EXPECT_GT(check_floors(dense("fsdp")), 0.5);
    EXPECT_GT(check_floors(moe("megatron-core")), 0.5);  // with and without moe_a2a_overlap
    EXPECT_GT(check_floors(moe("megatron-lm")), 0.5);
    EXPECT_GT(check_floors(moe("fsdp")), 0.5);  // DualPipeV twins: their floor without the expert all-to-all
}

// A job's own stage layout fits one pp x vpp: the other layouts, which the
// evaluation prunes, get no floor (their stages cannot be placed: a floor
// read past the layout's stages before). A listing finds the exact best.
TEST(StepFloor, CustomStageLayoutOnOtherShapes) {
    const std::string text = dense("megatron-core") + "parallel: {pipeline_layout: \"Et*7|t*8|t*8|t*7L\"}\n";
    EXPECT_GT(check_floors(text, 10), 0.2);  // the stage layout's own imbalance: looser than the default split
    // On 64 GPUs, enough layouts for the listing to skip some.
    std::string wide = text;
    wide.replace(wide.find("num_gpus: 16"), 12, "num_gpus: 64");
    const SearchJob sj = parse_search_job(wide, "floor.yaml", {}, SearchJobPlan::fixed_where_given);
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = 2;
    const SearchResult exact = search_plans(sj.job, default_calibration(), o);
    o.sort_top = 1;
    o.keep_best = 1;
    const SearchResult listing = search_plans(sj.job, default_calibration(), o);
    ASSERT_FALSE(exact.ranked.empty());
    ASSERT_FALSE(listing.ranked.empty());
    EXPECT_EQ(listing.ranked.front().order, exact.ranked.front().order);
    EXPECT_EQ(listing.ranked.front().step_time_s, exact.ranked.front().step_time_s);
    // Every skipped layout is one the evaluation would have counted and not
    // pruned for divisibility (the layout fits one vpp only: the floor of
    // another vpp is not its).
    EXPECT_GT(listing.counts.skipped, 0);
    EXPECT_EQ(listing.counts.layouts, exact.counts.layouts);
    EXPECT_EQ(listing.counts.pruned_divisibility, exact.counts.pruned_divisibility);
}

// Random small jobs (seeded), dense and MoE, over the frameworks: every
// floor under every plan of its layout, and a listing that keeps 16 plans
// (so that it skips) lists the same first plans, the same best plan of each
// listed shape and the same ranks as the search of every plan.
TEST(StepFloor, ListingsOfRandomJobsAreTheExactSearchs) {
    std::mt19937 rng(20261129);  // seeded: the same jobs every run
    const char* frameworks[] = {"megatron-core", "megatron-lm", "fsdp", "deepspeed"};
    int skipped_somewhere = 0;
    for (int trial = 0; trial < 12; ++trial) {
        const int layers = std::uniform_int_distribution<int>(3, 13)(rng);
        const int64_t hidden = 1024 * std::uniform_int_distribution<int>(1, 3)(rng);
        const bool moe = trial % 3 == 2;
        const std::string fw = frameworks[trial % 4];
        const std::string text =
            "model:\n  num_hidden_layers: " + std::to_string(layers) + "\n  hidden_size: " + std::to_string(hidden) +
            "\n  num_attention_heads: 16\n  intermediate_size: " + std::to_string(4 * hidden) +
            "\n  vocab_size: 32000\n  hidden_act: silu\n" +
            (moe ? "  num_local_experts: 8\n  num_experts_per_tok: 2\n  moe_intermediate_size: 512\n" : "") + kCluster +
            "training:\n  seq_length: 2048\n  global_batch_size: 32\n  framework: " + fw + "\n";
        SCOPED_TRACE("trial " + std::to_string(trial) + ": " + fw + (moe ? " moe" : "") + ", " + std::to_string(layers) +
                     " layers");
        check_floors(text, 1);
        const SearchJob sj = parse_search_job(text, "floor.yaml", {}, SearchJobPlan::fixed_where_given);
        const Calibration cal = default_calibration();
        SearchOptions o;
        o.fix = plan_fix_from(sj);
        o.threads = 2;
        const SearchResult exact = search_plans(sj.job, cal, o);
        o.sort_top = 3;
        o.keep_best = 16;
        o.shape_ranks = 3;
        const SearchResult listing = search_plans(sj.job, cal, o);
        skipped_somewhere += listing.counts.skipped > 0 ? 1 : 0;
        EXPECT_EQ(listing.counts.enumerated, exact.counts.enumerated);
        for (size_t i = 0; i < 3 && i < exact.ranked.size(); ++i) {
            ASSERT_LT(i, listing.ranked.size());
            EXPECT_EQ(listing.ranked[i].order, exact.ranked[i].order) << "rank " << i + 1;
            EXPECT_EQ(listing.ranked[i].step_time_s, exact.ranked[i].step_time_s) << "rank " << i + 1;
        }
        for (size_t i = 0; i < 3 && i < exact.other_shapes.size(); ++i) {
            ASSERT_LT(i, listing.other_shapes.size());
            const RankedPlan& p = listing.other_shapes[i];
            EXPECT_EQ(p.order, exact.other_shapes[i].order) << "shape " << i;
            size_t rank = 1;
            for (const RankedPlan& q : exact.ranked) rank += ranks_before(q, p, RankBy::throughput) ? 1 : 0;
            size_t listed = 1;
            if (i < listing.other_shape_ranks.size()) {
                listed = listing.other_shape_ranks[i];
            } else {
                for (const RankedPlan& q : listing.ranked) listed += ranks_before(q, p, RankBy::throughput) ? 1 : 0;
            }
            EXPECT_EQ(listed, rank) << "shape " << i;
        }
    }
    EXPECT_GT(skipped_somewhere, 3) << "the floor skipped little: the test exercises little";
}

// Data parallelism only, the host's share of the step in play.
TEST(StepFloor, HuggingFaceOnOneNode) {
    std::string one_node = dense("hf");
    one_node.replace(one_node.find("num_gpus: 16"), 12, "num_gpus: 8 ");
    EXPECT_GT(check_floors(one_node, 10), 0.5);
}

}  // namespace
}  // namespace lostflops
