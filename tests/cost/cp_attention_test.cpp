// Context-parallel attention by variant (cost/cp_attention.h): the ring's
// steps with their per-step latency and the kernel's rate on the split
// blocks, the all-gather and the all-to-all, figures by hand; and the
// job setting parallel.cp_comm_type with its framework defaults.
#include <gtest/gtest.h>

#include "cost/cp_attention.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"

namespace lostflops {
namespace {

// A fabric with round numbers: NVLink 100 GB/s and 1 us a hop, the network
// 10 GB/s and 5 us, no launch cost, links used in full, no measured curves.
struct Fabric {
    Calibration cal = default_calibration();
    CommModel cm;
    Fabric() {
        cal.nccl.clear();
        cal.bus_eff_intra = cal.bus_eff_inter = cal.p2p_eff = 1.0;
        cal.collective_launch_us = 0;
        cm.intra = Link{100, 1};
        cm.inter = Link{10, 5};
        cm.cal = &cal;
    }
};

constexpr double us = 1e-6;

CpAttentionRates rates() {
    CpAttentionRates r;
    r.diag_fwd = r.diag_bwd = 1e15;  // the causal diagonal block
    r.off_fwd = r.off_bwd = 5e14;    // the smaller unmasked blocks run at half the rate
    r.whole_fwd = r.whole_bwd = 1e15;
    return r;
}

GroupPlacement group(int size, int per_node, int nodes) {
    GroupPlacement g;
    g.size = size;
    g.per_node = per_node;
    g.nodes = nodes;
    return g;
}

TEST(CpAttention, RingStepsHideEachTransferUnderItsBlock) {
    const Fabric f;
    // cp 4 in one node; 4e9 FLOPs: 1e9 a step, the diagonal 1 us forward,
    // an off-diagonal block 2 us; backward 2.5x: 2.5 us and 5 us.
    const CpAttentionWork w{CpCommType::p2p, 4, 4e9, 1e6, 0, 2e6};
    const CpAttentionTime t = cp_attention_time(w, rates(), f.cm, cp_placement(group(4, 4, 1)), 0.1);
    EXPECT_NEAR(t.fwd_s, (1 + 3 * 2) * us, 1e-12);
    // Corrections, 3 extra steps: the output (2 MB) read twice and written
    // once; backward dQ (2 MB) and dK/dV (1 MB) accumulated the same way.
    EXPECT_EQ(t.extra_bytes_fwd, 3 * 3 * 2e6);
    EXPECT_EQ(t.extra_bytes_bwd, 3 * 3 * 3e6);
    EXPECT_NEAR(t.bwd_s, (2.5 + 3 * 5) * us, 1e-12);
    // One block: 1 MB / 100 GB/s = 10 us + 1 us of the hop = 11 us; two: 21 us.
    // Forward: 11 under 1 (10 exposed + 0.1 x 1), twice 11 under 2 (9 + 0.2).
    EXPECT_NEAR(t.comm_fwd_s, (10.1 + 2 * 9.2) * us, 1e-12);
    // Backward: K/V 11 under 2.5 (8.5 + 0.25); K/V + dK/dV 21 under 5 twice
    // (16 + 0.5); dK/dV 11 under 5 (6 + 0.5).
    EXPECT_NEAR(t.comm_bwd_s, (8.75 + 2 * 16.5 + 6.5) * us, 1e-12);
    EXPECT_EQ(t.extra_kernels_fwd, 6);
    EXPECT_EQ(t.extra_kernels_bwd, 6);
}

TEST(CpAttention, HiddenRingStillCostsTheSlowdownOfItsSMs) {
    const Fabric f;
    // 10 kB a block: 0.1 us + 1 us of latency = 1.1 us a step, under blocks of
    // 1 and 2 us (forward): 0.1 exposed + 0.1 x 1, then 0 + 0.1 x 1.1 twice.
    const CpAttentionWork w{CpCommType::p2p, 4, 4e9, 1e4, 0, 0};
    const CpAttentionTime t = cp_attention_time(w, rates(), f.cm, cp_placement(group(4, 4, 1)), 0.1);
    EXPECT_NEAR(t.comm_fwd_s, (0.1 + 0.1 + 2 * 0.11) * us, 1e-12);
    EXPECT_GT(t.comm_bwd_s, 0);
    const CpAttentionTime free = cp_attention_time(w, rates(), f.cm, cp_placement(group(4, 4, 1)), 0.0);
    EXPECT_NEAR(free.comm_fwd_s, 0.1 * us, 1e-12);
}

TEST(CpAttention, RingAcrossNodesRunsAtTheSlowestHop) {
    const Fabric f;
    const CpPlacement at = cp_placement(group(4, 2, 2));
    EXPECT_EQ(at.hop.nodes, 2);
    EXPECT_EQ(at.hop.per_node, 1);
    // cp 2: 1 MB over the network, 100 us + 5 us, under the 2 us diagonal
    // block (4e9 FLOPs, 2e9 a step): 103 exposed + 0.1 x 2.
    const CpAttentionWork w{CpCommType::p2p, 2, 4e9, 1e6, 0, 0};
    const CpAttentionTime t = cp_attention_time(w, rates(), f.cm, at, 0.1);
    EXPECT_NEAR(t.comm_fwd_s, (103 + 0.2) * us, 1e-12);
    // Backward: K/V under the 5 us diagonal, dK/dV under the 10 us half block.
    EXPECT_NEAR(t.comm_bwd_s, (100 + 0.5 + 95 + 1.0) * us, 1e-12);
}

TEST(CpAttention, RingHopIsASendRecvAtTheP2pEfficiency) {
    // A ring hop is one NCCL send/recv, priced as the pipeline's sends: the
    // link at p2p_eff, whatever the collectives' bus efficiency.
    Fabric f;
    f.cal.p2p_eff = 0.8;
    f.cal.bus_eff_inter = 0.95;
    const CpPlacement at = cp_placement(group(4, 2, 2));
    // 1 MB between nodes: 1e6 / (10 GB/s x 0.8) = 125 us, + 5 us.
    EXPECT_NEAR(collective_time_s(f.cm, Collective::send_recv, at.hop, 1e6), 130 * us, 1e-12);
    f.cal.bus_eff_inter = 0.5;  // no effect on a send/recv
    EXPECT_NEAR(collective_time_s(f.cm, Collective::send_recv, at.hop, 1e6), 130 * us, 1e-12);
    // Inside a node: 1e6 / (100 GB/s x 0.8) = 12.5 us, + 1 us.
    const CpPlacement in = cp_placement(group(4, 4, 1));
    EXPECT_NEAR(collective_time_s(f.cm, Collective::send_recv, in.hop, 1e6), 13.5 * us, 1e-12);
}

TEST(CpAttention, AllGatherIsExposedAndGathersAgainInBackward) {
    const Fabric f;
    // 4 blocks of 1 MB gathered: 3/4 x 4 MB / 100 GB/s = 30 us + 3 hops of 1 us.
    const CpAttentionWork w{CpCommType::allgather, 4, 4e9, 1e6, 0, 0};
    const CpAttentionTime t = cp_attention_time(w, rates(), f.cm, cp_placement(group(4, 4, 1)), 0.1);
    EXPECT_NEAR(t.comm_fwd_s, 33 * us, 1e-12);
    EXPECT_NEAR(t.comm_bwd_s, 66 * us, 1e-12);  // all-gather again + reduce-scatter of dK/dV
    EXPECT_NEAR(t.fwd_s, 4 * us, 1e-12);
    EXPECT_NEAR(t.bwd_s, 10 * us, 1e-12);
    EXPECT_EQ(t.extra_kernels_fwd, 0);
    EXPECT_EQ(t.extra_bytes_bwd, 0);
}

TEST(CpAttention, UlyssesAllToAllsAreExposedOnePerTensor) {
    const Fabric f;
    // Q, K, V 3 MB: 3/4 x 3 MB / 100 GB/s = 22.5 us + 3 us of latency, and two
    // more all-to-alls' latency (K and V go separately): 31.5 us; the output
    // 1 MB: 7.5 + 3 = 10.5 us.
    const CpAttentionWork w{CpCommType::a2a, 4, 4e9, 0, 3e6, 1e6};
    const CpAttentionTime t = cp_attention_time(w, rates(), f.cm, cp_placement(group(4, 4, 1)), 0.1);
    EXPECT_NEAR(t.comm_fwd_s, 42 * us, 1e-12);
    EXPECT_NEAR(t.comm_bwd_s, 42 * us, 1e-12);
}

double cp_comm_s(int cp, const std::string& type = "") {
    std::vector<std::string> o{"parallel.cp=" + std::to_string(cp)};
    if (!type.empty()) o.push_back("parallel.cp_comm_type=" + type);
    const Job job = default_job(o);
    return estimate(job, default_calibration()).breakdown.cp_comm_s;
}

TEST(CpAttention, DefaultJobPaysForContextParallelismAtEveryDegree) {
    // Issue 23: the ring used to hide entirely at cp 2.
    double last = 0;
    for (int cp : {2, 4, 8}) {
        const double c = cp_comm_s(cp);
        EXPECT_GT(c, 0) << "cp " << cp;
        EXPECT_GT(c, last) << "cp " << cp;  // more steps, smaller blocks, the same hop
        last = c;
    }
    EXPECT_EQ(cp_comm_s(1), 0);
    // The all-gather exposes all its traffic, the ring hides most of it.
    EXPECT_GT(cp_comm_s(2, "allgather"), cp_comm_s(2, "p2p"));
}

TEST(CpAttention, CommTypeSettingDefaultsByFrameworkAndSaysDidYouMean) {
    EXPECT_EQ(default_job().plan.cp_comm_type, CpCommType::p2p);  // Megatron-Core
    EXPECT_EQ(default_job({"training.framework=fsdp"}).plan.cp_comm_type, CpCommType::allgather);
    EXPECT_EQ(default_job({"training.framework=deepspeed"}).plan.cp_comm_type, CpCommType::a2a);
    EXPECT_EQ(default_job({"parallel.cp_comm_type=a2a"}).plan.cp_comm_type, CpCommType::a2a);
    try {
        default_job({"parallel.cp_comm_type=allgahter"});
        FAIL() << "accepted a typo";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("allgather"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cp_comm_type"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace lostflops
