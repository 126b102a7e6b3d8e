// Escaping trace text for terminals and JSON (contract in trace_text.h).
// UTF-8 validity by the well-formed byte sequences of Unicode 15, table 3-7
// (no overlongs, no surrogates, nothing above U+10FFFF); JSON string escapes
// by RFC 8259 section 7; numbers by fmt's shortest round-trip form (Ryu-like
// Dragonbox), valid JSON for every finite double.
#include "trace/trace_text.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace lostflops::trace {
namespace {

// Length of the well-formed UTF-8 sequence at p (1 to 4), or 0.
std::size_t utf8_length(const unsigned char* p, std::size_t n) {
    const unsigned c = p[0];
    if (c < 0x80) return 1;
    const auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
        return i < n && p[i] >= lo && p[i] <= hi;
    };
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
}

}  // namespace

std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_length(p + i, s.size() - i);
        if (len == 0) {
            out += fmt::format("\\x{:02x}", p[i]);
            ++i;
        } else if (len == 1 && (p[i] < 0x20 || p[i] == 0x7F)) {
            out += fmt::format("\\x{:02x}", p[i]);
            ++i;
        } else if (len == 2 && p[i] == 0xC2 && p[i + 1] < 0xA0) {  // U+0080..U+009F
            out += fmt::format("\\u{:04x}", p[i + 1]);
            i += 2;
        } else {
            out.append(s.data() + i, len);
            i += len;
        }
    }
    return out;
}

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = p[i];
        const std::size_t len = utf8_length(p + i, s.size() - i);
        if (len == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
            continue;
        }
        if (len > 1) {
            out.append(s.data() + i, len);
            i += len;
            continue;
        }
        ++i;
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) out += fmt::format("\\u{:04x}", c);
                else out += static_cast<char>(c);
        }
    }
    out += '"';
}

void append_json_number(std::string& out, double v) {
    if (!std::isfinite(v)) throw std::logic_error("trace JSON: a figure is not finite");
    fmt::format_to(std::back_inserter(out), "{}", v);
}

}  // namespace lostflops::trace
