// Text from traces made safe for JSON: kernel names and file names are the
// trace's bytes (any byte, NUL and ESC included), so before JSON text is
// written invalid UTF-8 becomes U+FFFD (for a terminal: terminal_text,
// lostflops/terminal_text.h). Internal to src/trace (and the traces' HTML page).
#pragma once

#include <string>
#include <string_view>

namespace lostflops::trace {

// Appends `s` as a JSON string (RFC 8259: quotes, backslash and controls
// escaped; invalid UTF-8 replaced by U+FFFD, as nlohmann's replace handler does).
void append_json_string(std::string& out, std::string_view s);
// Appends a finite double in the shortest form that reads back to it
// (std::logic_error on NaN or infinity: the analysis never makes them).
void append_json_number(std::string& out, double v);

}  // namespace lostflops::trace
