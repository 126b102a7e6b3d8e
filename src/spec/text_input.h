// Reading user text files: existence, size and "is this text at all" checks,
// shared by every parser of user input. Throws InputError.
#pragma once

#include <string>

namespace lostflops {

// Whole file as text; InputError if missing, unreadable, larger than
// max_bytes, empty or binary.
std::string read_text_file(const std::string& path, size_t max_bytes = 64u << 20);

// InputError if `text` is empty (or only whitespace) or binary (NUL bytes,
// invalid UTF-8, control characters other than tab/CR/LF).
void check_text(const std::string& text, const std::string& source);

}  // namespace lostflops
