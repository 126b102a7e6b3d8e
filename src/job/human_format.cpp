// Text formatting of numbers for people (human_format.h): digit grouping by
// threes with a comma (the English convention; no locale, so output does not
// depend on the environment), a currency sign before the amount, durations
// in days / hours / minutes / seconds.
#include "job/human_format.h"

#include <cmath>

#include <fmt/format.h>

namespace lostflops {

std::string grouped(double v, int decimals) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
    std::string text = fmt::format("{:.{}f}", std::fabs(v), decimals);
    const size_t point = text.find('.');
    const std::string whole = text.substr(0, point);
    const std::string fraction = point == std::string::npos ? "" : text.substr(point);
    std::string out;
    for (size_t i = 0; i < whole.size(); ++i) {
        if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
        out += whole[i];
    }
    const bool zero = text.find_first_not_of("0.") == std::string::npos;
    return (v < 0 && !zero ? "-" : "") + out + fraction;
}

std::string money(double amount, const std::string& sign) {
    if (!std::isfinite(amount)) return sign + grouped(amount);
    const double a = std::fabs(amount);
    // Cents while the amount rounded to cents is below 100 ($99.99), whole units from there.
    const std::string digits = grouped(a, std::round(a * 100) >= 100 * 100 ? 0 : 2);
    return (amount < 0 && digits.find_first_not_of("0.,") != std::string::npos ? "-" : "") + sign + digits;
}

std::string human_duration(double seconds) {
    if (!std::isfinite(seconds)) return "never";
    constexpr double kMinute = 60, kHour = 3600, kDay = 86400;
    const double a = std::fabs(seconds);
    // Past ten million days (27,000 years: a failure rate near zero gives a
    // job MTBF of 1e300 days) three significant digits, not 300 of them.
    if (a >= 1e7 * kDay) return fmt::format("{:.3g} days", seconds / kDay);
    if (a >= 2 * kDay) return grouped(seconds / kDay, 1) + " days";
    if (a >= 2 * kHour) return fmt::format("{:.1f} hours", seconds / kHour);
    if (a >= 2 * kMinute) return fmt::format("{:.1f} minutes", seconds / kMinute);
    return fmt::format("{:.2f} s", seconds);
}

}  // namespace lostflops
