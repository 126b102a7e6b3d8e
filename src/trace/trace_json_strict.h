// The JSON grammar of the strict event parser (internal to src/trace; its
// only user is trace_event.cpp, which reads Kineto's fields with it): a
// recursive descent over one event's bytes by RFC 8259, strings as views
// into the input unless they hold escapes (then decoded, UTF-16 surrogate
// pairs to UTF-8, a lone surrogate to U+FFFD), numbers converted by
// json_number when asked, nesting up to 128 levels. Raw control characters
// inside strings are tolerated and counted in EventFields::control_chars.
// A member that fails returns false and says why in the error text, with
// the offset in the event, unless it ran into the end of the buffer
// (need_more: read more and parse again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "trace/trace_event.h"

namespace lostflops::trace::detail {

// A scalar value as the analysis sees it.
struct Scalar {
    enum class Kind { none, number, string, other } kind = Kind::none;
    double number = 0;
    bool fractional = false;
    std::string_view text;
};

class StrictJson {
public:
    StrictJson(const char* p, const char* end, EventFields& f, std::string& err)
        : begin_(p), p_(p), end_(end), f_(f), err_(err) {}

    bool need_more() const { return need_more_; }
    std::size_t consumed() const { return static_cast<std::size_t>(p_ - begin_); }

protected:
    static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

    char peek() const { return p_ < end_ ? *p_ : '\0'; }
    void ws() { while (p_ < end_ && is_ws(*p_)) ++p_; }
    bool expect(char c) {
        if (p_ < end_ && *p_ == c) { ++p_; return true; }
        char msg[32];
        std::snprintf(msg, sizeof msg, "expected '%c'", c);
        return fail(msg);
    }
    bool fail(const char* what);
    bool short_input();

    // At '"'. Sets out to the string's content; decodes into *buf when it has escapes.
    bool string(std::string_view& out, std::string* buf);
    bool hex4(uint32_t& cp);
    bool number(Scalar& out, bool convert);
    bool literal(const char* word);

    // Any value; scalars are reported in `out` (strings decoded into *buf).
    bool value(Scalar& out, std::string* buf, int depth, bool convert = false);
    bool skip_container(char open, char close, bool object, int depth);

    // The items of an object or array whose opening bracket has been read, up
    // to and past `close`: each item's key (an object member's, decoded into
    // *key_buf when it has escapes; empty for an array's item) goes to
    // on_item(key), which reads the value. Anything but ',' or `close` after
    // an item fails with `separator_error`.
    template <class OnItem>
    bool items(char close, bool object, std::string* key_buf, const char* separator_error, OnItem&& on_item) {
        ws();
        if (peek() == close) { ++p_; return true; }
        for (;;) {
            ws();
            std::string_view key;
            if (object) {
                if (!string(key, key_buf)) return false;
                ws();
                if (!expect(':')) return false;
                ws();
            }
            if (!on_item(key)) return false;
            ws();
            if (peek() == ',') { ++p_; continue; }
            if (peek() == close) { ++p_; return true; }
            return fail(separator_error);
        }
    }

    const char* begin_;
    const char* p_;
    const char* end_;
    EventFields& f_;
    std::string& err_;
    bool need_more_ = false;
};

}  // namespace lostflops::trace::detail
