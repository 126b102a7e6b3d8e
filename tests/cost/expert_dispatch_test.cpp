// Expert parallelism as Megatron-Core runs it (README "Expert parallelism"):
// the folded expert rank order and its placement on nodes, the tokens a rank
// dispatches, the bytes each dispatcher sends per fabric, and the plan rules
// (ep up to tp*cp*dp / etp) — every figure computed by hand in the comments.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cost/expert_dispatch.h"
#include "cost/grouped_gemm.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// 64 experts of width 1024, top 8, hidden 2048, on 64 H100 (8 per node).
std::string moe_job(const std::string& parallel, int gpus = 64) {
    return "model:\n  num_hidden_layers: 4\n  hidden_size: 2048\n  num_attention_heads: 16\n"
           "  num_local_experts: 64\n  num_experts_per_tok: 8\n  moe_intermediate_size: 1024\n"
           "  intermediate_size: 4096\n  vocab_size: 32000\n  hidden_act: silu\n"
           "cluster: {gpu: h100-sxm, num_gpus: " + std::to_string(gpus) + ", gpus_per_node: 8,\n"
           "  intra_node: {bandwidth_GBps: 450, latency_us: 2}, inter_node: {bandwidth_GBps: 50, latency_us: 5}}\n"
           "training: {seq_length: 4096, global_batch_size: 256, micro_batch_size: 2}\n"
           "parallel: " + parallel + "\n";
}

Job load(const std::string& parallel, int gpus = 64) { return parse_job(moe_job(parallel, gpus), "job.yaml"); }

std::string refusal(const std::string& parallel, int gpus = 64) {
    try {
        load(parallel, gpus);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(ExpertFolding, EtpDefaultsToTp) {
    // Megatron-Core: --expert-tensor-parallel-size None -> tensor_model_parallel_size.
    const Job j = load("{tp: 2, ep: 8, sequence_parallel: true}");
    EXPECT_EQ(j.plan.etp, 0);
    EXPECT_EQ(j.plan.expert_tp(), 2);
    // dp = 64 / 2 = 32; edp = tp*cp*dp / (etp*ep) = 64 / 16 = 4.
    EXPECT_EQ(j.plan.expert_dp(), 4);
}

TEST(ExpertFolding, EpNotDividingDpIsValidWhereMegatronAllows) {
    // tp 8, dp 8: the old rule (ep | dp*cp) refused ep 16; folding runs it
    // over tp*dp = 64 ranks with etp 1 (16 divides 64 / 1).
    const Job j = load("{tp: 8, ep: 16, etp: 1, sequence_parallel: true}");
    EXPECT_EQ(j.plan.dp, 8);
    EXPECT_EQ(j.plan.expert_dp(), 4);  // 64 / (1 * 16)
    // ep 64 = every rank of the stage: tp 8 x dp 8 folded.
    EXPECT_EQ(load("{tp: 8, ep: 64, etp: 1, sequence_parallel: true}").plan.expert_dp(), 1);
}

TEST(ExpertFolding, RefusesWhereMegatronDoes) {
    // etp defaults to tp = 8: etp x ep = 8 x 16 = 128 does not divide 64.
    const std::string e1 = refusal("{tp: 8, ep: 16, sequence_parallel: true}");
    EXPECT_NE(e1.find("parallel.ep"), std::string::npos) << e1;
    EXPECT_NE(e1.find("etp x ep = 8 x 16 = 128 must divide tp x cp x dp = 8 x 1 x 8 = 64"), std::string::npos) << e1;
    EXPECT_NE(e1.find("parallel.etp: 1"), std::string::npos) << e1;
    // Given etp: the error names it.
    const std::string e2 = refusal("{tp: 2, ep: 32, etp: 4, sequence_parallel: true}");
    EXPECT_NE(e2.find("parallel.etp"), std::string::npos) << e2;
    // 64 experts do not split over ep 128 (on 128 GPUs).
    const std::string e3 = refusal("{ep: 128}", 128);
    EXPECT_NE(e3.find("not divisible by ep 128"), std::string::npos) << e3;
    // etp must divide the experts' width 1024.
    const std::string e4 = refusal("{tp: 1, ep: 1, etp: 3, dp: 64}");
    EXPECT_FALSE(e4.empty());
}

TEST(ExpertFolding, DispatcherTypoGetsDidYouMean) {
    const std::string e = refusal("{ep: 8, moe_dispatcher: alltoal}");
    EXPECT_NE(e.find("parallel.moe_dispatcher"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean `alltoall`?"), std::string::npos) << e;
    const std::string e2 = refusal("{ep: 8, moe_max_nodes: 2}");
    EXPECT_NE(e2.find("applies to moe_dispatcher: deepep"), std::string::npos) << e2;
}

TEST(ExpertPlacement, InsideTheNodeWhenEtpTimesEpFits) {
    // etp 1, ep 8 on 8-GPU nodes: 8 consecutive ranks, one node.
    ParallelPlan p;
    p.tp = 2;
    p.etp = 1;
    p.ep = 8;
    p.dp = 32;
    ExpertGroups g = place_expert_groups(p, 8);
    EXPECT_EQ(g.ep.size, 8);
    EXPECT_EQ(g.ep.nodes, 1);
    EXPECT_EQ(g.ep.per_node, 8);
    // The same ep with etp = tp = 2: 8 ranks 2 apart span 16 ranks = 2 nodes.
    p.etp = 0;
    g = place_expert_groups(p, 8);
    EXPECT_EQ(g.ep.nodes, 2);
    EXPECT_EQ(g.ep.per_node, 4);
    EXPECT_EQ(g.etp.size, 2);
    EXPECT_EQ(g.etp.nodes, 1);
    // edp = 64 / 16 = 4 ranks 16 apart: 4 nodes.
    EXPECT_EQ(g.edp.size, 4);
    EXPECT_EQ(g.edp.nodes, 4);
    // Mixtral-8x22B's plan (tp 2, cp 8, ep 8 on 256 GPUs): the old order put
    // ep after tp and cp (stride 16: 8 nodes); folded with etp 2 it is 8
    // ranks 2 apart: 2 nodes.
    ParallelPlan q;
    q.tp = 2;
    q.cp = 8;
    q.ep = 8;
    q.dp = 4;
    q.pp = 4;
    EXPECT_EQ(place_expert_groups(q, 8).ep.nodes, 2);
    q.etp = 1;
    EXPECT_EQ(place_expert_groups(q, 8).ep.nodes, 1);
}

TEST(ExpertDispatch, LoadFactorUnderAnExpertCapacity) {
    // Megatron-Core's token dropping (moe_utils.py apply_router_token_dropping):
    // dropless the imbalance; a capacity caps it; padding sets it.
    ParallelPlan p;
    p.moe_imbalance = 1.4;
    EXPECT_DOUBLE_EQ(moe_load_factor(p), 1.4);
    p.moe_capacity_factor = 1.2;
    EXPECT_DOUBLE_EQ(moe_load_factor(p), 1.2);  // the busiest expert drops to its capacity
    p.moe_capacity_factor = 2.0;
    EXPECT_DOUBLE_EQ(moe_load_factor(p), 1.4);  // nothing reaches the capacity
    p.moe_pad_to_capacity = true;
    EXPECT_DOUBLE_EQ(moe_load_factor(p), 2.0);  // every expert padded to 2 x its share
    p.moe_imbalance = 1.0;
    p.moe_capacity_factor = 1.0;
    EXPECT_DOUBLE_EQ(moe_load_factor(p), 1.0);
}

TEST(ExpertDispatch, TokensARankHoldsWithSequenceParallelism) {
    // b 2, s 4096, cp 1, tp 2 with SP: 2*4096/2 = 4096 tokens; without SP 8192.
    const Job sp = load("{tp: 2, ep: 8, sequence_parallel: true}");
    const LayerWork w = layer_work(sp.model, sp.model.kind(0), sp.training, sp.plan);
    EXPECT_DOUBLE_EQ(w.moe_tokens, 4096);
    EXPECT_DOUBLE_EQ(w.moe_top_k, 8);
    EXPECT_DOUBLE_EQ(w.moe_token_bytes, 2048 * 2);
    EXPECT_EQ(w.moe_dispatches_fwd, 2);
    const Job nosp = load("{tp: 2, ep: 8, sequence_parallel: false}");
    EXPECT_DOUBLE_EQ(layer_work(nosp.model, nosp.model.kind(0), nosp.training, nosp.plan).moe_tokens, 8192);
    // cp 2 halves it again: 2*4096/(2*2) = 2048.
    const Job cp = load("{tp: 2, cp: 2, ep: 8, sequence_parallel: true}");
    EXPECT_DOUBLE_EQ(layer_work(cp.model, cp.model.kind(0), cp.training, cp.plan).moe_tokens, 2048);
}

TEST(ExpertDispatch, ExpertGemmsUnderFolding) {
    // tp 2, etp 1, ep 8: each rank holds 4096 tokens, runs 4096*8 pairs over
    // 64/8 = 8 local experts: 4096 rows each, full width 1024 (gate+up 2048).
    const Job j = load("{tp: 2, ep: 8, etp: 1, sequence_parallel: true}");
    const LayerWork w = layer_work(j.model, j.model.kind(0), j.training, j.plan);
    const GemmShape* up = nullptr;
    for (int i = 0; i < w.gemm_count; ++i)
        if (w.gemms[i].grouped && !up) up = &w.gemms[i];
    ASSERT_NE(up, nullptr);
    EXPECT_DOUBLE_EQ(up->m, 4096);
    EXPECT_DOUBLE_EQ(up->n, 2048);
    EXPECT_DOUBLE_EQ(up->count, 8);
    // etp 2: the pair gathers 2*4096 tokens, half the width each: same FLOPs.
    const Job j2 = load("{tp: 2, ep: 8, etp: 2, sequence_parallel: true}");
    const LayerWork w2 = layer_work(j2.model, j2.model.kind(0), j2.training, j2.plan);
    for (int i = 0; i < w2.gemm_count; ++i)
        if (w2.gemms[i].grouped) {
            EXPECT_DOUBLE_EQ(w2.gemms[i].m, 8192);
            EXPECT_DOUBLE_EQ(w2.gemms[i].n, 2048.0 / 2);
            break;
        }
    // Expert weights per rank: 8 local experts x 3 x 2048 x 1024 / etp.
    EXPECT_DOUBLE_EQ(w.expert_params, 8.0 * 3 * 2048 * 1024);
    EXPECT_DOUBLE_EQ(w2.expert_params, 8.0 * 3 * 2048 * 1024 / 2);
}

TEST(ExpertDispatch, AllToAllBytesByHand) {
    // 4096 tokens x top 8 x 4096 bytes = 134,217,728 bytes of copies.
    const double copies = 4096.0 * 8 * 4096;
    // ep 8 in one node: (ep-1)/ep leaves the rank, all over NVLink.
    const GroupPlacement one_node = place_group(8, 1, 8);
    const DispatchBytes a = dispatch_bytes(MoeDispatcher::alltoall, 4096, 8, 4096, one_node, 0);
    EXPECT_DOUBLE_EQ(a.nvlink, copies * 7 / 8);
    EXPECT_DOUBLE_EQ(a.network, 0);
    // ep 16 over 2 nodes (8 per node): 7/16 NVLink, 8/16 network; sent = 15/16.
    const GroupPlacement two_nodes = place_group(16, 1, 8);
    const DispatchBytes b = dispatch_bytes(MoeDispatcher::alltoall, 4096, 8, 4096, two_nodes, 0);
    EXPECT_DOUBLE_EQ(b.nvlink, copies * 7 / 16);
    EXPECT_DOUBLE_EQ(b.network, copies * 8 / 16);
    EXPECT_DOUBLE_EQ(b.sent(), copies * 15 / 16);
}

TEST(ExpertDispatch, DeepEpSendsOneCopyPerNode) {
    // EP 64 over 8 nodes, top 8, at most M = 4 nodes per token (DeepSeek-V3):
    // a token reaches 4 nodes, 7/8 of them remote: 4 x 7/8 = 3.5 copies over
    // the network instead of 8 x 56/64 = 7 with the plain all-to-all.
    const GroupPlacement ep64 = place_group(64, 1, 8);
    ASSERT_EQ(ep64.nodes, 8);
    const double tokens = 4096, B = 7168 * 2;
    const DispatchBytes d = dispatch_bytes(MoeDispatcher::deepep, tokens, 8, B, ep64, 4);
    EXPECT_DOUBLE_EQ(d.network, tokens * B * 3.5);
    EXPECT_DOUBLE_EQ(d.nvlink, tokens * 8 * B * 7 / 8);
    const DispatchBytes a = dispatch_bytes(MoeDispatcher::alltoall, tokens, 8, B, ep64, 4);
    EXPECT_DOUBLE_EQ(a.network, tokens * 8 * B * 56 / 64);
    // Not node-limited (M 0): min(8 nodes, top 8) = 8 nodes, 7 remote.
    EXPECT_DOUBLE_EQ(dispatch_bytes(MoeDispatcher::deepep, tokens, 8, B, ep64, 0).network, tokens * B * 7);
}

TEST(ExpertDispatch, DeepEpNetworkAtItsMeasuredEfficiency) {
    // EP 64 over 8 nodes: the network share at DeepEP's published internode
    // bandwidth (docs/legacy.md: EP32 58/57, EP64 51/50 GB/s logical on 50
    // GB/s NICs; on the wire 3/4 and 3.5/4 of it): 43.65 GB/s, 0.873 of the
    // link, not NCCL's bus_eff_inter. By hand for 4,096 BF16 tokens of hidden
    // 7168, 4 nodes of 8: 3.5 copies remote, 7/8 of 8 copies over NVLink.
    const Job job = load("{ep: 64, moe_dispatcher: deepep}");
    const Calibration cal;
    const CommModel cm = make_comm_model(job.cluster, cal);
    const ExpertGroups g = place_expert_groups(job.plan, 8);
    ASSERT_EQ(g.ep.nodes, 8);
    const double tokens = 4096, B = 7168 * 2;
    const double eff = (58.0 * 0.75 + 57.0 * 0.75 + 51.0 * 0.875 + 50.0 * 0.875) / 4 / 50;
    EXPECT_NEAR(eff, 0.873, 5e-4);
    const double net = tokens * B * 3.5 / (cm.inter.bandwidth_GBps * 1e9 * eff);
    const double nvl = tokens * 8 * B * 7 / 8 / (cm.intra.bandwidth_GBps * 1e9 * cal.bus_eff_intra);
    ASSERT_GT(net, nvl);
    const double one_way = net + collective_latency_s(cm, Collective::all_to_all, g.ep);
    EXPECT_NEAR(expert_dispatch_s(cm, g, job.plan, tokens, 8, B, false), 2 * one_way, 1e-12);
}

TEST(ExpertDispatch, AllGatherSendsTheTokensOnce) {
    // etp*ep = 8 ranks in a node: ring all-gather sends 7 x the rank's tokens.
    const DispatchBytes g = dispatch_bytes(MoeDispatcher::allgather, 4096, 8, 4096, place_group(8, 1, 8), 0);
    EXPECT_DOUBLE_EQ(g.nvlink, 4096.0 * 4096 * 7);
    EXPECT_DOUBLE_EQ(g.network, 0);
}

TEST(ExpertDispatch, TimeOnTheRightFabric) {
    // Same ep 8 and tokens: inside a node (etp 1) the all-to-all runs on
    // NVLink, across two nodes (etp 2) it is bound by the 50 GB/s network.
    const Job in = load("{tp: 2, ep: 8, etp: 1, sequence_parallel: true}");
    const Job out = load("{tp: 2, ep: 8, etp: 2, sequence_parallel: true}");
    const Calibration cal;
    const CommModel cm = make_comm_model(in.cluster, cal);
    const ExpertGroups gin = place_expert_groups(in.plan, 8), gout = place_expert_groups(out.plan, 8);
    const double t_in = expert_dispatch_s(cm, gin, in.plan, 4096, 8, 4096, false);
    // By hand: two all-to-alls of 134,217,728 bytes, 7/8 over 450 GB/s x bus_eff_intra.
    const double bw = 450e9 * cal.bus_eff_intra;
    const double by_hand = 2 * (4096.0 * 8 * 4096 * 7 / 8 / bw + collective_latency_s(cm, Collective::all_to_all, gin.ep));
    EXPECT_NEAR(t_in, by_hand, 1e-12);
    EXPECT_GT(expert_dispatch_s(cm, gout, out.plan, 4096, 8, 4096, false), 3 * t_in);
    // Imbalance: the busiest rank's copies.
    ParallelPlan skew = in.plan;
    skew.moe_imbalance = 1.5;
    EXPECT_GT(expert_dispatch_s(cm, gin, skew, 4096, 8, 4096, false), 1.45 * t_in);
}

TEST(ExpertDispatch, OverlapImbalanceAndCapacityInTheEstimate) {
    // ep 16 over two nodes (etp 1): the all-to-all is exposed by default;
    // moe_a2a_overlap hides it behind compute (what remains exposed plus the
    // overlap slowdown is less); an imbalance of 1.5 makes the step slower;
    // a capacity factor of 1.25 caps it at 1.25 (tokens past it dropped), and
    // padded to capacity every expert runs 1.25 x its share, whatever the
    // imbalance.
    const std::string plan = "{tp: 2, ep: 16, etp: 1, sequence_parallel: true";
    const Calibration cal = default_calibration();
    const Estimate base = estimate(load(plan + "}"), cal);
    const Estimate hidden = estimate(load(plan + ", moe_a2a_overlap: true}"), cal);
    const Estimate skew = estimate(load(plan + ", moe_imbalance: 1.5}"), cal);
    EXPECT_GT(base.breakdown.ep_comm_s, 0);
    EXPECT_LT(hidden.breakdown.ep_comm_s, base.breakdown.ep_comm_s);
    EXPECT_GT(skew.step_time_s, base.step_time_s);
    EXPECT_GT(skew.breakdown.compute_s, base.breakdown.compute_s);
    for (const auto& w : job_warnings(load(plan + ", moe_capacity_factor: 1.25}")))
        EXPECT_NE(w.key, "parallel.moe_capacity_factor") << w.message;  // modelled now
    const Estimate capped = estimate(load(plan + ", moe_imbalance: 1.5, moe_capacity_factor: 1.25}"), cal);
    const Estimate at_cap = estimate(load(plan + ", moe_imbalance: 1.25}"), cal);
    EXPECT_DOUBLE_EQ(capped.step_time_s, at_cap.step_time_s);
    const Estimate loose = estimate(load(plan + ", moe_imbalance: 1.5, moe_capacity_factor: 2}"), cal);
    EXPECT_DOUBLE_EQ(loose.step_time_s, skew.step_time_s);  // nothing dropped
    const Estimate padded =
        estimate(load(plan + ", moe_capacity_factor: 1.25, moe_pad_to_capacity: true}"), cal);
    EXPECT_DOUBLE_EQ(padded.step_time_s, at_cap.step_time_s);  // balanced routing padded to 1.25
    const Estimate padded_one =
        estimate(load(plan + ", moe_imbalance: 1.5, moe_capacity_factor: 1, moe_pad_to_capacity: true}"), cal);
    EXPECT_DOUBLE_EQ(padded_one.step_time_s, base.step_time_s);  // NeMo's performance recipes: exactly balanced
    // The all-gather dispatcher moves the tokens once instead of top-8 copies:
    // with ep 4 in one node it sends 3 x the tokens against the all-to-all's
    // 3/4 x 8 = 6 x.
    const Estimate a2a = estimate(load("{tp: 1, ep: 4}"), cal);
    const Estimate ag = estimate(load("{tp: 1, ep: 4, moe_dispatcher: allgather}"), cal);
    EXPECT_LT(ag.breakdown.ep_comm_s, a2a.breakdown.ep_comm_s);
}

TEST(GroupedGemm, TableMatchesTheCommittedCsv) {
    std::ifstream f(test::source_path("data/calibration/grouped_gemm_deepgemm.csv"));
    ASSERT_TRUE(f) << "data/calibration/grouped_gemm_deepgemm.csv";
    std::string line;
    size_t rows = 0;
    const auto table = deepgemm_grouped_rows();
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#' || line.rfind("layout", 0) == 0) continue;
        std::stringstream ss(line);
        std::string layout, groups, m, n, k, tf;
        std::getline(ss, layout, ',');
        std::getline(ss, groups, ',');
        std::getline(ss, m, ',');
        std::getline(ss, n, ',');
        std::getline(ss, k, ',');
        std::getline(ss, tf, ',');
        ASSERT_LT(rows, table.size());
        EXPECT_DOUBLE_EQ(table[rows].m_per_group, std::stod(m));
        EXPECT_DOUBLE_EQ(table[rows].n, std::stod(n));
        EXPECT_DOUBLE_EQ(table[rows].k, std::stod(k));
        EXPECT_DOUBLE_EQ(table[rows].tflops, std::stod(tf));
        ++rows;
    }
    EXPECT_EQ(rows, table.size());
}

TEST(GroupedGemm, FewRowsPerGroupLoseEfficiency) {
    // By hand from DeepGEMM's table: 256 rows (932/1346 + 815/1214)/2.
    EXPECT_NEAR(grouped_gemm_row_factor(256), (932.0 / 1346 + 815.0 / 1214) / 2, 1e-12);
    EXPECT_NEAR(grouped_gemm_row_factor(512), (1040.0 / 1346 + 916.0 / 1214) / 2, 1e-12);
    EXPECT_DOUBLE_EQ(grouped_gemm_row_factor(4096), 1.0);
    EXPECT_DOUBLE_EQ(grouped_gemm_row_factor(100000), 1.0);
    // Same FLOPs in 32 groups of 256 rows take longer than in 2 groups of 4096.
    Gpu h100;
    h100.peak_bf16_tflops = 989;
    h100.peak_fp16_tflops = 989;
    h100.hbm_GBps = 3350;
    h100.sm_count = 132;
    h100.arch = "hopper";
    const DeviceModel d = make_device_model(h100, Precision::bf16, default_calibration());
    EXPECT_GT(grouped_gemm_time_s(d, 256, 4096, 7168, 32), 1.3 * grouped_gemm_time_s(d, 4096, 4096, 7168, 2));
    // 20 rows are padded to a 128-row block.
    EXPECT_GT(grouped_gemm_time_s(d, 20, 4096, 7168, 8), 0.9 * grouped_gemm_time_s(d, 128, 4096, 7168, 8));
}

}  // namespace
}  // namespace lostflops
