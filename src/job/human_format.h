// Numbers as people read them, for the text tables only (JSON and CSV keep
// the raw numbers in SI units): thousands separators, money with its
// currency sign, durations in the largest unit that keeps them readable.
// Pure functions of their arguments: no locale is consulted, so the same
// number gives the same text on every machine.
#pragma once

#include <string>

namespace lostflops {

// v rounded to `decimals` places (0 to 6) with a comma every three digits of
// the whole part: grouped(1234567.8) == "1,234,568", grouped(-1234.5, 1) ==
// "-1,234.5". A value that rounds to zero prints without its sign; NaN and
// infinities print as "nan", "inf", "-inf".
std::string grouped(double v, int decimals = 0);

// Money with the currency sign in front: whole units from 100 up
// ("$67,450"), cents below ("$5.50"); "-$12.00" for a negative amount.
// `sign` is the currency's symbol ("$" by default).
std::string money(double amount, const std::string& sign = "$");

// A duration in seconds in the largest unit of which there are at least two,
// one decimal: "17.6 days", "5.2 hours", "12.5 minutes"; below two minutes
// seconds with two decimals ("45.30 s"); from ten million days three
// significant digits ("2.54e+300 days"); "never" when infinite or NaN.
std::string human_duration(double seconds);

}  // namespace lostflops
