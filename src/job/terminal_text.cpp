// Escaping text from the input for terminals and comments (contract in
// lostflops/terminal_text.h). UTF-8 validity by the well-formed byte
// sequences of Unicode 15, table 3-7.
#include "lostflops/terminal_text.h"

#include <optional>

#include <fmt/format.h>

namespace lostflops {

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

std::string escape_text(std::string_view s, std::string_view also,
                        std::string (*escape)(Unsafe kind, std::string_view bytes)) {
    std::string out;
    out.reserve(s.size());
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_length(p + i, s.size() - i);
        const unsigned char c = p[i];
        std::optional<Unsafe> kind;
        if (len == 0) kind = Unsafe::stray_byte;
        else if (len == 1 && (c < 0x20 || c == 0x7F)) kind = Unsafe::control;
        else if (len == 1 && also.find(static_cast<char>(c)) != std::string_view::npos) kind = Unsafe::listed;
        else if (len == 2 && c == 0xC2 && p[i + 1] < 0xA0) kind = Unsafe::c1;
        else if (len == 3 && c == 0xE2 && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9))
            kind = Unsafe::separator;
        const std::size_t n = len == 0 ? 1 : len;
        if (kind) out += escape(*kind, s.substr(i, n));
        else out.append(s.data() + i, n);
        i += n;
    }
    return out;
}

std::string terminal_text(std::string_view s) {
    return escape_text(s, "", [](Unsafe kind, std::string_view b) -> std::string {
        const auto u = [&](std::size_t i) { return static_cast<unsigned char>(b[i]); };
        switch (kind) {
            case Unsafe::control:
                return b[0] == '\n' ? "\\n" : b[0] == '\r' ? "\\r" : b[0] == '\t' ? "\\t" : fmt::format("\\x{:02x}", u(0));
            case Unsafe::c1: return fmt::format("\\u{:04x}", u(1));
            case Unsafe::separator: return u(2) == 0xA8 ? "\\u2028" : "\\u2029";
            default: return fmt::format("\\x{:02x}", u(0));
        }
    });
}

}  // namespace lostflops
