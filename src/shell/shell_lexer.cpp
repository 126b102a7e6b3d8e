// Token recognition for launch scripts (shell_lexer.h), after IEEE Std
// 1003.1-2017 Shell Command Language 2.3: a word runs until an unquoted
// blank or operator character; quotes, `$(...)`, `$((...))`, `${...}`,
// backquotes and `$'...'` are read as part of the word with their nesting;
// operators are the longest match of the table below; a here-document body
// (2.7.4) is the lines after the operator's line up to the delimiter.
#include "shell/shell_lexer.h"

#include <cctype>

#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

// Nesting of quotes and expansions inside one another: far beyond any launch
// script, and far from the end of the stack of the recursive readers.
constexpr int kMaxNesting = 100;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool ends_word(char c) {
    return c == '\0' || is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' ||
           c == '(' || c == ')';
}

// Longest first.
constexpr const char* kOps[] = {";;&", "<<<", "<<-", "&>>", "((", "&&", "||", ";;", ";&", "|&", "<<", ">>", "<&",
                                ">&", "<>", ">|", "&>", ";", "&", "|", "(", ")", "<", ">"};

}  // namespace

bool is_shell_name(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

ShellLexer::ShellLexer(const std::string& text, std::string source, int first_line)
    : text_(text), source_(std::move(source)), line_(first_line) {}

ShellLexer::NestingGuard::NestingGuard(ShellLexer& l, int line) : lexer(l) {
    if (++lexer.nesting_ > kMaxNesting) {
        --lexer.nesting_;
        lexer.fail(line, "quotes and expansions nested more than 100 deep");
    }
}

void ShellLexer::fail(int line, const std::string& what) const {
    throw InputError(source_, "line " + std::to_string(line), what);
}

bool ShellLexer::continuation() {
    if (peek() == '\\' && peek(1) == '\n') {
        pos_ += 2;
        ++line_;
        return true;
    }
    if (peek() == '\\' && peek(1) == '\r' && peek(2) == '\n') {
        pos_ += 3;
        ++line_;
        return true;
    }
    return false;
}

void ShellLexer::skip_blanks() {
    for (;;) {
        if (continuation()) continue;
        if (is_blank(peek())) {
            ++pos_;
            continue;
        }
        if (peek() == '#') {
            const size_t start = pos_;
            while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
            const std::string comment = text_.substr(start, pos_ - start);
            if (!any_token_ && comment.rfind("#SBATCH", 0) == 0) sbatch_.emplace_back(comment.substr(7), line_);
            continue;
        }
        return;
    }
}

void ShellLexer::read_single(std::string& raw) {
    const int opened = line_;
    raw += text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != '\'') {
        if (text_[pos_] == '\n') ++line_;
        raw += text_[pos_++];
    }
    if (pos_ >= text_.size()) fail(opened, "unterminated single quote");
    raw += text_[pos_++];
}

void ShellLexer::read_double(std::string& raw) {
    const int opened = line_;
    const NestingGuard guard(*this, opened);
    raw += text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != '"') {
        if (continuation()) continue;
        const char c = text_[pos_];
        if (c == '\\' && pos_ + 1 < text_.size()) {
            raw += c;
            raw += text_[pos_ + 1];
            if (text_[pos_ + 1] == '\n') ++line_;
            pos_ += 2;
        } else if (c == '$') {
            read_dollar(raw, true);
        } else if (c == '`') {
            read_backquote(raw);
        } else {
            if (c == '\n') ++line_;
            raw += c;
            ++pos_;
        }
    }
    if (pos_ >= text_.size()) fail(opened, "unterminated double quote");
    raw += text_[pos_++];
}

// From the opening character at pos_ to `close`, a backslash escaping the
// next character (backquotes, $'...').
void ShellLexer::read_escaped(std::string& raw, char close, const char* what) {
    const int opened = line_;
    raw += text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != close) {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) raw += text_[pos_++];
        if (text_[pos_] == '\n') ++line_;
        raw += text_[pos_++];
    }
    if (pos_ >= text_.size()) fail(opened, std::string("unterminated ") + what);
    raw += text_[pos_++];
}

void ShellLexer::read_backquote(std::string& raw) { read_escaped(raw, '`', "backquote `...`"); }

// From `open` (consumed by the caller into raw) to its matching `close`,
// skipping quoted text and nested expansions.
void ShellLexer::read_balanced(std::string& raw, char open, char close) {
    const int opened = line_;
    const NestingGuard guard(*this, opened);
    int depth = 1;
    while (pos_ < text_.size()) {
        if (continuation()) continue;
        const char c = text_[pos_];
        if (read_quoted(raw)) continue;
        if (c == '\n') ++line_;
        if (c == open) ++depth;
        raw += c;
        ++pos_;
        if (c == close && --depth == 0) return;
    }
    fail(opened, std::string("unterminated '") + open + "': no matching '" + close + "'");
}

void ShellLexer::read_dollar(std::string& raw, bool in_double) {
    raw += text_[pos_++];  // '$'
    const char c = peek();
    if (c == '(' || c == '{') {
        raw += c;
        ++pos_;
        read_balanced(raw, c, c == '(' ? ')' : '}');
    } else if (c == '$' || c == '!' || c == '?' || c == '#' || c == '@' || c == '*' || c == '-') {
        raw += c;  // a special parameter: $$, $!, ...
        ++pos_;
    } else if (c == '\'' && !in_double) {  // $'...': ANSI-C quoting
        read_escaped(raw, '\'', "$'...' quote");
    } else if (c == '"' && !in_double) {  // $"...": a double-quoted string
        read_double(raw);
    }
}

void ShellLexer::read_word(std::string& raw) {
    while (pos_ < text_.size()) {
        if (continuation()) continue;
        const char c = text_[pos_];
        // NAME=<text to fill in>: a template's placeholder, not a redirection.
        if (c == '<' && !raw.empty() && raw.back() == '=' && is_shell_name(raw.substr(0, raw.size() - 1))) {
            const size_t nl = text_.find('\n', pos_);
            const size_t close = text_.find('>', pos_);
            if (close != std::string::npos && close < nl && close > pos_ + 1 && text_[close - 1] != ' ') {
                raw += kMark + text_.substr(pos_, close + 1 - pos_) + kMarkEnd;
                pos_ = close + 1;
                continue;
            }
        }
        if (ends_word(c)) {
            // Process substitution <( ... ) / >( ... ) inside or at the start of a word.
            if ((c == '<' || c == '>') && peek(1) == '(' && raw.empty()) {
                raw += c;
                raw += '(';
                pos_ += 2;
                read_balanced(raw, '(', ')');
                continue;
            }
            return;
        }
        if (!read_quoted(raw)) {
            raw += c;
            ++pos_;
        }
    }
}

// A quoted part, an escaped character or an expansion at pos_, if there is one.
bool ShellLexer::read_quoted(std::string& raw) {
    const char c = text_[pos_];
    if (c == '\'') {
        read_single(raw);
    } else if (c == '"') {
        read_double(raw);
    } else if (c == '`') {
        read_backquote(raw);
    } else if (c == '$') {
        read_dollar(raw, false);
    } else if (c == '\\' && pos_ + 1 < text_.size()) {
        raw += c;
        raw += text_[pos_ + 1];
        if (text_[pos_ + 1] == '\n') ++line_;
        pos_ += 2;
    } else {
        return false;
    }
    return true;
}

// NAME=( / NAME+=( / NAME[i]=( : the elements up to the matching ')'.
Token ShellLexer::read_array(Token t) {
    t.array = true;
    ++pos_;  // '('
    for (;;) {
        skip_blanks();
        if (pos_ >= text_.size()) fail(t.line, "unterminated array: no ')' after '" + t.text + "('");
        const char c = text_[pos_];
        if (c == '\n') {
            ++line_;
            ++pos_;
            continue;
        }
        if (c == ')') {
            ++pos_;
            return t;
        }
        ShellWordRaw w;
        w.line = line_;
        read_word(w.raw);
        if (w.raw.empty()) fail(line_, std::string("unexpected '") + c + "' inside the array '" + t.text + "( ... )'");
        t.elements.push_back(std::move(w));
    }
}

void ShellLexer::read_heredocs() {
    for (auto& p : pending_) {
        p.doc->line = line_;
        while (pos_ < text_.size()) {
            size_t nl = text_.find('\n', pos_);
            if (nl == std::string::npos) nl = text_.size();
            std::string l = text_.substr(pos_, nl - pos_);
            pos_ = nl < text_.size() ? nl + 1 : nl;
            ++line_;
            if (!l.empty() && l.back() == '\r') l.pop_back();
            if (p.strip_tabs) l.erase(0, l.find_first_not_of('\t') == std::string::npos ? l.size() : l.find_first_not_of('\t'));
            if (l == p.delimiter) break;
            p.doc->body += l + "\n";
        }
    }
    pending_.clear();
}

std::shared_ptr<HereDoc> ShellLexer::add_heredoc(const std::string& delimiter, bool strip_tabs, int line) {
    auto doc = std::make_shared<HereDoc>();
    std::string d;
    bool quoted = false;
    for (size_t i = 0; i < delimiter.size(); ++i) {
        const char c = delimiter[i];
        if (c == '\'' || c == '"') {
            quoted = true;
        } else if (c == '\\' && i + 1 < delimiter.size()) {
            quoted = true;
            d += delimiter[++i];
        } else {
            d += c;
        }
    }
    if (d.empty()) fail(line, "here-document without a delimiter");
    doc->expand = !quoted;
    pending_.push_back({doc, d, strip_tabs});
    return doc;
}

std::string ShellLexer::read_arith() {
    std::string raw;
    const int opened = line_;
    int depth = 0;
    while (pos_ < text_.size()) {
        if (continuation()) continue;
        const char c = text_[pos_];
        if (c == ')' && depth == 0 && peek(1) == ')') {
            pos_ += 2;
            return raw;
        }
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (c == '\n') ++line_;
        raw += c;
        ++pos_;
    }
    fail(opened, "unterminated '((': no matching '))'");
}

Token ShellLexer::next() {
    skip_blanks();
    Token t;
    t.line = line_;
    if (pos_ >= text_.size()) {
        t.kind = TokenKind::eof;
        return t;
    }
    any_token_ = any_token_ || text_[pos_] != '\n';
    if (text_[pos_] == '\n') {
        ++pos_;
        ++line_;
        t.kind = TokenKind::newline;
        if (!pending_.empty()) read_heredocs();
        return t;
    }
    if (!ends_word(text_[pos_]) || ((text_[pos_] == '<' || text_[pos_] == '>') && peek(1) == '(')) {
        t.kind = TokenKind::word;
        read_word(t.text);
        // An I/O number: "2>" / "1>&2" are redirections, not words.
        if ((peek() == '<' || peek() == '>') && !t.text.empty() &&
            t.text.find_first_not_of("0123456789") == std::string::npos) {
            const std::string fd = t.text;
            Token op = next();
            op.text = fd + op.text;
            return op;
        }
        const auto eq = t.text.find('=');
        if (peek() == '(' && eq != std::string::npos && eq + 1 == t.text.size()) {
            std::string name = t.text.substr(0, eq);
            if (!name.empty() && name.back() == '+') name.pop_back();
            const auto br = name.find('[');
            if (is_shell_name(br == std::string::npos ? name : name.substr(0, br))) return read_array(std::move(t));
        }
        return t;
    }
    t.kind = TokenKind::op;
    for (const char* op : kOps) {
        const std::string o(op);
        if (text_.compare(pos_, o.size(), o) == 0) {
            t.text = o;
            pos_ += o.size();
            return t;
        }
    }
    fail(line_, std::string("unexpected character '") + text_[pos_] + "'");
}

}  // namespace lostflops::interop
