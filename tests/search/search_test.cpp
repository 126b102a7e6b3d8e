// The search against estimate(): counts on jobs small enough to count by
// hand; every evaluated plan carries estimate()'s figures to the bit; memory
// pruning never drops a plan estimate() says fits (random jobs). The
// ranking's own tests: search_ranking_test.cpp.
#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/search.h"
#include "search/enumerate.h"
#include "search/knobs.h"
#include "job/hardware_bounds.h"
#include "job/validate.h"
#include "search/search_test_util.h"

namespace lostflops {
namespace {

using test::load;
using test::run;
using test::tiny_job;

TEST(Search, OneGpuCountsByHand) {
    // One GPU, 4 layers, batch 4: micro-batch 1, 2 or 4; no replicas, so zero 0
    // and one overlap setting; tp 1, so no SP; recompute none, selective, full,
    // full on 1, 2 or 3 layers: 3 x 6 = 18 plans.
    const SearchResult r = run(load(tiny_job(1, 4, 4)));
    EXPECT_EQ(r.counts.enumerated, 18);
    EXPECT_EQ(r.counts.pruned_divisibility, 0);
    EXPECT_EQ(r.counts.pruned_memory + r.counts.evaluated, 18);
    EXPECT_EQ(r.counts.evaluated, 18);  // a 4-layer model fits anywhere
}

TEST(Search, TwoGpusCountsByHand) {
    // (tp, cp, pp) in {(1,1,1) dp 2, (2,1,1), (1,2,1), (1,1,2)} x micro-batch {1, 2}:
    //   (1,1,1) dp 2, mbs 1: zero 0-3 x overlap on/off x recompute 4 (2 layers) = 32
    //   (1,1,1) dp 2, mbs 2: dp*mbs does not divide the batch of 2: 32 pruned for divisibility
    //   (2,1,1): zero 0, SP off / on / on + tp-overlap = 3, recompute 4: 12 per mbs
    //   (1,2,1): replicas dp*cp = 2: 4 x 2 x 4 = 32 per mbs
    //   (1,1,2): one layer per stage: recompute 3: 3 per mbs
    const SearchResult r = run(load(tiny_job(2, 2, 2)));
    EXPECT_EQ(r.counts.enumerated, 32 + 32 + 2 * 12 + 2 * 32 + 2 * 3);
    EXPECT_EQ(r.counts.pruned_divisibility, 32);
    EXPECT_EQ(r.counts.evaluated, 32 + 24 + 64 + 6);
    EXPECT_EQ(r.counts.layouts, 7);
}

TEST(Search, FixedSettingsComeFromTheParallelSectionAndFix) {
    const SearchJob sj = load(tiny_job(2, 2, 2) + "parallel:\n  tp: 2\n");
    const PlanFix f = plan_fix_from(sj);
    ASSERT_TRUE(f.tp.has_value());
    EXPECT_EQ(*f.tp, 2);
    EXPECT_FALSE(f.pp.has_value());
    const SearchResult r = run(sj);
    EXPECT_EQ(r.counts.enumerated, 2 * 12);
    PlanFix g;
    add_plan_fix(g, "pp=2, mbs=1", "--fix");
    EXPECT_EQ(*g.pp, 2);
    EXPECT_EQ(*g.micro_batch, 1);
    EXPECT_THROW(add_plan_fix(g, "tp=x", "--fix"), InputError);
    EXPECT_THROW(add_plan_fix(g, "warp=2", "--fix"), InputError);
    EXPECT_THROW(add_plan_fix(g, "zero=4", "--fix"), InputError);
}

// Every plan the enumerator yields, put through estimate(): the ones that fit
// must be exactly the evaluated ones, with the same figures.
SearchCounts check_against_estimate(const SearchJob& sj) {
    const Calibration cal = default_calibration();
    const SearchResult r = run(sj);
    std::set<uint64_t> fitting;
    int64_t plans = 0;
    uint32_t index = 0;
    search::LayoutFix launch;  // the search's framework: the stage layouts and schedules it tries too
    if (const PlanFix f = plan_fix_from(sj); f.launch) launch.launch = static_cast<int>(*f.launch);
    search::enumerate_layouts(sj.job, [&](const search::Layout& l) {
        const Job j = search::with_layout(sj.job, l);
        if (stage_layout_issue(j)) {  // a custom stage layout this pp x vpp cannot hold: pruned
            ++index;
            return;
        }
        const search::KnobSet ks = search::knob_set(j, PlanFix{});
        // The partial depths of (zero, sp): ks.depths from the fewest that
        // fit by estimate(), found here by trying every depth.
        const auto depths = [&](int zi, int si) {
            std::vector<int> rcs;
            for (int rc = ks.rc_first; rc < ks.rc_end; ++rc) rcs.push_back(rc);
            if (ks.depths == 0) return rcs;
            int first = ks.max_depth;
            for (int k = ks.max_depth; k >= 1; --k) {
                Job t = j;
                search::apply_knob_code(t.plan, search::knob_code(ks.zero[zi], 2 + k, ks.sp[si].sp, ks.sp[si].tp_overlap,
                                                                  ks.ogr[ks.zero[zi] >= 3][0]));
                if (estimate(t, cal).memory.fits) first = k;
            }
            first = std::min(first, ks.max_depth - ks.depths + 1);
            for (int d = 0; d < ks.depths; ++d) rcs.push_back(2 + first + d);
            return rcs;
        };
        for (int zi = 0; zi < ks.zeros; ++zi)
            for (int si = 0; si < ks.sps; ++si)
                for (const int rc : depths(zi, si))
                    for (int oi = 0; oi < ks.ogrs[ks.zero[zi] >= 3]; ++oi) {
                        ++plans;
                        const uint32_t code = search::knob_code(ks.zero[zi], rc, ks.sp[si].sp, ks.sp[si].tp_overlap,
                                                                ks.ogr[ks.zero[zi] >= 3][oi]);
                        Job k = j;
                        search::apply_knob_code(k.plan, code);
                        if (estimate(k, cal).memory.fits) fitting.insert((static_cast<uint64_t>(index) << 32) | code);
                    }
        ++index;
    }, {}, launch);
    EXPECT_EQ(r.counts.enumerated - r.counts.pruned_divisibility, plans);
    EXPECT_EQ(static_cast<size_t>(r.counts.evaluated), fitting.size());
    for (const RankedPlan& p : r.ranked) {
        EXPECT_TRUE(fitting.count(p.order)) << "evaluated a plan estimate() says does not fit";
        const PlanScore s = plan_score(sj.job, r, p);
        const Estimate e = estimate(job_with_plan(sj.job, s), cal);
        EXPECT_EQ(e.step_time_s, s.step_time_s) << plan_words(s);
        EXPECT_EQ(e.memory.peak_bytes, s.peak_bytes) << plan_words(s);
        EXPECT_EQ(e.mfu, s.mfu) << plan_words(s);
        EXPECT_EQ(e.tokens_per_s_per_gpu, s.tokens_per_s_per_gpu) << plan_words(s);
    }
    return r.counts;
}

TEST(Search, PruningNeverDropsAFittingPlanOnRandomJobs) {
    std::mt19937 rng(20261122);  // seeded: same jobs every run
    SearchCounts all;
    const char* gpus_kind[] = {"h100-sxm", "a100-sxm-40gb"};
    for (int trial = 0; trial < 12; ++trial) {
        const int gpus = 1 << std::uniform_int_distribution<int>(1, 4)(rng);
        const int layers = std::uniform_int_distribution<int>(2, 12)(rng);
        const int64_t batch = int64_t{1} << std::uniform_int_distribution<int>(1, 5)(rng);
        // Wide enough layers that memory prunes some plans on a 40 GB GPU.
        const int64_t hidden = 2048 * std::uniform_int_distribution<int>(1, 4)(rng);
        std::string text = tiny_job(gpus, layers, batch, gpus_kind[trial % 2]);
        const std::vector<std::string> set = {"model.hidden_size=" + std::to_string(hidden),
                                              "model.num_attention_heads=8", "model.intermediate_size=" +
                                                                                 std::to_string(4 * hidden),
                                              "model.vocab_size=32000", "training.seq_length=8192"};
        SCOPED_TRACE("gpus " + std::to_string(gpus) + " layers " + std::to_string(layers) + " hidden " +
                     std::to_string(hidden) + " batch " + std::to_string(batch));
        const SearchCounts c = check_against_estimate(load(text, set));
        all.pruned_memory += c.pruned_memory;
        all.evaluated += c.evaluated;
    }
    // The jobs straddle the memory limit: both outcomes occur.
    EXPECT_GT(all.pruned_memory, 1000);
    EXPECT_GT(all.evaluated, 1000);
}

// A TPU job (estimate/memory_xla.cpp, XLA's fused elementwise work): the
// search prices and prunes its plans with estimate()'s figures too.
TEST(Search, TpuPlansHaveEstimatesFigures) {
    const std::vector<std::string> set = {"model.hidden_size=4096", "model.num_attention_heads=32",
                                          "model.intermediate_size=14336", "model.vocab_size=32000",
                                          "training.seq_length=2048"};
    const SearchCounts c = check_against_estimate(load(tiny_job(16, 8, 64, "tpu-v5e"), set));
    EXPECT_GT(c.evaluated, 10);
    EXPECT_GT(c.pruned_memory, 0);  // 16 GiB chips: memory decides some plans
}

TEST(Search, StacksOfKindsAndCustomLayoutsHaveEstimatesFigures) {
    // A hybrid stack (Mamba-2, attention, MLP and MoE layers) and a stack of
    // MLA layers, dense first then MoE with shared experts; with first/last
    // stage layer counts.
    const std::string hybrid = "model:\n  model_type: nemotron_h\n  num_hidden_layers: 6\n"
                               "  hybrid_override_pattern: \"M*-EM-\"\n  hidden_size: 2048\n"
                               "  num_attention_heads: 4\n  num_key_value_heads: 2\n  head_dim: 64\n"
                               "  intermediate_size: 1024\n  mlp_hidden_act: relu2\n  num_experts: 4\n"
                               "  num_experts_per_tok: 2\n  moe_intermediate_size: 256\n  mamba_num_heads: 8\n"
                               "  mamba_head_dim: 512\n  n_groups: 2\n  ssm_state_size: 32\n  vocab_size: 1000\n";
    const std::string mla = "model:\n  model_type: deepseek_v3\n  num_hidden_layers: 6\n  hidden_size: 2048\n"
                            "  num_attention_heads: 4\n  q_lora_rank: 64\n  kv_lora_rank: 32\n"
                            "  qk_nope_head_dim: 32\n  qk_rope_head_dim: 16\n  v_head_dim: 32\n"
                            "  intermediate_size: 1024\n  n_routed_experts: 4\n  num_experts_per_tok: 2\n"
                            "  moe_intermediate_size: 256\n  n_shared_experts: 1\n  first_k_dense_replace: 1\n"
                            "  num_nextn_predict_layers: 1\n  vocab_size: 1000\n";
    const std::string rest = "cluster:\n  gpu: a100-sxm-40gb\n  num_gpus: 4\n  gpus_per_node: 8\n"
                             "  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n"
                             "training:\n  seq_length: 32768\n  global_batch_size: 8\n  framework: megatron-core\n";
    int64_t pruned = 0;
    for (const std::string& model : {hybrid, mla}) {
        const SearchCounts plain = check_against_estimate(load(model + rest));
        EXPECT_GT(plain.evaluated, 20);
        pruned += plain.pruned_memory;
        const SearchCounts ends = check_against_estimate(load(model + rest + "parallel:\n  first_stage_layers: 2\n"));
        EXPECT_GT(ends.evaluated, 5);
        EXPECT_LT(ends.evaluated, plain.evaluated);  // pp 1 and the splits that leave uneven ranks are gone
    }
    EXPECT_GT(pruned, 0);  // memory decides some plans
}

TEST(Search, ExpertLayoutsAreSearchedWithEstimatesFigures) {
    // 16 experts, top 8, on 16 GPUs in two nodes: ep, etp and the dispatcher
    // are searched; every plan has estimate()'s figures (check_against_estimate);
    // folded layouts (ep > dp x cp, possible only over tp) are among them;
    // DeepEP's one copy per node wins where the expert group spans the two
    // nodes (4 network copies per token with alltoall at ep 16, 1 with deepep),
    // the all-to-all inside a node.
    const std::string job = "model:\n  num_hidden_layers: 4\n  hidden_size: 512\n  num_attention_heads: 4\n"
                            "  intermediate_size: 1024\n  num_local_experts: 16\n  num_experts_per_tok: 8\n"
                            "  vocab_size: 1000\n  hidden_act: silu\n"
                            "cluster:\n  gpu: h100-sxm\n  num_gpus: 16\n  gpus_per_node: 8\n"
                            "  intra_node: {bandwidth_GBps: 450, latency_us: 2}\n"
                            "  inter_node: {bandwidth_GBps: 50, latency_us: 5}\n"
                            "training:\n  seq_length: 1024\n  global_batch_size: 16\n  framework: megatron-core\n";
    const SearchJob sj = load(job);
    const SearchCounts c = check_against_estimate(sj);
    EXPECT_GT(c.evaluated, 100);
    const SearchResult r = run(sj);
    bool folded = false, deepep = false, alltoall = false, etp_below_tp = false;
    for (const RankedPlan& rp : r.ranked) {
        const PlanScore ps = plan_score(sj.job, r, rp);
        const ParallelPlan& p = ps.plan;
        folded |= p.ep > p.dp * p.cp;
        deepep |= p.moe_dispatcher == MoeDispatcher::deepep;
        alltoall |= p.moe_dispatcher == MoeDispatcher::alltoall && p.ep > 1;
        if (p.ep == 16) { EXPECT_EQ(p.moe_dispatcher, MoeDispatcher::deepep); }
        etp_below_tp |= p.expert_tp() < p.tp;
    }
    EXPECT_TRUE(folded);
    EXPECT_TRUE(deepep);
    EXPECT_TRUE(alltoall);
    EXPECT_TRUE(etp_below_tp);
    // Fixing them keeps only such plans.
    const SearchJob fixed = load(job + "parallel:\n  tp: 2\n  ep: 8\n  etp: 1\n  moe_dispatcher: allgather\n");
    const SearchResult rf = run(fixed);
    ASSERT_FALSE(rf.ranked.empty());
    for (const RankedPlan& rp : rf.ranked) {
        const PlanScore ps = plan_score(fixed.job, rf, rp);
        const ParallelPlan& p = ps.plan;
        EXPECT_EQ(p.ep, 8);
        EXPECT_EQ(p.expert_tp(), 1);
        EXPECT_EQ(p.moe_dispatcher, MoeDispatcher::allgather);
    }
}

TEST(Search, PlansPerLayoutDoNotGrowWithTheLayers) {
    // Issue 20 item 6: the most layers a model may have (10,000,
    // job/hardware_bounds.h) of hidden 64 on 8 GPUs, every plan searched
    // (pp 1 holds them all in one stage).
    const std::string text = "model: {num_hidden_layers: " + std::to_string(bounds::kMaxLayers) +
                             ", hidden_size: 64, num_attention_heads: 2, intermediate_size: 256, vocab_size: 1000}\n" +
                             R"(cluster: {preset: dgx-a100, num_gpus: 8}
training: {seq_length: 2048, global_batch_size: 8}
)";
    const SearchJob sj = parse_search_job(text, "job.yaml", {}, SearchJobPlan::ignore);
    SearchOptions o;
    o.threads = 1;
    const SearchResult r = search_plans(sj.job, default_calibration(), o);
    // zero 0-3 x overlap 2 x sp 3 x (none, selective, full and the window) per layout.
    const int64_t per_layout = 4 * 2 * 3 * (3 + search::kPartialDepths);
    EXPECT_LE(r.counts.enumerated - r.counts.pruned_divisibility, static_cast<int64_t>(r.layouts.size()) * per_layout);
    EXPECT_GT(r.counts.evaluated, 0);
}

TEST(Search, NothingFitsGivesNoPlans) {
    // 405B parameters on 8 GPUs: nothing fits.
    const SearchJob sj = load("model: {preset: llama3.1-405b}\ncluster: {preset: dgx-h100, num_gpus: 8}\n"
                              "training: {seq_length: 8192, global_batch_size: 16}\n");
    const SearchResult r = run(sj, 2);
    EXPECT_EQ(r.counts.evaluated, 0);
    EXPECT_GT(r.counts.pruned_memory, 0);
    EXPECT_TRUE(r.ranked.empty());
}

}  // namespace
}  // namespace lostflops
