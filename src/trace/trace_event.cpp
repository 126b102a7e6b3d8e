// One trace event object -> EventFields. parse_event tries the fast path of
// trace_event_fast.cpp first; this file is the strict parser that decides
// every event the fast path gives up on (and names the error of a malformed
// one). A strict JSON (RFC 8259) recursive
// descent parser over a complete in-memory slice, written for speed: no DOM,
// strings scanned 16 bytes at a time (SSE2 compares and a byte mask, the
// technique of simdjson's string scanner, Langdale and Lemire 2019), string
// views into the input unless a string holds escapes, numbers with
// json_number (trace_number.cpp: correctly rounded, like Python's float()). Raw control
// characters inside strings are tolerated and counted (real traces contain
// them; the reader reports them as a named warning).
#include "trace/trace_event.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstring>

namespace lostflops::trace::detail {
namespace {

constexpr int kMaxDepth = 128;

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void put_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        s += static_cast<char>(0xE0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        s += static_cast<char>(0xF0 | (cp >> 18));
        s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// A scalar value as the analysis sees it.
struct Scalar {
    enum class Kind { none, number, string, other } kind = Kind::none;
    double number = 0;
    bool fractional = false;
    std::string_view text;
};

class Parser {
public:
    Parser(const char* p, const char* end, EventFields& f, std::string& err)
        : begin_(p), p_(p), end_(end), f_(f), err_(err) {}

    bool event() {
        ws();
        if (!expect('{')) return false;
        ws();
        if (peek() == '}') { ++p_; return true; }
        std::string key_buf;
        for (;;) {
            ws();
            std::string_view key;
            if (!string(key, &key_buf)) return false;
            ws();
            if (!expect(':')) return false;
            ws();
            if (!top_field(key)) return false;
            ws();
            if (peek() == ',') { ++p_; continue; }
            if (peek() == '}') { ++p_; break; }
            return fail("expected ',' or '}' in event");
        }
        return true;
    }
    bool need_more() const { return need_more_; }
    std::size_t consumed() const { return static_cast<std::size_t>(p_ - begin_); }

private:
    char peek() const { return p_ < end_ ? *p_ : '\0'; }
    void ws() { while (p_ < end_ && is_ws(*p_)) ++p_; }
    bool expect(char c) {
        if (p_ < end_ && *p_ == c) { ++p_; return true; }
        char msg[32];
        std::snprintf(msg, sizeof msg, "expected '%c'", c);
        return fail(msg);
    }
    bool fail(const char* what) {
        if (p_ >= end_) {  // ran into the end of the buffer: not an error yet
            need_more_ = true;
            return false;
        }
        err_ = "offset " + std::to_string(p_ - begin_) + " in event: " + what;
        return false;
    }
    bool short_input() {
        p_ = end_;
        return fail("input ends");
    }

    // At '"'. Sets out to the string's content; decodes into *buf when it has escapes.
    bool string(std::string_view& out, std::string* buf) {
        if (!expect('"')) return false;
        const char* start = p_;
        for (;;) {
            p_ = scan_plain_string(p_, end_);
            if (p_ >= end_) return fail("unterminated string");
            const char c = *p_;
            if (c == '"') { out = std::string_view(start, p_ - start); ++p_; return true; }
            if (c == '\\') break;
            if (static_cast<unsigned char>(c) < 0x20) ++f_.control_chars;
            ++p_;
        }
        // Slow path: escapes.
        std::string local;
        std::string& s = buf ? *buf : local;
        s.assign(start, p_);
        while (p_ < end_) {
            const char c = *p_++;
            if (c == '"') { out = buf ? std::string_view(s) : std::string_view(); return true; }
            if (static_cast<unsigned char>(c) < 0x20) ++f_.control_chars;
            if (c != '\\') { s += c; continue; }
            if (p_ >= end_) break;
            const char esc = *p_++;
            switch (esc) {
                case '"': s += '"'; break;
                case '\\': s += '\\'; break;
                case '/': s += '/'; break;
                case 'b': s += '\b'; break;
                case 'f': s += '\f'; break;
                case 'n': s += '\n'; break;
                case 'r': s += '\r'; break;
                case 't': s += '\t'; break;
                case 'u': {
                    uint32_t cp = 0;
                    if (!hex4(cp)) return false;
                    if (cp >= 0xD800 && cp < 0xDC00 && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
                        const char* save = p_;
                        p_ += 2;
                        uint32_t lo = 0;
                        if (!hex4(lo)) return false;
                        if (lo >= 0xDC00 && lo < 0xE000) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        } else {
                            p_ = save;
                            cp = 0xFFFD;
                        }
                    } else if (cp >= 0xD800 && cp < 0xE000) {
                        cp = 0xFFFD;  // lone surrogate
                    }
                    put_utf8(s, cp);
                    break;
                }
                default: --p_; return fail("invalid escape in string");
            }
        }
        return fail("unterminated string");
    }
    bool hex4(uint32_t& cp) {
        if (end_ - p_ < 4) return short_input();
        for (int i = 0; i < 4; ++i) {
            const int d = hex_digit(p_[i]);
            if (d < 0) return fail("bad hex digit in \\u escape");
            cp = cp * 16 + static_cast<uint32_t>(d);
        }
        p_ += 4;
        return true;
    }

    bool number(Scalar& out, bool convert) {
        const char* start = p_;
        if (peek() == '-') ++p_;
        if (peek() == '0') {
            ++p_;
        } else if (peek() >= '1' && peek() <= '9') {
            while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
        } else {
            return fail("invalid number");
        }
        bool frac = false;
        if (peek() == '.') {
            frac = true;
            ++p_;
            if (!(peek() >= '0' && peek() <= '9')) return fail("digit expected after '.'");
            while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
        }
        if (peek() == 'e' || peek() == 'E') {
            frac = true;
            ++p_;
            if (peek() == '+' || peek() == '-') ++p_;
            if (!(peek() >= '0' && peek() <= '9')) return fail("digit expected in exponent");
            while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
        }
        out.kind = Scalar::Kind::number;
        out.fractional = frac;
        out.text = std::string_view(start, p_ - start);
        if (!convert) return true;
        const double v = json_number(start, p_);
        out.number = v;
        return true;
    }

    bool literal(const char* word) {
        const std::size_t n = std::strlen(word);
        const std::size_t have = std::min(n, static_cast<std::size_t>(end_ - p_));
        if (std::memcmp(p_, word, have) != 0) return fail("invalid literal");
        if (have < n) return short_input();
        p_ += n;
        return true;
    }

    // Any value; scalars are reported in `out` (strings decoded into *buf).
    bool value(Scalar& out, std::string* buf, int depth, bool convert = false) {
        if (depth > kMaxDepth) return fail("nesting too deep");
        switch (peek()) {
            case '"': out.kind = Scalar::Kind::string; return string(out.text, buf);
            case '{': out.kind = Scalar::Kind::other; return skip_container('{', '}', true, depth);
            case '[': out.kind = Scalar::Kind::other; return skip_container('[', ']', false, depth);
            case 't': out.kind = Scalar::Kind::other; return literal("true");
            case 'f': out.kind = Scalar::Kind::other; return literal("false");
            case 'n': out.kind = Scalar::Kind::none; return literal("null");
            default: return number(out, convert);
        }
    }
    bool skip_container(char open, char close, bool object, int depth) {
        ++p_;
        (void)open;
        ws();
        if (peek() == close) { ++p_; return true; }
        std::string scratch;
        for (;;) {
            ws();
            if (object) {
                std::string_view key;
                if (!string(key, &scratch)) return false;
                ws();
                if (!expect(':')) return false;
                ws();
            }
            Scalar ignored;
            if (!value(ignored, &scratch, depth + 1)) return false;
            ws();
            if (peek() == ',') { ++p_; continue; }
            if (peek() == close) { ++p_; return true; }
            return fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }

    bool top_field(std::string_view key) {
        Scalar v;
        if (key == "args") {
            if (peek() == '{') return args();
            return value(v, nullptr, 1);
        }
        std::string* buf = nullptr;
        if (key == "name") buf = &f_.name_buf;
        else if (key == "cat") buf = &f_.cat_buf;
        else if (key == "ph") buf = &f_.ph_buf;
        const bool numeric = key == "ts" || key == "dur" || key == "pid" || key == "tid";
        if (!value(v, buf ? buf : &scratch_, 1, numeric)) return false;
        if (key == "ph") {
            if (v.kind == Scalar::Kind::string) f_.ph = v.text;
        } else if (key == "cat") {
            f_.has_cat = v.kind == Scalar::Kind::string;
            if (f_.has_cat) f_.cat = v.text;
        } else if (key == "name") {
            if (v.kind == Scalar::Kind::string) f_.name = v.text;
        } else if (key == "ts") {
            f_.has_ts = v.kind == Scalar::Kind::number && std::isfinite(v.number);
            f_.ts = v.number;
            f_.ts_fractional = !f_.has_ts || v.fractional;
        } else if (key == "dur") {
            f_.has_dur = v.kind == Scalar::Kind::number && std::isfinite(v.number);
            f_.dur = v.number;
        } else if (key == "pid") {
            f_.pid = to_int(v);
        } else if (key == "tid") {
            f_.tid = to_int(v);
        }
        return true;
    }

    bool args() {
        ++p_;
        ws();
        if (peek() == '}') { ++p_; return true; }
        std::string key_buf;
        for (;;) {
            ws();
            std::string_view key;
            if (!string(key, &key_buf)) return false;
            ws();
            if (!expect(':')) return false;
            ws();
            Scalar v;
            const bool coll = key == "Collective name";
            const bool dtype = key == "dtype";
            std::string_view* pg = key == "Process Group Name"          ? &f_.pg_name
                                   : key == "Process Group Description" ? &f_.pg_desc
                                   : key == "Process Group Ranks"       ? &f_.pg_ranks
                                                                        : nullptr;
            std::string* pg_buf = pg == &f_.pg_name ? &f_.pg_name_buf : pg == &f_.pg_desc ? &f_.pg_desc_buf
                                                                                          : &f_.pg_ranks_buf;
            // NCCL message sizes (Kineto's record_param_comms arguments on the kernel).
            const bool in_n = key == "In msg nelems", out_n = key == "Out msg nelems", group = key == "Group size";
            double* mem = memory_arg(key);
            const bool numeric = key == "stream" || key == "correlation" || in_n || out_n || group || mem;
            if (!value(v, coll ? &f_.coll_buf : dtype ? &f_.dtype_buf : pg ? pg_buf : &scratch_, 2, numeric)) return false;
            if (key == "stream") {
                f_.has_stream = true;
                f_.stream = to_int(v);
            } else if (key == "correlation") {
                f_.correlation = to_int(v);
            } else if (coll && v.kind == Scalar::Kind::string) {
                f_.collective = v.text;
            } else if (dtype && v.kind == Scalar::Kind::string) {
                f_.dtype = v.text;
            } else if (pg != nullptr && v.kind == Scalar::Kind::string) {
                *pg = v.text;
            } else if (in_n || out_n || group) {
                const double x = v.kind == Scalar::Kind::number && std::isfinite(v.number) ? v.number : -1;
                (in_n ? f_.in_nelems : out_n ? f_.out_nelems : f_.group_size) = x;
            } else if (mem != nullptr) {
                *mem = v.kind == Scalar::Kind::number ? v.number : kNoNumber;
            }
            ws();
            if (peek() == ',') { ++p_; continue; }
            if (peek() == '}') { ++p_; return true; }
            return fail("expected ',' or '}' in args");
        }
    }

    // The field of a [memory] event's argument, or nullptr.
    double* memory_arg(std::string_view key) {
        return key == "Total Allocated" ? &f_.mem_allocated
               : key == "Total Reserved" ? &f_.mem_reserved
               : key == "Device Type"    ? &f_.mem_device_type
               : key == "Device Id"      ? &f_.mem_device_id
                                         : nullptr;
    }

    // Python's int() as HTA applies it to a stream number: integers and
    // integral floats convert, decimal strings convert, anything else is -1.
    static int64_t to_int(const Scalar& v) {
        if (v.kind == Scalar::Kind::number) return python_int(v.number);
        if (v.kind != Scalar::Kind::string) return -1;
        return python_int(v.text);
    }

    const char* begin_;
    const char* p_;
    const char* end_;
    EventFields& f_;
    std::string& err_;
    std::string scratch_;
    bool need_more_ = false;
};

}  // namespace

void reset_event_fields(EventFields& out) {
    out.ph = out.cat = out.name = out.collective = {};
    out.has_cat = out.has_ts = out.has_dur = out.has_stream = false;
    out.ts_fractional = true;  // a missing "ts" makes pandas read the column as float
    out.ts = out.dur = 0;
    out.stream = -1;
    out.correlation = -1;
    out.pid = out.tid = -1;
    out.mem_allocated = out.mem_reserved = out.mem_device_type = out.mem_device_id = kNoNumber;
    out.control_chars = 0;
    out.dtype = out.pg_name = out.pg_desc = out.pg_ranks = {};
    out.in_nelems = out.out_nelems = out.group_size = -1;
}

ParseResult parse_event(const char* p, const char* end, EventFields& out, std::string& error,
                        std::size_t& consumed) {
    reset_event_fields(out);
    if (parse_event_fast(p, end, out, consumed)) return ParseResult::ok;
    // The fast path gave up (trace_event_fast.cpp): the strict parser decides.
    return parse_event_strict(p, end, out, error, consumed);
}

ParseResult parse_event_strict(const char* p, const char* end, EventFields& out, std::string& error,
                               std::size_t& consumed) {
    reset_event_fields(out);
    Parser parser(p, end, out, error);
    if (parser.event()) {
        consumed = parser.consumed();
        return ParseResult::ok;
    }
    return parser.need_more() ? ParseResult::need_more : ParseResult::malformed;
}

}  // namespace lostflops::trace::detail
