// Group placement on the topology (cost/collective_time.h): NVLink domains of
// N spanning several nodes (cluster.nvlink_domain, GB200 NVL72: 18 trays of 4
// GPUs in one domain of 72) with scale-out between domains, ranks filling the
// domains in order and the last one partial (256 GPUs: 72 + 72 + 72 + 40).
// Every expected placement is counted by hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "cost/collective_time.h"
#include "estimate/stage_time.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"

namespace lostflops {
namespace {

TEST(Topology, GroupsInsideOneNvl72DomainStayOnNvlink) {
    // tp 8: 72 = 9 x 8, every group inside a domain.
    const GroupPlacement tp8 = place_in_domains(8, 1, 72, 256);
    EXPECT_EQ(tp8.nodes, 1);
    EXPECT_EQ(tp8.per_node, 8);
    // A job smaller than a domain has one domain, whatever the groups.
    const GroupPlacement all = place_in_domains(64, 1, 72, 64);
    EXPECT_EQ(all.nodes, 1);
    EXPECT_EQ(all.per_node, 64);
}

TEST(Topology, GroupCrossingADomainBoundaryIsPlacedOnTwoDomains) {
    // tp 16: the fifth group, ranks 64..79, has 8 in domain 0 and 8 in domain 1.
    const GroupPlacement tp16 = place_in_domains(16, 1, 72, 256);
    EXPECT_EQ(tp16.nodes, 2);
    EXPECT_EQ(tp16.per_node, 8);
    // ep 32 (etp 1): ranks 64..95 hold 8 in domain 0 and 24 in domain 1; the
    // 8 carry the group's scale-out bytes.
    const GroupPlacement ep32 = place_in_domains(32, 1, 72, 256);
    EXPECT_EQ(ep32.nodes, 2);
    EXPECT_EQ(ep32.per_node, 8);
}

TEST(Topology, SlowestGroupOfThePartialLastDomainSetsThePace) {
    // 128 consecutive ranks: the first group (0..127) spans 2 domains, the
    // second (128..255) 3: 16 in domain 1, 72 in domain 2, 40 in domain 3.
    const GroupPlacement g = place_in_domains(128, 1, 72, 256);
    EXPECT_EQ(g.nodes, 3);
    EXPECT_EQ(g.per_node, 16);
    // Data parallel of 32 ranks 8 apart (tp 8): 0, 8, ..., 248 hold 9, 9, 9
    // and 5 members in the four domains.
    const GroupPlacement dp = place_in_domains(32, 8, 72, 256);
    EXPECT_EQ(dp.nodes, 4);
    EXPECT_EQ(dp.per_node, 5);
    // The switched model's first group would say 2 domains of 64.
    EXPECT_EQ(place_group(128, 1, 72).nodes, 2);
}

TEST(Topology, StrideWiderThanADomainPutsOneMemberPerDomain) {
    // pp 2 with 128 ranks per stage: the pair sits 128 apart, always in two domains.
    const GroupPlacement pp = place_in_domains(2, 128, 72, 256);
    EXPECT_EQ(pp.nodes, 2);
    EXPECT_EQ(pp.per_node, 1);
}

std::string nvl72_job(int tp, int gpus, const std::string& extra = "") {
    return "model: {preset: llama3-70b}\n"
           "cluster: {preset: gb200-nvl72, num_gpus: " + std::to_string(gpus) + extra + "}\n"
           "training: {seq_length: 8192, global_batch_size: 512, micro_batch_size: 1}\n"
           "parallel: {tp: " + std::to_string(tp) + ", pp: 4, zero: 1, sequence_parallel: true, recompute: full}\n";
}

TEST(Topology, Gb200Nvl72JobOf256GpusPlacesTensorParallelGroupsAcrossDomains) {
    const Calibration cal = default_calibration();
    // 256 GPUs fill 64 trays of 4; the domains of 72 need not divide the job.
    const Job in = parse_job(nvl72_job(8, 256), "job.yaml");
    EXPECT_EQ(in.cluster.gpus_per_node, 4);
    EXPECT_EQ(in.cluster.scaleup_gpus(), 72);
    const PlanContext c8 = make_plan_context(in, cal);
    EXPECT_EQ(c8.tp_group.nodes, 1);
    const Job across = parse_job(nvl72_job(16, 256), "job.yaml");
    const PlanContext c16 = make_plan_context(across, cal);
    EXPECT_EQ(c16.tp_group.nodes, 2);  // ranks 64..79 straddle domains 0 and 1
    // The crossing group pays the scale-out link: 64 MB all-reduced by 8 + 8
    // members, 8 MB of it per GPU over 400 Gb/s, takes more than 1.5x the
    // time inside one domain (2 x 15/16 x 64 MB over NVLink alone).
    const double bytes = 64e6;
    const GroupPlacement inside{16, 16, 1};
    EXPECT_GT(collective_time_s(c16.comm, Collective::all_reduce, c16.tp_group, bytes),
              1.5 * collective_time_s(c16.comm, Collective::all_reduce, inside, bytes));
    // Data parallel: tp 8 x pp 4 leaves dp 8 ranks 8 apart in each stage of
    // 64 ranks; the stage 64..127 crosses from domain 0 into domain 1.
    EXPECT_EQ(c8.dp_group.nodes, 2);
    // The estimate runs on it.
    const Estimate e = estimate(in, cal);
    EXPECT_GT(e.step_time_s, 0);
}

TEST(Topology, NvlinkDomainMustJoinWholeNodes) {
    try {
        parse_job(nvl72_job(8, 256, ", nvlink_domain: 70"), "job.yaml");
        FAIL() << "a domain of 70 over trays of 4 was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("cluster.nvlink_domain"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("multiple of gpus_per_node"), std::string::npos) << e.what();
    }
}

TEST(Topology, SwitchedClusterKeepsTheFirstGroupRule) {
    // No nvlink_domain: the node is the domain and placement is unchanged.
    Cluster c;
    c.num_gpus = 64;
    c.gpus_per_node = 8;
    const Topology t = topology_of(c);
    EXPECT_EQ(t.kind, Topology::Kind::switched);
    for (const auto& [size, stride] : {std::pair{8, 1}, {3, 1}, {4, 6}, {8, 8}, {16, 2}}) {
        const GroupPlacement a = place_group(t, size, stride), b = place_group(size, stride, 8);
        EXPECT_EQ(a.nodes, b.nodes);
        EXPECT_EQ(a.per_node, b.per_node);
    }
}

// TPU torus (scaling book part 3): an axis spanned whole runs a
// bidirectional ring (2 links), a segment of an axis a line (1 link), several
// axes at once add their links.
TEST(Torus, LinksOfTheRingsAGroupRunsPerAxis) {
    const std::array<int, 3> v5e{16, 16, 1}, v5p{4, 4, 8};
    EXPECT_DOUBLE_EQ(torus_links(v5e, 16, 1), 2);    // axis 0 whole, wrap-around
    EXPECT_DOUBLE_EQ(torus_links(v5e, 16, 16), 2);   // axis 1 whole
    EXPECT_DOUBLE_EQ(torus_links(v5e, 256, 1), 4);   // both axes
    EXPECT_DOUBLE_EQ(torus_links(v5e, 8, 1), 1);     // half of axis 0: no wrap-around
    EXPECT_DOUBLE_EQ(torus_links(v5e, 8, 2), 1);     // every other chip of axis 0: ring of 8, links shared by 2
    EXPECT_DOUBLE_EQ(torus_links(v5e, 32, 1), 3);    // axis 0 whole + 2 of axis 1
    EXPECT_DOUBLE_EQ(torus_links(v5p, 128, 1), 6);   // a whole 3D slice
}

TEST(Torus, AllGatherOverAWrappedAxisTakesHalfTheOneLinkTime) {
    // v5e 16 x 16 slice, one ICI link 4.5e10 B/s one way: gathering V bytes
    // over a whole axis of 16 takes (n-1)/n V / (2 W) (scaling book: V / W
    // bidirectional), over both axes half of that again.
    Topology t;
    t.kind = Topology::Kind::torus;
    t.torus = {16, 16, 1};
    t.domain_gpus = 256;
    t.num_gpus = 256;
    Calibration cal;
    cal.bus_eff_intra = cal.p2p_eff = 1;
    cal.collective_launch_us = 0;
    CommModel cm;
    cm.intra = Link{45.0, 0.0};
    cm.cal = &cal;
    const double V = 1e9, W = 45e9;
    const GroupPlacement axis = place_group(t, 16, 1);
    EXPECT_EQ(axis.nodes, 1);
    EXPECT_NEAR(collective_time_s(cm, Collective::all_gather, axis, V), 15.0 / 16 * V / (2 * W), 1e-12);
    const GroupPlacement both = place_group(t, 256, 1);
    EXPECT_NEAR(collective_time_s(cm, Collective::all_gather, both, V), 255.0 / 256 * V / (4 * W), 1e-12);
    // A pipeline send to the neighbouring chip uses one link.
    EXPECT_NEAR(collective_time_s(cm, Collective::send_recv, axis, V), V / W, 1e-12);
}

TEST(Torus, SlicesAreJoinedByTheDataCentreNetwork) {
    // Two v5e slices of 256: a data-parallel pair 256 ranks apart crosses DCN.
    Topology t;
    t.kind = Topology::Kind::torus;
    t.torus = {16, 16, 1};
    t.domain_gpus = 256;
    t.num_gpus = 512;
    const GroupPlacement dp = place_group(t, 2, 256);
    EXPECT_EQ(dp.nodes, 2);
    EXPECT_EQ(dp.per_node, 1);
}

TEST(Torus, JobKeyIsReadAndATpuJobIsPriced) {
    const std::string job = "model: {preset: llama2-7b}\n"
                            "cluster: {gpu: tpu-v5e, num_gpus: 256, gpus_per_node: 8, torus: [16, 16],\n"
                            "  intra_node: {bandwidth_GBps: 45, latency_us: 1}, inter_node: {bandwidth_GBps: 25, latency_us: 5}}\n"
                            "training: {seq_length: 2048, global_batch_size: 256, micro_batch_size: 1}\n"
                            "parallel: {tp: 1, zero: 3}\n";
    const Job j = parse_job(job, "job.yaml");
    EXPECT_EQ(j.cluster.scaleup_gpus(), 256);
    EXPECT_EQ(topology_of(j.cluster).kind, Topology::Kind::torus);
    // The default profile's tpu family prices the systolic arrays
    // (tests/cost/tpu_device_test.cpp).
    EXPECT_GT(estimate(j, default_calibration()).step_time_s, 0);
    try {
        parse_job(job.substr(0, job.find("torus")) + "torus: [16, 12],\n" + job.substr(job.find("intra_node")), "job.yaml");
        FAIL() << "a slice of 192 chips was accepted for 256 GPUs";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("cluster.torus"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace lostflops
