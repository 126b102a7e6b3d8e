// Fast path of the event parser: one pass over an event written the way
// Kineto writes them (no escapes or raw control characters in the strings
// read, "ph"/"cat"/"name" strings, "ts"/"dur" numbers, nesting under 48
// levels), validating the JSON grammar of RFC 8259 as the strict parser of
// trace_event.cpp does but without recursion, per-value records or copies:
// values the analysis does not read are checked by an iterative walk with a
// bit stack of open containers (the scanner: trace_json_fast.h), keys are
// told apart by length and bytes, and strings are scanned 16 bytes at a time
// (SSE2, scan_plain_string of trace_event.h, as in the strict parser). It
// returns false on anything else (an escape, a control character, a
// non-string name, an error, the end of the buffer), and parse_event then
// parses the same bytes again with the strict parser, which gives the answer
// and the exact error text; so the fast path only ever accepts events the
// strict parser accepts, with the same fields.
#include "trace/trace_event.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "trace/trace_json_fast.h"

namespace lostflops::trace::detail {
namespace {

class FastParser : public FastJson {
public:
    FastParser(const char* p, const char* end, EventFields& f) : FastJson(p, end), f_(f) {}

    bool event() {
        const char* begin = p_;
        if (p_ >= end_ || *p_ != '{') return false;
        ++p_;
        ws();
        if (p_ < end_ && *p_ == '}') {
            ++p_;
            consumed_ = static_cast<std::size_t>(p_ - begin);
            return true;
        }
        for (;;) {
            const char* key = nullptr;
            std::size_t len = 0;
            if (!key_colon(key, len)) return false;
            if (!top_field(key, len)) return false;
            ws();
            if (p_ >= end_) return false;
            const char c = *p_++;
            if (c == ',') { ws(); continue; }
            if (c == '}') break;
            return false;
        }
        consumed_ = static_cast<std::size_t>(p_ - begin);
        return true;
    }
    std::size_t consumed() const { return consumed_; }

private:
    // The first byte first: most keys of a length are told apart by it
    // without a call to memcmp.
    static bool is(const char* key, std::size_t len, const char* word, std::size_t n) {
        return len == n && key[0] == word[0] && std::memcmp(key, word, n) == 0;
    }

    bool top_field(const char* key, std::size_t len) {
        const char c = *p_;
        switch (len) {
            case 2:
                if (is(key, len, "ph", 2)) return text(f_.ph);
                if (is(key, len, "ts", 2)) {
                    if (!starts_number(c)) return false;
                    double v;
                    bool fractional;
                    if (!number_value(v, fractional)) return false;
                    f_.has_ts = std::isfinite(v);
                    f_.ts = v;
                    f_.ts_fractional = !f_.has_ts || fractional;
                    return true;
                }
                break;
            case 3:
                if (is(key, len, "cat", 3)) {
                    if (!text(f_.cat)) return false;
                    f_.has_cat = true;
                    return true;
                }
                if (is(key, len, "dur", 3)) {
                    if (!starts_number(c)) return false;
                    double v;
                    bool fractional;
                    if (!number_value(v, fractional)) return false;
                    f_.has_dur = std::isfinite(v);
                    f_.dur = v;
                    return true;
                }
                if (is(key, len, "pid", 3)) return int_field(f_.pid);
                if (is(key, len, "tid", 3)) return int_field(f_.tid);
                break;
            case 4:
                if (is(key, len, "name", 4)) return text(f_.name);
                if (is(key, len, "args", 4)) return c == '{' ? args() : skip(1);
                break;
            default:
                break;
        }
        return skip(1);
    }

    // A string field read as a view into the event (strings only; anything
    // else goes to the strict parser).
    bool text(std::string_view& out) {
        const char* s;
        std::size_t n;
        if (!string(s, n)) return false;
        out = std::string_view(s, n);
        return true;
    }

    // args.stream and args.correlation: Python's int() of a number or a
    // string, -1 for anything else (the strict parser's to_int).
    bool int_field(int64_t& out) {
        const char c = *p_;
        if (c == '"') {
            std::string_view s;
            if (!text(s)) return false;
            out = python_int(s);
            return true;
        }
        if (!starts_number(c)) {
            out = -1;
            return skip(2);
        }
        if (small_whole(out)) return true;
        double v;
        bool fractional;
        if (!number_value(v, fractional)) return false;
        out = python_int(v);
        return true;
    }
    // The usual pid, tid, stream or correlation: 1 to 15 digits without a
    // leading zero, fraction or exponent (below 2^53: the double
    // number_value would give is that integer, and python_int of it too).
    // False, reading nothing, for anything else.
    bool small_whole(int64_t& out) {
        const char* q = p_;
        int64_t v = 0;
        while (q < end_ && is_digit(*q) && q - p_ < 16) v = v * 10 + (*q++ - '0');
        const std::ptrdiff_t n = q - p_;
        if (n == 0 || n > 15 || (*p_ == '0' && n > 1) || q >= end_ || *q == '.' || *q == 'e' || *q == 'E') return false;
        p_ = q;
        out = v;
        return true;
    }
    // NCCL sizes: a finite number, else -1.
    bool size_field(double& out) {
        if (!starts_number(*p_)) {
            out = -1;
            return skip(2);
        }
        double v;
        bool fractional;
        if (!number_value(v, fractional)) return false;
        out = std::isfinite(v) ? v : -1;
        return true;
    }
    // [memory] arguments: the number as read, NaN for anything else.
    bool memory_field(double& out) {
        if (!starts_number(*p_)) {
            out = kNoNumber;
            return skip(2);
        }
        bool fractional;
        return number_value(out, fractional);
    }

    bool arg(const char* key, std::size_t len) {
        switch (len) {
            case 5:
                if (is(key, len, "dtype", 5)) return text(f_.dtype);
                break;
            case 6:
                if (is(key, len, "stream", 6)) {
                    f_.has_stream = true;
                    return int_field(f_.stream);
                }
                break;
            case 9:
                if (is(key, len, "Device Id", 9)) return memory_field(f_.mem_device_id);
                break;
            case 10:
                if (is(key, len, "Group size", 10)) return size_field(f_.group_size);
                break;
            case 11:
                if (is(key, len, "correlation", 11)) return int_field(f_.correlation);
                if (is(key, len, "Device Type", 11)) return memory_field(f_.mem_device_type);
                break;
            case 13:
                if (is(key, len, "In msg nelems", 13)) return size_field(f_.in_nelems);
                break;
            case 14:
                if (is(key, len, "Out msg nelems", 14)) return size_field(f_.out_nelems);
                if (is(key, len, "Total Reserved", 14)) return memory_field(f_.mem_reserved);
                break;
            case 15:
                if (is(key, len, "Collective name", 15)) return text(f_.collective);
                if (is(key, len, "Total Allocated", 15)) return memory_field(f_.mem_allocated);
                break;
            case 18:
                if (is(key, len, "Process Group Name", 18)) return text(f_.pg_name);
                break;
            case 19:
                if (is(key, len, "Process Group Ranks", 19)) return text(f_.pg_ranks);
                break;
            case 25:
                if (is(key, len, "Process Group Description", 25)) return text(f_.pg_desc);
                break;
            default:
                break;
        }
        return skip(2);
    }

    bool args() {
        ++p_;
        ws();
        if (p_ >= end_) return false;
        if (*p_ == '}') { ++p_; return true; }
        for (;;) {
            const char* key;
            std::size_t len;
            if (!key_colon(key, len)) return false;
            if (!arg(key, len)) return false;
            ws();
            if (p_ >= end_) return false;
            const char c = *p_++;
            if (c == ',') { ws(); continue; }
            if (c == '}') return true;
            return false;
        }
    }

    EventFields& f_;
    std::size_t consumed_ = 0;
};

}  // namespace

bool parse_event_fast(const char* p, const char* end, EventFields& out, std::size_t& consumed) {
    FastParser parser(p, end, out);
    if (!parser.event()) return false;
    consumed = parser.consumed();
    return true;
}

}  // namespace lostflops::trace::detail
