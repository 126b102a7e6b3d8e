// The JSON scanner of the event parser's fast path (internal to src/trace;
// its only user is trace_event_fast.cpp, which reads Kineto's fields with
// it): one pass over RFC 8259's grammar without recursion, per-value records
// or copies. Strings are the runs of scan_plain_string (no escapes or raw
// control characters), numbers are checked (and read, number_value) in one
// pass, and any other value is validated and skipped by an iterative walk
// with a bit stack of open containers. Every member returns false on what
// the fast path leaves to the strict parser (an escape, a control
// character, nesting of kMaxFastDepth levels, an error, the end of the
// buffer), the cursor then anywhere. Inline: these run on every byte of the
// trace's events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "trace/trace_event.h"

namespace lostflops::trace::detail {

class FastJson {
public:
    FastJson(const char* p, const char* end) : p_(p), end_(end) {}

protected:
    static constexpr int kMaxFastDepth = 48;  // deeper nesting goes to the strict parser (limit 128)

    static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    static bool starts_number(char c) { return c == '-' || is_digit(c); }

    void ws() { while (p_ < end_ && is_ws(*p_)) ++p_; }

    // At '"'. A string without escapes or control characters; out is its content.
    bool string(const char*& s, std::size_t& len) {
        if (p_ >= end_ || *p_ != '"') return false;
        const char* start = ++p_;
        p_ = scan_plain_string(p_, end_);
        if (p_ >= end_ || *p_ != '"') return false;
        s = start;
        len = static_cast<std::size_t>(p_ - start);
        ++p_;
        return true;
    }

    // A key, white space, ':' and white space.
    bool key_colon(const char*& key, std::size_t& len) {
        if (!string(key, len)) return false;
        ws();
        if (p_ >= end_ || *p_ != ':') return false;
        ++p_;
        ws();
        return p_ < end_;
    }

    // A number by RFC 8259's grammar; [start, p_) on success.
    bool number(bool& fractional) {
        if (p_ < end_ && *p_ == '-') ++p_;
        if (p_ >= end_) return false;
        if (*p_ == '0') {
            ++p_;
        } else if (*p_ >= '1' && *p_ <= '9') {
            while (p_ < end_ && is_digit(*p_)) ++p_;
        } else {
            return false;
        }
        fractional = false;
        if (p_ < end_ && *p_ == '.') {
            fractional = true;
            ++p_;
            if (p_ >= end_ || !is_digit(*p_)) return false;
            while (p_ < end_ && is_digit(*p_)) ++p_;
        }
        if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
            fractional = true;
            ++p_;
            if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ >= end_ || !is_digit(*p_)) return false;
            while (p_ < end_ && is_digit(*p_)) ++p_;
        }
        // The strict parser stops at the same byte; the end of the buffer
        // right after a number may hide more digits.
        return p_ < end_;
    }
    // A number and its value in one pass: the digits (at most 19) are summed
    // as they are checked, and exact_decimal gives the double; longer
    // numbers and exponents go through json_number. The same double either way.
    bool number_value(double& v, bool& fractional) {
        const char* start = p_;
        const bool negative = *p_ == '-';
        if (negative) ++p_;
        if (p_ >= end_) return false;
        uint64_t m = 0;
        int digits = 0, exp10 = 0;
        if (*p_ == '0') {
            ++p_;
        } else if (*p_ >= '1' && *p_ <= '9') {
            for (; p_ < end_ && is_digit(*p_); ++p_, ++digits) m = m * 10 + static_cast<uint64_t>(*p_ - '0');
        } else {
            return false;
        }
        fractional = false;
        if (p_ < end_ && *p_ == '.') {
            fractional = true;
            ++p_;
            if (p_ >= end_ || !is_digit(*p_)) return false;
            for (; p_ < end_ && is_digit(*p_); ++p_, ++digits, --exp10) {
                m = m * 10 + static_cast<uint64_t>(*p_ - '0');
            }
        }
        bool simple = digits <= 19;  // m has not wrapped
        if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
            fractional = true;
            simple = false;
            ++p_;
            if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ >= end_ || !is_digit(*p_)) return false;
            while (p_ < end_ && is_digit(*p_)) ++p_;
        }
        if (p_ >= end_) return false;  // more digits may follow in the next read
        if (!simple || !exact_decimal(m, exp10, negative, v)) v = json_number(start, p_);
        return true;
    }

    bool literal(const char* word, std::size_t n) {
        if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
        p_ += n;
        return true;
    }

    // Any value, validated and skipped, `depth` levels below the event
    // (the strict parser's depth argument).
    bool skip(int depth) {
        uint64_t objects = 0;  // bit i: container i is an object
        int open = 0;
        for (;;) {
            // A value.
            if (p_ >= end_) return false;
            const char c = *p_;
            if (c == '"') {
                const char* s;
                std::size_t n;
                if (!string(s, n)) return false;
            } else if (c == '{' || c == '[') {
                if (depth + open >= kMaxFastDepth) return false;
                ++p_;
                ws();
                if (p_ >= end_) return false;
                if (*p_ == (c == '{' ? '}' : ']')) {
                    ++p_;
                } else {
                    const bool object = c == '{';
                    objects = (objects & ~(uint64_t{1} << open)) | (uint64_t{object} << open);
                    ++open;
                    if (object) {
                        const char* k;
                        std::size_t n;
                        if (!key_colon(k, n)) return false;
                    }
                    continue;  // the first member's value
                }
            } else if (c == 't') {
                if (!literal("true", 4)) return false;
            } else if (c == 'f') {
                if (!literal("false", 5)) return false;
            } else if (c == 'n') {
                if (!literal("null", 4)) return false;
            } else {
                bool fractional;
                if (!number(fractional)) return false;
            }
            // After a value: close containers, or go on to the next member.
            for (;;) {
                if (open == 0) return true;
                ws();
                if (p_ >= end_) return false;
                const bool object = (objects >> (open - 1)) & 1;
                const char d = *p_++;
                if (d == ',') {
                    ws();
                    if (object) {
                        const char* k;
                        std::size_t n;
                        if (!key_colon(k, n)) return false;
                    }
                    break;  // the next value
                }
                if (d != (object ? '}' : ']')) return false;
                --open;
            }
        }
    }

    const char* p_;
    const char* end_;
};

}  // namespace lostflops::trace::detail
