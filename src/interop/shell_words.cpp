// Shell word splitting for launch scripts (shell_words.h), following the
// quoting rules of POSIX sh (IEEE Std 1003.1, Shell Command Language 2.2
// Quoting, 2.3 Token Recognition): backslash-newline is removed, `#` starts a
// comment only at the start of a word, single quotes keep everything, double
// quotes keep everything but `\"`, `\\`, `\$` and backslash-newline.
#include "interop/shell_words.h"

#include "lostflops/error.h"

namespace lostflops::interop {

std::vector<ShellWord> shell_words(const std::string& text, const std::string& source) {
    std::vector<ShellWord> words;
    std::string cur;
    bool in_word = false;
    int line = 1;
    int word_line = 1;
    const auto finish = [&] {
        if (!in_word) return;
        // bash arrays: `GPT_ARGS=(` opens, `)` closes; neither is a flag.
        const bool array_open = cur.size() >= 2 && cur.compare(cur.size() - 2, 2, "=(") == 0;
        if (!array_open && cur != "(" && cur != ")") words.push_back({cur, word_line});
        cur.clear();
        in_word = false;
    };
    const auto start = [&] {
        if (!in_word) word_line = line;
        in_word = true;
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size()) {
            if (text[i + 1] == '\n') {
                ++line;
                ++i;
                continue;
            }
            if (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
                ++line;
                i += 2;
                continue;
            }
            start();
            cur += text[++i];
            continue;
        }
        if (c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == ';') {
            finish();
            if (c == '\n') ++line;
            continue;
        }
        if (c == '#' && !in_word) {
            while (i < text.size() && text[i] != '\n') ++i;
            --i;
            continue;
        }
        if (c == '\'' || c == '"') {
            start();
            const int opened = line;
            size_t j = i + 1;
            for (; j < text.size() && text[j] != c; ++j) {
                if (text[j] == '\n') ++line;
                if (c == '"' && text[j] == '\\' && j + 1 < text.size()) {
                    const char n = text[j + 1];
                    if (n == '\n') {
                        ++line;
                        ++j;
                        continue;
                    }
                    if (n == '"' || n == '\\' || n == '$' || n == '`') {
                        cur += n;
                        ++j;
                        continue;
                    }
                }
                cur += text[j];
            }
            if (j >= text.size())
                throw InputError(source, "line " + std::to_string(opened),
                                 std::string("unterminated ") + (c == '"' ? "double" : "single") + " quote");
            i = j;
            continue;
        }
        start();
        cur += c;
    }
    finish();
    return words;
}

}  // namespace lostflops::interop
