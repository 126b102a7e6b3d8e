// Word expansion of launch scripts (IEEE Std 1003.1-2017, Shell Command
// Language 2.6: parameter expansion with the operators :- - := = :+ + :? ?
// # ## % %% and bash's / // :offset:length ^^ ,, ${#...} ${!...} and arrays;
// command substitution; arithmetic expansion; field splitting on blanks;
// quote removal). Pathname expansion is not done (a glob stays a word, as
// bash leaves a pattern that matches no file). Command substitutions are
// evaluated only when they are pure (shell_builtins.cpp), otherwise their
// value is unknown. This file scans a word (quotes, escapes, $ and
// backquotes); the parameters of ${...} are looked up in shell_lookup.cpp,
// their operators applied in shell_params.cpp.
#include <algorithm>
#include <stdexcept>

#include "shell/shell_lexer.h"
#include "shell/shell_scan.h"

namespace lostflops::interop {

namespace scan {

size_t match_close(const std::string& s, size_t i, char open, char close) {
    int depth = 1;
    while (i < s.size()) {
        const char c = s[i];
        if (c == '\\') {
            i += 2;
        } else if (c == '\'') {
            i = s.find('\'', i + 1);
            if (i == std::string::npos) return s.size();
            ++i;
        } else if (c == '"') {
            ++i;
            while (i < s.size() && s[i] != '"') {
                if (s[i] == '\\') ++i;
                else if (s[i] == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{'))
                    i = match_close(s, i + 2, s[i + 1], s[i + 1] == '(' ? ')' : '}') - 1;
                ++i;
            }
            ++i;
        } else if (c == '`') {
            ++i;
            while (i < s.size() && s[i] != '`') i += s[i] == '\\' ? 2 : 1;
            ++i;
        } else if (c == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
            i = match_close(s, i + 2, s[i + 1], s[i + 1] == '(' ? ')' : '}');
        } else {
            if (c == open) ++depth;
            if (c == close && --depth == 0) return i + 1;
            ++i;
        }
    }
    return s.size();
}

std::string abbreviate(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s.size() > 48 ? s.substr(0, 45) + "..." : s;
}

void Scanner::scan(const std::string& s, bool dq) {
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (c == '\\' && i + 1 < s.size()) {
            const char n = s[i + 1];
            if (!dq) {
                b_.lit(std::string(1, n), true);
            } else if (n == '$' || n == '`' || n == '\\' || n == '\n' || (n == '"' && !heredoc_)) {
                if (n != '\n') b_.lit(std::string(1, n), true);
            } else {
                b_.lit(std::string{c, n}, true);
            }
            i += 2;
        } else if (c == '\'' && !dq) {
            size_t end = s.find('\'', i + 1);
            if (end == std::string::npos) end = s.size();
            b_.quote_seen();
            b_.lit(s.substr(i + 1, end - i - 1), true);
            i = end + 1;
        } else if (c == '"' && !dq) {
            const size_t end = close_dquote(s, i + 1);
            b_.quote_seen();
            scan(s.substr(i + 1, end - i - 1), true);
            i = end + 1;
        } else if (c == '`') {
            size_t j = i + 1;
            std::string inner;
            while (j < s.size() && s[j] != '`') {
                if (s[j] == '\\' && j + 1 < s.size() && (s[j + 1] == '$' || s[j + 1] == '`' || s[j + 1] == '\\')) ++j;
                inner += s[j++];
            }
            b_.value(ev_.command_substitution(inner, line_), dq);
            i = j + 1;
        } else if (c == '$') {
            i = dollar(s, i, dq);
        } else if (c == kMark) {
            // A template's placeholder (shell_lexer.cpp), or an unknown
            // value inside a string evaluated again (sh -c, eval).
            const size_t end = std::min(s.find(kMarkEnd, i), s.size());
            const std::string inside = s.substr(i + 1, end - i - 1);
            const std::string why = !inside.empty() && inside[0] == '<'
                                        ? "the template's placeholder `" + inside + "` at " + ev_.where(line_) +
                                              " (fill it in, or give the value with --env or --var)"
                                        : ev_.reason_in(s.substr(i, end + 1 - i));
            b_.value({"", why}, dq);
            i = end + 1;
        } else {
            b_.lit(std::string(1, c), dq);
            ++i;
        }
    }
}

size_t Scanner::close_dquote(const std::string& s, size_t i) {
    while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\') {
            i += 2;
        } else if (s[i] == '$' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
            i = match_close(s, i + 2, s[i + 1], s[i + 1] == '(' ? ')' : '}');
        } else if (s[i] == '`') {
            ++i;
            while (i < s.size() && s[i] != '`') i += s[i] == '\\' ? 2 : 1;
            ++i;
        } else {
            ++i;
        }
    }
    return std::min(i, s.size());
}

size_t Scanner::dollar(const std::string& s, size_t i, bool dq) {
    if (i + 1 >= s.size()) {
        b_.lit("$", dq);
        return i + 1;
    }
    const char n = s[i + 1];
    if (n == '(' && i + 2 < s.size() && s[i + 2] == '(') {
        const size_t end = match_close(s, i + 2, '(', ')');
        const std::string inner = s.substr(i + 3, end >= i + 5 ? end - i - 5 : 0);
        b_.value(ev_.arith_expansion(inner, line_), dq);
        return end;
    }
    if (n == '(') {
        const size_t end = match_close(s, i + 2, '(', ')');
        b_.value(ev_.command_substitution(s.substr(i + 2, end - i - 3), line_), dq);
        return end;
    }
    if (n == '{') {
        const size_t end = match_close(s, i + 2, '{', '}');
        parameter(s.substr(i + 2, end - i - 3), dq);
        return end;
    }
    if (n == '\'' && !dq) {
        size_t j = i + 2;
        std::string text;
        while (j < s.size() && s[j] != '\'') {
            if (s[j] == '\\' && j + 1 < s.size()) {
                const char e = s[++j];
                text += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'a' ? '\a' : e == '0' ? '\0'
                        : e == 'e' || e == 'E' ? '\x1b' : e == 'v' ? '\v' : e == 'f' ? '\f' : e == 'b' ? '\b'
                                                                                                  : e;
            } else {
                text += s[j];
            }
            ++j;
        }
        b_.quote_seen();
        b_.lit(text, true);
        return j + 1;
    }
    if (n == '"' && !dq) return i + 1;  // $"..." is "..."
    std::string name;
    size_t j = i + 1;
    if (std::isdigit(static_cast<unsigned char>(n)) || std::string("@*#?-$!").find(n) != std::string::npos) {
        name = std::string(1, n);
        j = i + 2;
    } else {
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) name += s[j++];
    }
    if (name.empty()) {
        b_.lit("$", dq);
        return i + 1;
    }
    emit(name, "", dq);
    return j;
}

}  // namespace scan

using scan::Builder;
using scan::Scanner;
using scan::kMaxValueBytes;

std::vector<ShellField> ShellEvaluator::expand(const ShellWordRaw& w, Mode mode) {
    Builder b(*this, mode == Mode::fields);
    const bool saved = joining_;
    joining_ = mode != Mode::fields;
    Scanner(*this, b, w.line, mode == Mode::heredoc).scan(w.raw, mode == Mode::heredoc);
    joining_ = saved;
    auto fields = b.finish(w.line);
    for (const auto& f : fields) {
        if (f.text.size() > kMaxValueBytes) fail(w.line, "a word longer than 1 MiB");
        count_copied(f.text.size());
    }
    if (mode != Mode::fields && fields.empty()) fields.push_back({"", "", w.line});
    return fields;
}

ShellField ShellEvaluator::expand_one(const ShellWordRaw& w, Mode mode) { return expand(w, mode).at(0); }

ShellField ShellEvaluator::expand_pattern(const ShellWordRaw& w, std::string& mask) {
    Builder b(*this, false);
    const bool saved = joining_;
    joining_ = true;
    Scanner(*this, b, w.line, false).scan(w.raw, false);
    joining_ = saved;
    mask = b.mask();
    auto fields = b.finish(w.line);
    if (fields.empty()) return {"", "", w.line};
    return fields[0];
}

}  // namespace lostflops::interop
