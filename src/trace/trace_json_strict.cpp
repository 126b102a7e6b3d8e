// The strict event parser's JSON grammar (trace_json_strict.h): a strict
// JSON (RFC 8259) recursive descent parser over a complete in-memory slice,
// written for speed: no DOM, strings scanned 16 bytes at a time (SSE2
// compares and a byte mask, the technique of simdjson's string scanner,
// Langdale and Lemire 2019; scan_plain_string in trace_event.h), string
// views into the input unless a string holds escapes (decoded: RFC 8259
// section 7, the UTF-16 code units of a u escape to UTF-8), numbers with
// json_number (trace_number.cpp: correctly rounded, like Python's float()).
#include "trace/trace_json_strict.h"

#include <algorithm>
#include <cstring>

namespace lostflops::trace::detail {
namespace {

constexpr int kMaxDepth = 128;

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

}  // namespace

bool StrictJson::fail(const char* what) {
    if (p_ >= end_) {  // ran into the end of the buffer: not an error yet
        need_more_ = true;
        return false;
    }
    err_ = "offset " + std::to_string(p_ - begin_) + " in event: " + what;
    return false;
}

bool StrictJson::short_input() {
    p_ = end_;
    return fail("input ends");
}

bool StrictJson::string(std::string_view& out, std::string* buf) {
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

bool StrictJson::hex4(uint32_t& cp) {
    if (end_ - p_ < 4) return short_input();
    for (int i = 0; i < 4; ++i) {
        const int d = hex_digit(p_[i]);
        if (d < 0) return fail("bad hex digit in \\u escape");
        cp = cp * 16 + static_cast<uint32_t>(d);
    }
    p_ += 4;
    return true;
}

bool StrictJson::number(Scalar& out, bool convert) {
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

bool StrictJson::literal(const char* word) {
    const std::size_t n = std::strlen(word);
    const std::size_t have = std::min(n, static_cast<std::size_t>(end_ - p_));
    if (std::memcmp(p_, word, have) != 0) return fail("invalid literal");
    if (have < n) return short_input();
    p_ += n;
    return true;
}

bool StrictJson::value(Scalar& out, std::string* buf, int depth, bool convert) {
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

bool StrictJson::skip_container(char open, char close, bool object, int depth) {
    ++p_;
    (void)open;
    std::string scratch;
    return items(close, object, &scratch, object ? "expected ',' or '}'" : "expected ',' or ']'", [&](std::string_view) {
        Scalar ignored;
        return value(ignored, &scratch, depth + 1);
    });
}

}  // namespace lostflops::trace::detail
