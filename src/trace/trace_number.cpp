// Numbers of trace events: a JSON number's text to the nearest double, and
// Python's int() as HTA applies it. The conversion takes Clinger's exact fast
// path (W. D. Clinger, "How to Read Floating Point Numbers Accurately", PLDI
// 1990): when the decimal significand, trailing zeros dropped, is at most
// 2^53 and the power of ten at most 22 in magnitude, both are doubles exactly
// and one IEEE multiplication or division rounds correctly. Kineto's times
// ("1661203462608355.0", "12") take it; a fraction that makes the
// significand too long for it ("1661203467694278.5") is divided out exactly
// in 128-bit integers (quotient, below). Anything else goes to
// std::from_chars (correctly rounded too), so the result is the same double
// either way: the one Python's float() gives.
#include "trace/trace_event.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace lostflops::trace::detail {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Every power of ten up to 1e22 is a double exactly (5^22 < 2^53).
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr uint64_t kMaxExact = uint64_t{1} << 53;

double from_chars_number(const char* b, const char* e) {
    double v = 0;
    const auto r = std::from_chars(b, e, v);
    if (r.ec == std::errc::result_out_of_range) {
        // Overflow gives infinity, underflow zero (a negative exponent).
        const std::string_view lit(b, static_cast<std::size_t>(e - b));
        const std::size_t x = lit.find_first_of("eE");
        const bool tiny = x != std::string_view::npos && x + 1 < lit.size() && lit[x + 1] == '-';
        v = tiny ? 0.0 : HUGE_VAL;
        if (*b == '-') v = -v;
    }
    return v;
}

// m / 10^k rounded to the nearest double (ties to even) by integer
// division: q = floor(m 2^s / 10^k) with s chosen so that q has 53 bits,
// rounded up when the remainder is over half of 10^k (or half and q odd),
// and q 2^-s is the double, exactly. Timestamps with a fraction of a
// microsecond ("1661203467694278.5": 17 digits, beyond 2^53) take this path.
// False when 10^k or m 2^s would not fit (k > 19, or m / 10^k >= 2^53).
bool quotient(uint64_t m, int k, bool negative, double& v) {
    if (k > 19) return false;
    uint64_t d = 1;
    for (int i = 0; i < k; ++i) d *= 10;
    using u128 = unsigned __int128;
    // m 2^s has 53 + bit_width(d) bits at most: it fits in 128.
    int s = 53 + std::bit_width(d) - std::bit_width(m);  // q within a factor of 2 of 2^53
    if (s < 0) return false;
    u128 q = (static_cast<u128>(m) << s) / d;
    if (q >= (u128{1} << 53)) {  // at most once: q is then at least 2^52
        if (--s < 0) return false;
        q = (static_cast<u128>(m) << s) / d;
    }
    const u128 rem = (static_cast<u128>(m) << s) - q * d;
    if (2 * rem > d || (2 * rem == d && (q & 1) != 0)) ++q;
    const double x = std::ldexp(static_cast<double>(static_cast<uint64_t>(q)), -s);
    v = negative ? -x : x;
    return true;
}

}  // namespace

double json_number(const char* b, const char* e) {
    const char* p = b;
    const bool negative = p < e && *p == '-';
    if (negative) ++p;
    uint64_t m = 0;
    int significant = 0, exp10 = 0;
    // Digits after the first non-zero one, at most 19 (fits in 64 bits).
    const auto add = [&](char c) {
        if (m == 0 && c == '0') return true;
        if (significant == 19) return false;
        m = m * 10 + static_cast<uint64_t>(c - '0');
        ++significant;
        return true;
    };
    for (; p < e && is_digit(*p); ++p) {
        if (!add(*p)) return from_chars_number(b, e);
    }
    if (p < e && *p == '.') {
        for (++p; p < e && is_digit(*p); ++p) {
            if (!add(*p)) return from_chars_number(b, e);
            --exp10;
        }
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        ++p;
        const bool minus = p < e && *p == '-';
        if (p < e && (*p == '+' || *p == '-')) ++p;
        int x = 0;
        for (; p < e && is_digit(*p); ++p) {
            if (x > 10000) return from_chars_number(b, e);
            x = x * 10 + (*p - '0');
        }
        exp10 += minus ? -x : x;
    }
    if (p != e) return from_chars_number(b, e);  // not the grammar this expects
    double v = 0;
    return exact_decimal(m, exp10, negative, v) ? v : from_chars_number(b, e);
}

bool exact_decimal(uint64_t m, int exp10, bool negative, double& v) {
    if (m == 0) {
        v = negative ? -0.0 : 0.0;
        return true;
    }
    if (exp10 != 0 || m > kMaxExact) {
        while (m % 10 == 0) {
            m /= 10;
            ++exp10;
        }
        if (m > kMaxExact || exp10 < -22 || exp10 > 22) return exp10 < 0 && quotient(m, -exp10, negative, v);
    }
    double x = static_cast<double>(m);
    x = exp10 < 0 ? x / kPow10[-exp10] : x * kPow10[exp10];
    v = negative ? -x : x;
    return true;
}

int64_t python_int(double number) {
    if (!std::isfinite(number) || std::fabs(number) > 9.0e18) return -1;
    return static_cast<int64_t>(number);
}

int64_t python_int(std::string_view s) {
    while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    int64_t out = -1;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty()) return -1;
    return out;
}

}  // namespace lostflops::trace::detail
