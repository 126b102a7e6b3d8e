// Field extractor for one Chrome-trace event object (already cut out of the
// stream): a hand-written strict JSON parser (RFC 8259) that keeps only the
// fields the analysis needs and validates and skips the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lostflops::trace::detail {

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
    int control_chars = 0;     // raw control characters found inside strings
    // NCCL kernels: args "In msg nelems", "Out msg nelems", "Group size" (-1 when
    // absent or not a finite number) and "dtype".
    double in_nelems = -1, out_nelems = -1, group_size = -1;
    std::string_view dtype;
    std::string name_buf, cat_buf, coll_buf, ph_buf, dtype_buf;  // unescaped copies when needed
};

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

}  // namespace lostflops::trace::detail
