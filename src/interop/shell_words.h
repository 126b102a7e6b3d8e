// Splitting a launch script into words as a POSIX shell would for the parts
// launch scripts use: backslash-newline continuations, `#` comments at the
// start of a word, single and double quotes, backslash escapes; bash array
// brackets `NAME=(` and `)` are dropped. Variables are not expanded (a `$TP`
// stays a word, and the importer then says it is not a number).
#pragma once

#include <string>
#include <vector>

namespace lostflops::interop {

struct ShellWord {
    std::string text;
    int line = 0;  // 1-based line where the word starts
};

// Throws InputError(source, "line N") for an unterminated quote.
std::vector<ShellWord> shell_words(const std::string& text, const std::string& source);

}  // namespace lostflops::interop
