// curve_time_s: busbw -> time conversion (nccl-tests doc/PERFORMANCE.md bus
// factors), log-linear interpolation, alpha-beta extrapolation outside the
// measured sizes, matching by placement, and the GPU check, against
// hand-computed values.
#include <cmath>

#include <gtest/gtest.h>

#include "lostflops/catalog.h"
#include "lostflops/nccl_curve.h"

namespace lostflops {
namespace {

constexpr CurveKey kNode8{8, 8, 1};  // one node of 8

Calibration with_curves() {
    Calibration c;
    // all-reduce on 8 ranks, NVLink: busbw 1 GB/s at 1 KB, 100 at 1 MB, 300 at 1 GB.
    c.nccl.push_back({Collective::all_reduce, LinkScope::intra_node, 8,
                      {{1e3, 1.0, 1.75}, {1e6, 100.0, 17.5}, {1e9, 300.0, 5833.3}}});
    // all-gather, 2 and 8 nodes of 8 GPUs.
    c.nccl.push_back({Collective::all_gather, LinkScope::inter_node, 16, {{1e6, 10.0, 0}, {1e8, 40.0, 0}}, 8, 2, ""});
    c.nccl.push_back({Collective::all_gather, LinkScope::inter_node, 64, {{1e6, 5.0, 0}, {1e8, 20.0, 0}}, 8, 8, ""});
    c.nccl.push_back({Collective::send_recv, LinkScope::inter_node, 2, {{1e6, 20.0, 0}}, 1, 2, ""});
    // A sweep that starts at 1 MB (nccl-tests -b 1M): all-reduce, 2 nodes of 8.
    c.nccl.push_back({Collective::all_reduce, LinkScope::inter_node, 16, {{1e6, 100.0, 0}, {1e7, 200.0, 0}}, 8, 2, ""});
    return c;
}

TEST(NcclCurve, BusFactorsAreThoseOfNcclTests) {
    EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 2.0 * 7 / 8);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 8), 7.0 / 8);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 4), 3.0 / 4);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::all_to_all, 16), 15.0 / 16);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::send_recv, 2), 1.0);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 1), 0.0);
}

TEST(NcclCurve, TimeAtMeasuredPointsReproducesTheMeasurement) {
    const Calibration c = with_curves();
    // 1 GB all-reduce on 8 ranks at busbw 300: algbw = 300 * 8 / 14; t = 1e9 / algbw.
    const double expect_s = 1e9 / (300e9 * 8.0 / 14.0);
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, kNode8, 1e9), expect_s, 1e-12);
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, kNode8, 1e6), 1e6 * 1.75 / 100e9, 1e-15);
}

TEST(NcclCurve, InterpolatesBusBandwidthLinearlyInLogSize) {
    const Calibration c = with_curves();
    // sqrt(1e6 * 1e9) is halfway in log size: busbw = (100 + 300) / 2 = 200.
    const double bytes = std::sqrt(1e6 * 1e9);
    EXPECT_NEAR(curve_busbw_GBps(c.nccl[0], bytes), 200.0, 1e-9);
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, kNode8, bytes), bytes * 1.75 / 200e9, 1e-15);
    // A third of the way from 1e3 to 1e6 is 1e4: 1 + (100 - 1) / 3 = 34.
    EXPECT_NEAR(curve_busbw_GBps(c.nccl[0], 1e4), 34.0, 1e-9);
}

TEST(NcclCurve, BelowTheSweepASmallMessagePaysTheLatencyNotTheSmallestSizesTime) {
    const Calibration c = with_curves();
    // Sweep from 1 MB on 2x8 ranks, all-reduce, F = 2 * 15 / 16 = 1.875:
    // t(1 MB) = 1e6 * 1.875 / 100e9 = 18.75 us, t(10 MB) = 1e7 * 1.875 / 200e9 = 93.75 us.
    // Alpha-beta through them: b = 75 us / 9e6 B, a = 18.75 us - b * 1e6 = 10.4167 us.
    const double b = 75e-6 / 9e6, a = 18.75e-6 - b * 1e6;
    const CurveKey two_nodes{16, 8, 2};
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, two_nodes, 1e3), a + b * 1e3, 1e-15);
    EXPECT_LT(*curve_time_s(c, Collective::all_reduce, two_nodes, 1e3), 0.6 * 18.75e-6);
    // Above the sweep: the last slope, t(20 MB) = t(10 MB) + b * 10 MB.
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, two_nodes, 2e7), 93.75e-6 + b * 1e7, 1e-15);
    // A sweep that starts at 1 KB: the line through 1 KB and 1 MB, a ~ 1.734 us.
    const double b1 = (17.5e-6 - 1.75e-6) / (1e6 - 1e3), a1 = 1.75e-6 - b1 * 1e3;
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, kNode8, 10), a1 + b1 * 10, 1e-15);
    // Above 1 GB: t(1 GB) + slope of the last two points.
    const double t1g = 1e9 * 1.75 / 300e9, t1m = 1e6 * 1.75 / 100e9;
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, kNode8, 2e9), t1g + (t1g - t1m) / (1e9 - 1e6) * 1e9, 1e-12);
}

TEST(NcclCurve, ConvertsToAnotherRankCountOfTheSamePlacement) {
    const Calibration c = with_curves();
    // 4 nodes of 8 from the nearest 2- or 8-node curve (log distance: 2 is as near
    // as 8; the tie goes to the larger run, 64 ranks): busbw 20 at 1e8, F = 31/32.
    EXPECT_EQ(find_curve(c, Collective::all_gather, {32, 8, 4})->ranks, 64);
    EXPECT_NEAR(*curve_time_s(c, Collective::all_gather, {32, 8, 4}, 1e8), 1e8 * (31.0 / 32.0) / 20e9, 1e-15);
    EXPECT_EQ(find_curve(c, Collective::all_gather, {24, 8, 3})->ranks, 16);
    // No communication on one rank, nothing for no bytes.
    EXPECT_EQ(*curve_time_s(c, Collective::all_reduce, {1, 1, 1}, 1e9), 0.0);
    EXPECT_EQ(*curve_time_s(c, Collective::all_reduce, kNode8, 0), 0.0);
}

TEST(NcclCurve, NeverPricesAnotherPlacement) {
    const Calibration c = with_curves();
    // The case: a 2-node, 16-rank curve (8 per node) must not price a
    // 32-node all-reduce with one GPU per node.
    EXPECT_FALSE(curve_time_s(c, Collective::all_reduce, {32, 1, 32}, 1e8));
    // A one-node curve never prices a multi-node group, nor the reverse.
    EXPECT_FALSE(curve_time_s(c, Collective::all_reduce, {16, 8, 2}, 1e8) == std::nullopt);
    EXPECT_FALSE(curve_time_s(c, Collective::all_gather, {8, 8, 1}, 1e8));
    EXPECT_EQ(find_curve(c, Collective::all_reduce, {16, 8, 2})->ranks, 16);
    // 4 GPUs of a node: another placement than 8 of 8.
    EXPECT_FALSE(curve_time_s(c, Collective::all_reduce, {4, 4, 1}, 1e8));
    EXPECT_FALSE(curve_time_s(c, Collective::reduce_scatter, kNode8, 1e6));
    EXPECT_FALSE(curve_time_s(Calibration{}, Collective::all_reduce, kNode8, 1e6));
    // A curve written before layouts were recorded: one node if intra-node,
    // never used if inter-node.
    Calibration old;
    old.nccl.push_back({Collective::all_reduce, LinkScope::inter_node, 16, {{1e6, 10.0, 0}}});
    old.nccl.push_back({Collective::all_gather, LinkScope::intra_node, 4, {{1e6, 10.0, 0}}});
    EXPECT_FALSE(find_curve(old, Collective::all_reduce, {16, 8, 2}));
    EXPECT_TRUE(find_curve(old, Collective::all_gather, {4, 4, 1}));
}

TEST(NcclCurve, SinglePointCurveKeepsItsBandwidth) {
    const Calibration c = with_curves();
    EXPECT_NEAR(*curve_time_s(c, Collective::send_recv, {2, 1, 2}, 4e6), 4e6 / 20e9, 1e-15);
    EXPECT_NEAR(*curve_time_s(c, Collective::send_recv, {2, 1, 2}, 1e3), 1e3 / 20e9, 1e-18);
}

TEST(NcclCurve, NamesACurveMeasuredOnAnotherGpu) {
    BusBwCurve t4{Collective::all_reduce, LinkScope::intra_node, 4, {{1e6, 5, 0}}, 4, 1, "Tesla T4"};
    BusBwCurve h100{Collective::all_reduce, LinkScope::intra_node, 8, {{1e6, 5, 0}}, 8, 1, "NVIDIA H100 80GB HBM3"};
    BusBwCurve unknown{Collective::all_reduce, LinkScope::intra_node, 8, {{1e6, 5, 0}}, 8, 1, ""};
    const Gpu h100_sxm = *find_gpu("h100-sxm"), a100 = *find_gpu("a100-sxm-80gb"), b200 = *find_gpu("b200");
    EXPECT_TRUE(curve_gpu_mismatch(t4, h100_sxm));
    EXPECT_NE(curve_gpu_mismatch(t4, h100_sxm)->find("Tesla T4"), std::string::npos);
    EXPECT_FALSE(curve_gpu_mismatch(h100, h100_sxm));
    EXPECT_TRUE(curve_gpu_mismatch(h100, b200));
    EXPECT_TRUE(curve_gpu_mismatch(h100, a100));
    EXPECT_TRUE(curve_gpu_mismatch(unknown, h100_sxm));
    // An inline GPU without a model name: the architecture decides.
    Gpu inline_hopper = h100_sxm;
    inline_hopper.name = "gpu";
    EXPECT_FALSE(curve_gpu_mismatch(h100, inline_hopper));
    EXPECT_TRUE(curve_gpu_mismatch(t4, inline_hopper));
    // "A100" does not match an A10 token inside it.
    BusBwCurve a10{Collective::all_reduce, LinkScope::intra_node, 8, {{1e6, 5, 0}}, 8, 1, "NVIDIA A10"};
    EXPECT_TRUE(curve_gpu_mismatch(a10, a100));
}

}  // namespace
}  // namespace lostflops
