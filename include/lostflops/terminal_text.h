// Text from the input made safe for a terminal, and for a one-line comment of
// a generated file. A job's name, a key, a value, a file name, a kernel name
// may hold any byte: before a table, a note or an error message shows it,
// C0 controls (U+0000-U+001F: \n, \r, \t by name, the others \xNN), DEL,
// C1 controls (U+0080-U+009F, which some terminals take as escape sequences,
// and U+0085, a line break to YAML 1.1), the line and paragraph separators
// U+2028 and U+2029 (line breaks to YAML 1.1 readers such as PyYAML) and
// bytes that are not UTF-8 are written as visible escapes; other text as it
// is. The result is one line of valid UTF-8 with no control character. JSON
// and HTML output escape in their own way (nlohmann::json, xml_escape).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lostflops {

std::string terminal_text(std::string_view s);

// What escape_text() hands its escaper: a character (or a stray byte) that
// cannot stand as it is.
enum class Unsafe {
    stray_byte,  // not UTF-8: one byte
    control,     // C0 (U+0000-U+001F) or DEL: one byte
    c1,          // U+0080-U+009F: two bytes, C2 xx
    separator,   // U+2028 or U+2029: three bytes, E2 80 A8/A9
    listed,      // an ASCII character of `also`
};

// `s` with each unsafe character (and each character of `also`) replaced by
// escape(kind, bytes); the rest as it is. The one walk over UTF-8 that
// terminal_text and the exporters' escapers (interop/job_draft.h) share.
std::string escape_text(std::string_view s, std::string_view also,
                        std::string (*escape)(Unsafe kind, std::string_view bytes));

// Length of the well-formed UTF-8 sequence at p (1 to 4; n bytes left), or 0
// (Unicode 15 table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(const unsigned char* p, std::size_t n);

}  // namespace lostflops
