// Word expansion of launch scripts, shared by its parts (internal to
// src/shell): the fields under construction (Builder) and the scanner of
// a word (Scanner): quotes, $, ${...} and its operators. shell_expand.cpp
// scans words, shell_lookup.cpp looks parameters up, shell_params.cpp
// applies the parameter operators (# % / : ^ ,), shell_values.cpp holds the
// placeholders of unknown values, arithmetic and command substitution.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shell/shell_state.h"

namespace lostflops::interop::scan {

inline constexpr size_t kMaxValueBytes = 1u << 20;

inline bool blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Index just past the `close` matching an `open` that ends before `i`,
// skipping quotes and nested expansions (the lexer has checked the balance).
size_t match_close(const std::string& s, size_t i, char open, char close);

// Text shortened for a message: one line, at most 48 characters.
std::string abbreviate(std::string s);

// Fields under construction. An unknown value goes in as a placeholder
// (ShellEvaluator::placeholder) so that the known text around it still
// splits where bash would split it; a field holding a placeholder is unknown.
class Builder {
public:
    Builder(ShellEvaluator& ev, bool split) : ev_(ev), split_(split) {}
    void lit(const std::string& s, bool quoted) {
        for (char c : s) put(c, quoted);
        has_ = has_ || !s.empty();
    }
    void quote_seen() { quote_ = true; }
    void empty_list() { empty_list_ = true; }
    void value(const ShellValue& v, bool quoted) {
        const bool marked = v.text.find(kMark) != std::string::npos;
        const std::string text = v.unknown.empty() || marked ? v.text : ev_.placeholder(v.unknown);
        if (quoted || !split_) {
            for (char c : text) put(c, quoted);
            has_ = has_ || !text.empty();
            return;
        }
        if (const std::string why = ev_.ifs_not_evaluated(text); !why.empty()) {
            for (char c : ev_.placeholder(why)) put(c, false);
            has_ = true;
            return;
        }
        for (char c : text) {
            if (blank(c)) {
                end_field();
                continue;
            }
            put(c, false);
            has_ = true;
        }
    }
    void end_field() {
        if (has_) {
            cur_.unknown = ev_.reason_in(cur_.text);
            out_.push_back(std::move(cur_));
        }
        cur_ = {};
        mask_.clear();
        has_ = false;
        quote_ = false;
    }
    std::vector<ShellField> finish(int line) {
        if (!has_ && quote_ && !empty_list_) has_ = true;
        end_field();
        for (auto& f : out_) f.line = line;
        return std::move(out_);
    }
    const std::string& mask() const { return mask_; }

private:
    void put(char c, bool quoted) {
        cur_.text += c;
        mask_ += quoted ? '1' : '0';
    }
    ShellEvaluator& ev_;
    bool split_;
    bool has_ = false, quote_ = false, empty_list_ = false;
    ShellField cur_;
    std::string mask_;
    std::vector<ShellField> out_;
};

class Scanner {
public:
    Scanner(ShellEvaluator& ev, Builder& b, int line, bool heredoc) : ev_(ev), b_(b), line_(line), heredoc_(heredoc) {}

    void scan(const std::string& s, bool dq);

private:
    static size_t close_dquote(const std::string& s, size_t i);

    size_t dollar(const std::string& s, size_t i, bool dq);

    // The values of NAME or NAME[sub]; `multi` for $@, $*, A[@], A[*].
    struct Got {
        bool set = false;
        bool multi = false, star = false;
        std::vector<ShellValue> items;
        std::string missing;  // a positional argument not given: what a bare expansion stands for
    };
    Got get(const std::string& name, const std::string& sub);

    // ${!A[@]}: the subscripts of an indexed array (dense here: a sparse one
    // is unknown, shell_vars.cpp), 0 to n - 1.
    Got keys(const std::string& name, const std::string& sub);

    void emit_got(const Got& g, bool dq);

    void emit(const std::string& name, const std::string& sub, bool dq) { emit_got(get(name, sub), dq); }

    void parameter(const std::string& in, bool dq);

    void operation(const std::string& in, size_t i, const std::string& name, Got& g, bool dq);

    // ${A[@]:offset[:length]}, ${@:offset[:length]}: a slice of the list
    // (bash(1) "Parameter Expansion"): offset 0 of $@ is $0; a negative
    // offset counts from the end; a negative length stops bash (unknown here).
    void slice(Got& g, const std::string& name, const std::string& in, std::optional<int64_t> off, bool has_len,
               std::optional<int64_t> len, const std::string& why, bool dq);

    static std::string replace(const std::string& t, const std::string& p, const std::string& mask, const std::string& rep,
                               bool all, bool longest, bool start, bool end, bool substitute);

    ShellEvaluator& ev_;
    Builder& b_;
    int line_;
    bool heredoc_;
};

}  // namespace lostflops::interop::scan
