// Field extractor for one Chrome-trace event object (already cut out of the
// stream): a hand-written strict JSON parser (RFC 8259) that keeps only the
// fields the analysis needs and validates and skips the rest, behind a fast
// path that takes the events written the usual way (trace_event_fast.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lostflops::trace::detail {

inline constexpr double kNoNumber = std::numeric_limits<double>::quiet_NaN();

struct EventFields {
    std::string_view ph, cat, name, collective;  // views into the event or the buffers below
    bool has_cat = false;
    bool has_ts = false;       // "ts" is a number
    bool ts_fractional = false;  // written with a fraction or exponent, or missing/null
    double ts = 0;
    bool has_dur = false;
    double dur = 0;
    bool has_stream = false;   // args.stream present
    int64_t stream = -1;       // -1 when absent or not an integer (HTA's rule)
    int64_t correlation = -1;  // args.correlation, -1 when absent
    int64_t pid = -1;          // "pid" (Python's int() of it), -1 when absent or not an integer
    int64_t tid = -1;          // "tid", the same way
    int control_chars = 0;     // raw control characters found inside strings
    // NCCL kernels: args "In msg nelems", "Out msg nelems", "Group size" (-1 when
    // absent or not a finite number) and "dtype".
    double in_nelems = -1, out_nelems = -1, group_size = -1;
    std::string_view dtype;
    // NCCL kernels (PyTorch 2.3+): args "Process Group Name", "Process Group
    // Description", "Process Group Ranks" (a string such as "[0, 1]").
    std::string_view pg_name, pg_desc, pg_ranks;
    // [memory] instant events (trace_memory.h): args "Total Allocated",
    // "Total Reserved", "Device Type", "Device Id" as numbers; NaN when
    // absent or not a number.
    double mem_allocated = kNoNumber, mem_reserved = kNoNumber, mem_device_type = kNoNumber,
           mem_device_id = kNoNumber;
    std::string name_buf, cat_buf, coll_buf, ph_buf, dtype_buf;  // unescaped copies when needed
    std::string pg_name_buf, pg_desc_buf, pg_ranks_buf;
};

// A JSON number's text [b, e) (RFC 8259 grammar) to the nearest double, as
// Python's float() gives it; beyond the double range +-infinity, below it
// zero (trace_number.cpp).
double json_number(const char* b, const char* e);
// m x 10^exp10 (sign apart), correctly rounded, when Clinger's fast path
// gives it (m at most 2^53 and |exp10| at most 22 once trailing zeros are
// dropped) or, for exp10 from -19 to -1, an exact 128-bit division; false
// otherwise (trace_number.cpp).
bool exact_decimal(uint64_t m, int exp10, bool negative, double& v);

// Python's int() as HTA applies it to args.stream and args.correlation:
// integers and integral floats convert, decimal strings convert, anything
// else (and numbers beyond +-9e18) is -1.
int64_t python_int(double number);
int64_t python_int(std::string_view text);

enum class ParseResult { ok, need_more, malformed };

// Parses one JSON object starting at p (no leading whitespace) and ending at
// or before `end`; on success `consumed` is its length. need_more: the
// object runs past `end` (read more and call again); malformed: not valid
// JSON, `error` says where (offset inside the event) and why.
ParseResult parse_event(const char* p, const char* end, EventFields& out, std::string& error,
                        std::size_t& consumed);

// Every field to its value for an event without it.
void reset_event_fields(EventFields& out);

// The strict parser alone (parse_event without the fast path).
ParseResult parse_event_strict(const char* p, const char* end, EventFields& out, std::string& error,
                               std::size_t& consumed);

// The fast path parse_event tries first (trace_event_fast.cpp): true with the
// same fields and length the strict parser would give; false when the event
// needs the strict parser (escapes, control characters, fields of unusual
// types, deep nesting, errors, the end of the buffer). `out` must be reset.
bool parse_event_fast(const char* p, const char* end, EventFields& out, std::size_t& consumed);

// The first byte in [p, end) that is '"', '\\' or a control character
// (below 0x20), or end: the run of a JSON string both parsers take as is.
// Sixteen bytes at a time (SSE2, part of every x86-64), then eight (SWAR:
// the zero-byte test of Mycroft's strlen, per byte class), then one.
inline const char* scan_plain_string(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
    const __m128i below = _mm_set1_epi8(0x20), sign = _mm_set1_epi8(static_cast<char>(0x80));
    while (end - p >= 16) {
        const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        // Unsigned c < 0x20 as a signed compare after flipping the sign bit.
        const __m128i ctrl = _mm_cmplt_epi8(_mm_xor_si128(w, sign), _mm_xor_si128(below, sign));
        const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, slash)), ctrl);
        const int mask = _mm_movemask_epi8(hit);
        if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
        p += 16;
    }
#endif
    while (end - p >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        constexpr uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        const uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        const uint64_t special = ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w);
        if ((special & highs) != 0) break;
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
    return p;
}

}  // namespace lostflops::trace::detail
