// Tokens of a launch script (IEEE Std 1003.1-2017, Shell Command Language
// 2.3 "Token Recognition" and 2.7.4 "Here-Document"): words kept as written
// (quotes, `$(...)`, `${...}`, backquotes, `$'...'` nested inside them),
// operators, newlines; `#` comments dropped except the `#SBATCH` lines
// before the first command; backslash-newline removed outside single quotes;
// here-document bodies read at the newline that ends their line. Used only by
// shell_parse.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shell/shell_syntax.h"

namespace lostflops::interop {

enum class TokenKind { word, op, newline, eof };

struct Token {
    TokenKind kind = TokenKind::eof;
    std::string text;                     // word: raw text; op: the operator ("&&", "2>", "((")
    int line = 0;
    bool array = false;                   // word "NAME=(" / "NAME+=(": elements below, text "NAME=" / "NAME+="
    std::vector<ShellWordRaw> elements;
};

class ShellLexer {
public:
    ShellLexer(const std::string& text, std::string source, int first_line);
    Token next();
    // After the "((" operator: the text up to the matching "))", consumed.
    std::string read_arith();
    // Registers a here-document whose body starts on the line after the
    // current one. `delimiter` is the raw word after << / <<-.
    std::shared_ptr<HereDoc> add_heredoc(const std::string& delimiter, bool strip_tabs, int line);
    const std::vector<std::pair<std::string, int>>& sbatch() const { return sbatch_; }
    const std::string& source() const { return source_; }
    int line() const { return line_; }

private:
    struct Pending {
        std::shared_ptr<HereDoc> doc;
        std::string delimiter;
        bool strip_tabs = false;
    };
    [[noreturn]] void fail(int line, const std::string& what) const;
    // Counts one level of quotes or expansions for as long as it lives;
    // past kMaxNesting an InputError, before the readers' recursion runs out of stack.
    struct NestingGuard {
        NestingGuard(ShellLexer& lexer, int line);
        ~NestingGuard() { --lexer.nesting_; }
        NestingGuard(const NestingGuard&) = delete;
        NestingGuard& operator=(const NestingGuard&) = delete;
        ShellLexer& lexer;
    };
    char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
    bool continuation();           // at "\\\n": skips it
    void skip_blanks();
    void read_word(std::string& raw);
    void read_single(std::string& raw);
    void read_double(std::string& raw);
    void read_dollar(std::string& raw, bool in_double);
    void read_backquote(std::string& raw);
    void read_escaped(std::string& raw, char close, const char* what);
    bool read_quoted(std::string& raw);
    void read_balanced(std::string& raw, char open, char close);
    void read_heredocs();
    Token read_array(Token t);

    const std::string& text_;
    std::string source_;
    size_t pos_ = 0;
    int line_ = 1;
    bool any_token_ = false;
    int nesting_ = 0;
    std::vector<Pending> pending_;
    std::vector<std::pair<std::string, int>> sbatch_;
};

// A name as the shell defines it: [A-Za-z_][A-Za-z0-9_]*.
bool is_shell_name(const std::string& s);

}  // namespace lostflops::interop
