// The charts' axis step (explain/charts.h nice_step): every chart walks its
// ticks from 0 to its maximum by it, so it must be positive and finite for any
// finite range, and an infinite range is refused rather than walked forever.
// Before: nice_step(inf) returned inf (the walk 0, inf, inf, ... never ends)
// and nice_step(5e-324) returned 0 (the walk never moves); found by the hunt
// helper.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

#include "explain/charts.h"

namespace lostflops {
namespace {

TEST(NiceStep, RoundsToOneTwoOrFiveTimesAPowerOfTen) {
    EXPECT_DOUBLE_EQ(nice_step(100, 5), 20);    // raw 20
    EXPECT_DOUBLE_EQ(nice_step(7, 5), 1);       // raw 1.4
    EXPECT_DOUBLE_EQ(nice_step(0.03, 6), 0.005);  // raw 0.005
    EXPECT_DOUBLE_EQ(nice_step(0, 5), 1);
    EXPECT_DOUBLE_EQ(nice_step(-3, 5), 1);
}

// For every finite positive range, a step that reaches the maximum in a
// bounded number of ticks (about `target`, never more than a few times it).
TEST(NiceStep, EveryFiniteRangeIsWalkedInFewTicks) {
    const double denorm = std::numeric_limits<double>::denorm_min();
    for (double range : {denorm, 4 * denorm, 1e-310, 1e-300, 1e-9, 1.0, 3.3e5, 1e300,
                         std::numeric_limits<double>::max()}) {
        const double step = nice_step(range, 5);
        EXPECT_GT(step, 0) << range;
        EXPECT_TRUE(std::isfinite(step)) << range;
        EXPECT_LE(range / step, 20) << range;
    }
}

TEST(NiceStep, InfiniteRangeIsRefused) {
    EXPECT_THROW(nice_step(std::numeric_limits<double>::infinity(), 5), std::invalid_argument);
    EXPECT_DOUBLE_EQ(nice_step(std::nan(""), 5), 1);  // a walk to NaN takes no step
}

}  // namespace
}  // namespace lostflops
