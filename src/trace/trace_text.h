// Text from traces made safe for where it goes: kernel names and file names
// are the trace's bytes (any byte, NUL and ESC included), so before a
// terminal sees them control characters become escapes, and before JSON
// text is written invalid UTF-8 becomes U+FFFD. Internal to src/trace (and
// the traces' HTML page).
#pragma once

#include <string>
#include <string_view>

namespace lostflops::trace {

// `s` with C0 controls (U+0000-U+001F), DEL and C1 controls (U+0080-U+009F,
// which some terminals take as escape sequences) written as \xNN / \u00NN,
// and bytes that are not UTF-8 written as \xNN; other text as it is.
std::string printable(std::string_view s);

// Appends `s` as a JSON string (RFC 8259: quotes, backslash and controls
// escaped; invalid UTF-8 replaced by U+FFFD, as nlohmann's replace handler does).
void append_json_string(std::string& out, std::string_view s);
// Appends a finite double in the shortest form that reads back to it
// (std::logic_error on NaN or infinity: the analysis never makes them).
void append_json_number(std::string& out, double v);

}  // namespace lostflops::trace
