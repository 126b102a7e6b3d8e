// Escaping trace text for JSON (contract in trace_text.h). UTF-8 validity
// by lostflops/terminal_text.h utf8_length; JSON string escapes
// by RFC 8259 section 7; numbers by fmt's shortest round-trip form (Ryu-like
// Dragonbox), valid JSON for every finite double.
#include "trace/trace_text.h"

#include "lostflops/terminal_text.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace lostflops::trace {

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
