// The scaling book's roofline numbers that ../shared/DESIGN.md quotes
// (Austin et al. 2025, "How to Scale Your Model", ch. 1 and 3), computed by
// the project's roofline (cost/roofline.h) on the catalog's TPU v5e and its
// collective model (cost/collective_time.h), not retyped:
//   - v5e peak arithmetic intensity 1.97e14 / 8.2e11 ~ 240 FLOP/byte;
//   - X[B,D] W[D,F] split over 2 chips along the contracting D: each chip
//     multiplies its half, then the partial [B,F] results are all-reduced
//     over one ICI link of 4.5e10 B/s; compute-bound while D > 2 x 1.97e14 /
//     4.5e10 ~ 8,755, whatever B and F.
#include <gtest/gtest.h>

#include "cost/collective_time.h"
#include "cost/roofline.h"
#include "lostflops/catalog.h"

namespace lostflops {
namespace {

TEST(ScalingBook, V5ePeakIntensityIs240FlopPerByte) {
    const auto v5e = find_gpu("tpu-v5e");
    ASSERT_TRUE(v5e);
    EXPECT_NEAR(ridge_flop_per_byte(*v5e, Precision::bf16), 240, 1.0);
    // A bf16 matmul X[B,D] W[D,F] with B << D, F moves about 2*D*F bytes for
    // 2*B*D*F FLOPs: intensity ~ B, compute-bound once B passes the ridge.
    const double D = 8192, F = 32768;
    const auto bound = [&](double B) {
        const double flops = 2 * B * D * F, bytes = 2 * (B * D + D * F + B * F);
        return roofline_time_s(*v5e, Precision::bf16, flops, 0) >= roofline_time_s(*v5e, Precision::bf16, 0, bytes);
    };
    EXPECT_FALSE(bound(200));  // memory-bound below ~240 tokens
    EXPECT_TRUE(bound(300));
}

// Time of the 2-chip sharded matmul: compute of one chip's half, and the
// all-reduce of the partial sums (2*B*F bytes of bf16) over one ICI link.
struct TwoChip {
    double compute_s = 0, comm_s = 0;
};
TwoChip two_chip_matmul(const Gpu& gpu, double B, double D, double F) {
    Calibration cal;  // the scaling book's ideal link: peak bandwidth, no latency
    cal.bus_eff_intra = 1;
    cal.collective_launch_us = 0;
    CommModel cm;
    cm.intra = Link{45.0, 0.0};  // ICI one way per link, 4.5e10 B/s (scaling book, TPU v5e)
    cm.cal = &cal;
    const GroupPlacement pair = place_group(2, 1, 2);
    TwoChip t;
    t.compute_s = roofline_time_s(gpu, Precision::bf16, 2 * B * (D / 2) * F, 0);
    t.comm_s = collective_time_s(cm, Collective::all_reduce, pair, 2 * B * F);
    return t;
}

TEST(ScalingBook, TwoChipMatmulOverIciIsComputeBoundAboveD8755) {
    const auto v5e = find_gpu("tpu-v5e");
    ASSERT_TRUE(v5e);
    // Bisect D where compute time equals communication time; B and F cancel.
    for (const double B : {512.0, 4096.0}) {
        const double F = 16384;
        double lo = 1000, hi = 100000;
        for (int i = 0; i < 200; ++i) {
            const double mid = (lo + hi) / 2;
            const TwoChip t = two_chip_matmul(*v5e, B, mid, F);
            (t.compute_s > t.comm_s ? hi : lo) = mid;
        }
        EXPECT_NEAR(lo, 8755, 1.0) << "B " << B;  // 2 x 1.97e14 / 4.5e10 = 8,755.6
        const TwoChip below = two_chip_matmul(*v5e, B, 8000, F), above = two_chip_matmul(*v5e, B, 9000, F);
        EXPECT_LT(below.compute_s, below.comm_s);
        EXPECT_GT(above.compute_s, above.comm_s);
    }
}

}  // namespace
}  // namespace lostflops
