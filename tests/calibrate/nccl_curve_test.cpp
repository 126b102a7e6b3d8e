// curve_time_s: busbw -> time conversion (nccl-tests doc/PERFORMANCE.md bus
// factors), log-linear interpolation and clamping, against hand-computed values.
#include <cmath>

#include <gtest/gtest.h>

#include "lostflops/nccl_curve.h"

namespace lostflops {
namespace {

Calibration with_curves() {
    Calibration c;
    // all-reduce on 8 ranks, NVLink: busbw 1 GB/s at 1 KB, 100 at 1 MB, 300 at 1 GB.
    c.nccl.push_back({Collective::all_reduce, LinkScope::intra_node, 8,
                      {{1e3, 1.0, 1.75}, {1e6, 100.0, 17.5}, {1e9, 300.0, 5833.3}}});
    c.nccl.push_back({Collective::all_gather, LinkScope::inter_node, 16, {{1e6, 10.0, 0}, {1e8, 40.0, 0}}});
    c.nccl.push_back({Collective::all_gather, LinkScope::inter_node, 64, {{1e6, 5.0, 0}, {1e8, 20.0, 0}}});
    c.nccl.push_back({Collective::send_recv, LinkScope::inter_node, 2, {{1e6, 20.0, 0}}});
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
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 1e9, 8), expect_s,
                1e-12);
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 1e6, 8),
                1e6 * 1.75 / 100e9, 1e-15);
}

TEST(NcclCurve, InterpolatesBusBandwidthLinearlyInLogSize) {
    const Calibration c = with_curves();
    // sqrt(1e6 * 1e9) is halfway in log size: busbw = (100 + 300) / 2 = 200.
    const double bytes = std::sqrt(1e6 * 1e9);
    EXPECT_NEAR(curve_busbw_GBps(c.nccl[0], bytes), 200.0, 1e-9);
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, bytes, 8),
                bytes * 1.75 / 200e9, 1e-15);
    // A third of the way from 1e3 to 1e6 is 1e4: 1 + (100 - 1) / 3 = 34.
    EXPECT_NEAR(curve_busbw_GBps(c.nccl[0], 1e4), 34.0, 1e-9);
}

TEST(NcclCurve, ClampsOutsideTheMeasuredSizes) {
    const Calibration c = with_curves();
    // Above: the largest point's busbw, time grows linearly.
    const double t2 = *curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 2e9, 8);
    EXPECT_NEAR(t2, 2e9 * 1.75 / 300e9, 1e-12);
    // Below: latency-bound, the smallest point's time whatever the size.
    const double t_min = 1e3 * 1.75 / 1e9;
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 10, 8), t_min, 1e-15);
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 999, 8), t_min, 1e-15);
}

TEST(NcclCurve, ConvertsToAnotherRankCount) {
    const Calibration c = with_curves();
    // Same busbw on 4 ranks: factor 2 * 3 / 4 = 1.5 instead of 1.75.
    EXPECT_NEAR(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 1e9, 4),
                1e9 * 1.5 / 300e9, 1e-12);
    // No communication on one rank, nothing for no bytes.
    EXPECT_EQ(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 1e9, 1), 0.0);
    EXPECT_EQ(*curve_time_s(c, Collective::all_reduce, LinkScope::intra_node, 0, 8), 0.0);
}

TEST(NcclCurve, PicksTheCurveWithTheNearestRankCount) {
    const Calibration c = with_curves();
    EXPECT_EQ(find_curve(c, Collective::all_gather, LinkScope::inter_node, 16)->ranks, 16);
    EXPECT_EQ(find_curve(c, Collective::all_gather, LinkScope::inter_node, 24)->ranks, 16);
    EXPECT_EQ(find_curve(c, Collective::all_gather, LinkScope::inter_node, 48)->ranks, 64);
    EXPECT_EQ(find_curve(c, Collective::all_gather, LinkScope::inter_node, 32)->ranks, 64);  // tie
    // 48 ranks from the 64-rank curve: busbw 20 at 1e8, factor 47/48.
    EXPECT_NEAR(*curve_time_s(c, Collective::all_gather, LinkScope::inter_node, 1e8, 48),
                1e8 * (47.0 / 48.0) / 20e9, 1e-15);
}

TEST(NcclCurve, NoCurveGivesNothing) {
    const Calibration c = with_curves();
    EXPECT_FALSE(curve_time_s(c, Collective::all_reduce, LinkScope::inter_node, 1e6, 8));
    EXPECT_FALSE(curve_time_s(c, Collective::reduce_scatter, LinkScope::intra_node, 1e6, 8));
    EXPECT_FALSE(curve_time_s(Calibration{}, Collective::all_reduce, LinkScope::intra_node, 1e6, 8));
}

TEST(NcclCurve, SinglePointCurveIsFlat) {
    const Calibration c = with_curves();
    EXPECT_NEAR(*curve_time_s(c, Collective::send_recv, LinkScope::inter_node, 4e6, 2), 4e6 / 20e9, 1e-15);
    EXPECT_NEAR(*curve_time_s(c, Collective::send_recv, LinkScope::inter_node, 1e3, 2), 1e6 / 20e9, 1e-15);
}

}  // namespace
}  // namespace lostflops
