// The text formatting of numbers for people (job/human_format.h), held to
// strings written out by hand.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "job/human_format.h"

namespace lostflops {
namespace {

TEST(HumanFormat, GroupedPutsACommaEveryThreeDigits) {
    EXPECT_EQ(grouped(0), "0");
    EXPECT_EQ(grouped(999), "999");
    EXPECT_EQ(grouped(1000), "1,000");
    EXPECT_EQ(grouped(67450.4), "67,450");
    EXPECT_EQ(grouped(1234567.891, 2), "1,234,567.89");
    EXPECT_EQ(grouped(100000), "100,000");
    EXPECT_EQ(grouped(-1234.5, 1), "-1,234.5");
    EXPECT_EQ(grouped(-0.4), "0");  // rounds to zero: no sign
    EXPECT_EQ(grouped(12.25, 9), "12.250000");  // at most 6 decimals
    EXPECT_EQ(grouped(3.7, -1), "4");
    EXPECT_EQ(grouped(1e15), "1,000,000,000,000,000");
}

TEST(HumanFormat, GroupedNamesNonFiniteValues) {
    EXPECT_EQ(grouped(std::numeric_limits<double>::quiet_NaN()), "nan");
    EXPECT_EQ(grouped(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(grouped(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(HumanFormat, MoneyWholeUnitsFromAHundredCentsBelow) {
    EXPECT_EQ(money(67450.4), "$67,450");
    EXPECT_EQ(money(5.5), "$5.50");
    EXPECT_EQ(money(99.99), "$99.99");
    EXPECT_EQ(money(99.996), "$100");
    EXPECT_EQ(money(0), "$0.00");
    EXPECT_EQ(money(-12), "-$12.00");
    EXPECT_EQ(money(2.5e6), "$2,500,000");
    EXPECT_EQ(money(1234.6, "EUR "), "EUR 1,235");
}

TEST(HumanFormat, DurationInTheLargestReadableUnit) {
    EXPECT_EQ(human_duration(17.6 * 86400), "17.6 days");
    EXPECT_EQ(human_duration(1.518e6), "17.6 days");  // 1,518,000 s / 86,400 = 17.569...
    EXPECT_EQ(human_duration(2 * 86400), "2.0 days");
    EXPECT_EQ(human_duration(2 * 86400 - 1), "48.0 hours");
    EXPECT_EQ(human_duration(5.2 * 3600), "5.2 hours");
    EXPECT_EQ(human_duration(7200), "2.0 hours");
    EXPECT_EQ(human_duration(750), "12.5 minutes");
    EXPECT_EQ(human_duration(120), "2.0 minutes");
    EXPECT_EQ(human_duration(45.3), "45.30 s");
    EXPECT_EQ(human_duration(0.1), "0.10 s");
    EXPECT_EQ(human_duration(400 * 86400), "400.0 days");
    EXPECT_EQ(human_duration(1234.5 * 86400), "1,234.5 days");
    EXPECT_EQ(human_duration(std::numeric_limits<double>::infinity()), "never");
    // A job MTBF at a failure rate of 1e-300 per GPU-hour printed 300 digits
    // of days (goodput --set run.gpu_failure_rate=1e-300; the hunt helper).
    EXPECT_EQ(human_duration(9999999.9 * 86400), "9,999,999.9 days");
    EXPECT_EQ(human_duration(1e7 * 86400), "1e+07 days");
    EXPECT_EQ(human_duration(2.5431e300 * 86400), "2.54e+300 days");
}

}  // namespace
}  // namespace lostflops
