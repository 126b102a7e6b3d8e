// Word expansion of launch scripts (IEEE Std 1003.1-2017, Shell Command
// Language 2.6: parameter expansion with the operators :- - := = :+ + :? ?
// # ## % %% and bash's / // :offset:length ^^ ,, ${#...} ${!...} and arrays;
// command substitution; arithmetic expansion; field splitting on blanks;
// quote removal). Pathname expansion is not done (a glob stays a word, as
// bash leaves a pattern that matches no file). Command substitutions are
// evaluated only when they are pure (shell_builtins.cpp), otherwise their
// value is unknown.
#include <algorithm>
#include <stdexcept>

#include "interop/shell_lexer.h"
#include "interop/shell_state.h"

namespace lostflops::interop {

namespace {

constexpr size_t kMaxValueBytes = 1u << 20;

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Index just past the `close` matching an `open` that ends before `i`,
// skipping quotes and nested expansions (the lexer has checked the balance).
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

std::string abbreviate(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s.size() > 48 ? s.substr(0, 45) + "..." : s;
}

class Scanner {
public:
    Scanner(ShellEvaluator& ev, Builder& b, int line, bool heredoc) : ev_(ev), b_(b), line_(line), heredoc_(heredoc) {}

    void scan(const std::string& s, bool dq) {
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

private:
    static size_t close_dquote(const std::string& s, size_t i) {
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

    size_t dollar(const std::string& s, size_t i, bool dq) {
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
                    text += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'a' ? '\a' : e == '0' ? '\0' : e;
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

    // The values of NAME or NAME[sub]; `multi` for $@, $*, A[@], A[*].
    struct Got {
        bool set = false;
        bool multi = false, star = false;
        std::vector<ShellValue> items;
        std::string missing;  // a positional argument not given: what a bare expansion stands for
    };
    Got get(const std::string& name, const std::string& sub) {
        Got g;
        if (name == "@" || name == "*") {
            g.set = true;
            g.multi = true;
            g.star = name == "*";
            g.items = ev_.state.args;
            return g;
        }
        if (sub.empty()) {
            if (std::isdigit(static_cast<unsigned char>(name[0])) && name != "0" &&
                std::stoul(name.substr(0, 6)) > ev_.state.args.size()) {
                g.missing = "the script's argument " + name + " (not given; pass it with --arg)";
                return g;
            }
            const auto v = ev_.lookup(name, true);
            g.set = v.has_value();
            if (v) g.items.push_back(*v);
            return g;
        }
        const auto it = ev_.state.vars.find(name);
        const bool all = sub == "@" || sub == "*";
        if (it == ev_.state.vars.end()) {
            if (!ev_.fixed_names.count(name)) ev_.note_unset(name);
            g.multi = all;
            return g;
        }
        const ShellVar& var = it->second;
        if (!var.unknown.empty()) {
            g.set = true;
            g.items.push_back({"", var.unknown});
            return g;
        }
        if (all) {
            g.set = true;
            g.multi = true;
            g.star = sub == "*";
            g.items = var.items;
            return g;
        }
        std::string why;
        const auto idx = ev_.arith_value(sub, line_, why);
        if (!idx) {
            g.set = true;
            g.items.push_back({"", why});
        } else if (*idx >= 0 && static_cast<size_t>(*idx) < var.items.size()) {
            g.set = true;
            g.items.push_back(var.items[static_cast<size_t>(*idx)]);
        }
        return g;
    }

    void emit_got(const Got& g, bool dq) {
        if (!g.missing.empty()) {
            b_.value({ev_.placeholder(g.missing, true), g.missing}, dq);
            return;
        }
        if (!g.multi) {
            if (!g.items.empty()) b_.value(g.items[0], dq);
            return;
        }
        if (g.items.empty()) {
            if (dq) b_.empty_list();
            return;
        }
        if (g.star && dq) {
            ShellValue joined;
            for (size_t k = 0; k < g.items.size(); ++k) {
                joined.text += (k ? " " : "") + g.items[k].text;
                if (joined.unknown.empty()) joined.unknown = g.items[k].unknown;
            }
            b_.value(joined, true);
            return;
        }
        for (size_t k = 0; k < g.items.size(); ++k) {
            if (k) {
                if (dq || ev_.joining()) {
                    if (ev_.joining()) b_.value({" ", ""}, true);
                    else b_.end_field();
                } else {
                    b_.value({" ", ""}, false);
                }
            }
            b_.value(g.items[k], dq);
        }
    }

    void emit(const std::string& name, const std::string& sub, bool dq) { emit_got(get(name, sub), dq); }

    void parameter(const std::string& in, bool dq) {
        size_t i = 0;
        bool length = false, indirect = false;
        if (in.size() > 1 && in[0] == '#' && in.find_first_of(":-=+?%/^,", 1) != 1) {
            length = true;
            i = 1;
        } else if (in.size() > 1 && in[0] == '!') {
            indirect = true;
            i = 1;
        }
        std::string name;
        if (i < in.size() && (std::isdigit(static_cast<unsigned char>(in[i])))) {
            while (i < in.size() && std::isdigit(static_cast<unsigned char>(in[i]))) name += in[i++];
        } else if (i < in.size() && std::string("@*#?-$!").find(in[i]) != std::string::npos) {
            name = std::string(1, in[i++]);
        } else {
            while (i < in.size() && (std::isalnum(static_cast<unsigned char>(in[i])) || in[i] == '_')) name += in[i++];
        }
        if (name.empty()) ev_.fail(line_, "bad substitution '${" + in + "}'");
        std::string sub;
        if (i < in.size() && in[i] == '[') {
            const size_t end = match_close(in, i + 1, '[', ']');
            sub = in.substr(i + 1, end - i - 2);
            i = end;
        }
        if (indirect) {
            const auto target = ev_.lookup(name, true);
            if (!target || !target->unknown.empty()) {
                b_.value({"", target ? target->unknown : "an indirect ${!" + name + "} of an unset variable"}, dq);
                return;
            }
            name = target->text;
        }
        Got g = get(name, sub);
        if (length) {
            if (i != in.size()) ev_.fail(line_, "bad substitution '${" + in + "}'");
            ShellValue v;
            if (g.multi) v.text = std::to_string(g.items.size());
            else if (!g.items.empty()) v = {std::to_string(g.items[0].text.size()), g.items[0].unknown};
            else v.text = "0";
            b_.value(v, dq);
            return;
        }
        if (i == in.size()) {
            emit_got(g, dq);
            return;
        }
        operation(in, i, name, g, dq);
    }

    void operation(const std::string& in, size_t i, const std::string& name, Got& g, bool dq) {
        const bool colon = in[i] == ':' && i + 1 < in.size() && std::string("-=+?").find(in[i + 1]) != std::string::npos;
        if (colon) ++i;
        const char op = in[i];
        const std::string word = in.substr(i + 1);
        if (!g.multi && !g.items.empty()) {
            const ShellField settled = ev_.settle({g.items[0].text, g.items[0].unknown, line_});
            if (settled.known()) g.items[0] = {settled.text, ""};  // a positional argument not given: empty
        }
        const bool null = g.items.empty() || (!g.multi && g.items[0].unknown.empty() && g.items[0].text.empty());
        const bool absent = !g.set || (colon && null);
        const bool value_unknown = !g.items.empty() && !g.items[0].unknown.empty() && !g.multi;
        if (op == '-' || op == '=' || op == '+' || op == '?') {
            if (value_unknown && colon) {
                b_.value(g.items[0], dq);  // unknown whether it is empty
                return;
            }
            if (op == '+') {
                if (!absent) scan(word, dq);
                return;
            }
            if (!absent) {
                emit_got(g, dq);
                return;
            }
            g.missing.clear();
            if (op == '-') {
                scan(word, dq);
            } else if (op == '=') {
                const ShellField v = ev_.expand_one({word, line_}, ShellEvaluator::Mode::single);
                ev_.set_scalar(name, {v.text, v.unknown}, line_);
                b_.value({v.text, v.unknown}, dq);
            } else {
                ev_.fail(line_, "${" + in + "}: " + name + " is not set, and the script stops here (give --env " + name + "=...)");
            }
            return;
        }
        if (op == ':') {  // ${NAME:offset[:length]}
            const auto colon2 = word.find(':');
            std::string why;
            const auto off = ev_.arith_value(word.substr(0, colon2), line_, why);
            const auto len = colon2 == std::string::npos ? std::optional<int64_t>(-1)
                                                        : ev_.arith_value(word.substr(colon2 + 1), line_, why);
            for (auto& v : g.items) {
                if (!off || !len) {
                    v.unknown = why;
                    continue;
                }
                const int64_t n = static_cast<int64_t>(v.text.size());
                int64_t a = *off < 0 ? std::max<int64_t>(0, n + *off) : std::min(*off, n);
                int64_t e = colon2 == std::string::npos ? n : (*len < 0 ? n + *len : std::min(n, a + *len));
                v.text = e > a ? v.text.substr(static_cast<size_t>(a), static_cast<size_t>(e - a)) : "";
            }
            emit_got(g, dq);
            return;
        }
        std::string pat_raw = word, rep;
        bool all = false, longest = false, anchor_start = false, anchor_end = false;
        if (op == '/') {
            if (!pat_raw.empty() && pat_raw[0] == '/') all = true;
            else if (!pat_raw.empty() && pat_raw[0] == '#') anchor_start = true;
            else if (!pat_raw.empty() && pat_raw[0] == '%') anchor_end = true;
            if (all || anchor_start || anchor_end) pat_raw.erase(0, 1);
            const auto slash = pat_raw.find('/');
            if (slash != std::string::npos) {
                rep = ev_.expand_one({pat_raw.substr(slash + 1), line_}).text;
                pat_raw = pat_raw.substr(0, slash);
            }
        } else if (op == '#' || op == '%') {
            longest = !pat_raw.empty() && pat_raw[0] == op;
            if (longest) pat_raw.erase(0, 1);
            (op == '#' ? anchor_start : anchor_end) = true;
        } else if (op == '^' || op == ',') {
            for (auto& v : g.items)
                for (auto& c : v.text)
                    c = static_cast<char>(op == '^' ? std::toupper(static_cast<unsigned char>(c))
                                                    : std::tolower(static_cast<unsigned char>(c)));
            emit_got(g, dq);
            return;
        } else {
            ev_.fail(line_, "the expansion '${" + in + "}' is not one lostflops evaluates");
        }
        std::string mask;
        const ShellField pat = ev_.expand_pattern({pat_raw, line_}, mask);
        for (auto& v : g.items) {
            if (!pat.known()) v.unknown = pat.unknown;
            if (v.unknown.empty() && v.text.size() > 4096)
                v.unknown = "a pattern operation on a value of more than 4,096 characters (not evaluated)";
            if (!v.unknown.empty()) {
                v.text = ev_.placeholder(v.unknown);
                continue;
            }
            v.text = replace(v.text, pat.text, mask, rep, all, longest, anchor_start, anchor_end, op == '/');
        }
        emit_got(g, dq);
    }

    static std::string replace(const std::string& t, const std::string& p, const std::string& mask, const std::string& rep,
                               bool all, bool longest, bool start, bool end, bool substitute) {
        const size_t n = t.size();
        if (!substitute) {  // # ## % %%: remove the shortest / longest anchored match
            for (size_t k = 0; k <= n; ++k) {
                const size_t len = longest ? n - k : k;
                if (start && glob_match(p, mask, t.substr(0, len))) return t.substr(len);
                if (end && glob_match(p, mask, t.substr(n - len))) return t.substr(0, n - len);
            }
            return t;
        }
        std::string out;
        size_t i = 0;
        while (i <= n) {
            size_t best = std::string::npos;
            if (!(start && i > 0)) {
                for (size_t len = n - i + 1; len-- > 0;) {
                    if (end && i + len != n) continue;
                    if (glob_match(p, mask, t.substr(i, len)) && (len > 0 || p.empty())) {
                        best = len;
                        break;
                    }
                }
            }
            if (best != std::string::npos && !p.empty()) {
                out += rep;
                i += best;
                if (!all) return out + t.substr(i);
                if (best == 0 && i < n) out += t[i++];
                continue;
            }
            if (i < n) out += t[i];
            ++i;
        }
        return out;
    }

    ShellEvaluator& ev_;
    Builder& b_;
    int line_;
    bool heredoc_;
};

}  // namespace

std::vector<ShellField> ShellEvaluator::expand(const ShellWordRaw& w, Mode mode) {
    Builder b(*this, mode == Mode::fields);
    const bool saved = joining_;
    joining_ = mode != Mode::fields;
    Scanner(*this, b, w.line, mode == Mode::heredoc).scan(w.raw, mode == Mode::heredoc);
    joining_ = saved;
    auto fields = b.finish(w.line);
    for (const auto& f : fields)
        if (f.text.size() > kMaxValueBytes) fail(w.line, "a word longer than 1 MiB");
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

std::string ShellEvaluator::placeholder(const std::string& why, bool soft) {
    auto it = reason_ids_.find(why);
    if (it == reason_ids_.end()) {
        it = reason_ids_.emplace(why, reasons_.size()).first;
        reasons_.push_back(why);
    }
    if (soft) soft_.insert(it->second);
    return std::string(1, kMark) + std::to_string(it->second) + kMarkEnd;
}

ShellField ShellEvaluator::settle(const ShellField& f) const {
    if (f.known()) return f;
    for (size_t at = f.text.find(kMark); at != std::string::npos; at = f.text.find(kMark, at + 1)) {
        size_t id = reasons_.size();
        try {
            id = std::stoul(f.text.substr(at + 1, 8));
        } catch (const std::exception&) {
        }
        if (!soft_.count(id)) return f;
    }
    if (f.text.find(kMark) == std::string::npos) return f;
    if (std::find(out.args_tested.begin(), out.args_tested.end(), f.unknown) == out.args_tested.end())
        out.args_tested.push_back(f.unknown);
    return {strip(f.text), "", f.line};
}

std::string ShellEvaluator::reason_in(const std::string& text) const {
    const auto at = text.find(kMark);
    if (at == std::string::npos) return "";
    const size_t id = std::stoul(text.substr(at + 1, 8));
    return id < reasons_.size() ? reasons_[id] : "an unknown value";
}

std::string ShellEvaluator::strip(const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != kMark) {
            out += text[i];
            continue;
        }
        while (i < text.size() && text[i] != kMarkEnd) ++i;
    }
    return out;
}

ShellValue ShellEvaluator::arith_expansion(const std::string& inner, int line) {
    const ShellField text = settle(expand_one({inner, line}, Mode::heredoc));
    if (!text.known()) return {"", text.unknown};
    std::string why;
    const auto v = arith_value(text.text, line, why);
    if (!v) return {"", why};
    return {std::to_string(*v), ""};
}

std::optional<int64_t> ShellEvaluator::arith_value(const std::string& text, int line, std::string& why) {
    struct Scope : ArithScope {
        ShellEvaluator& ev;
        int line;
        int depth;
        Scope(ShellEvaluator& e, int l, int d) : ev(e), line(l), depth(d) {}
        std::optional<int64_t> get(const std::string& name, std::string& w) override {
            auto v = ev.lookup(name, true);
            if (v) {
                const ShellField settled = ev.settle({v->text, v->unknown, line});
                v = ShellValue{settled.text, settled.unknown};
            }
            if (!v || v->text.empty()) {
                if (v && !v->unknown.empty()) w = v->unknown;
                return v && !v->unknown.empty() ? std::nullopt : std::optional<int64_t>(0);
            }
            if (!v->unknown.empty()) {
                w = v->unknown;
                return std::nullopt;
            }
            if (depth > 16) throw std::invalid_argument("variables refer to each other too deeply");
            Scope inner(ev, line, depth + 1);
            return eval_arith(v->text, inner, w);
        }
        void set(const std::string& name, int64_t value) override { ev.set_scalar(name, {std::to_string(value), ""}, line); }
    };
    Scope scope(*this, line, 0);
    try {
        return eval_arith(text, scope, why);
    } catch (const std::logic_error& e) {  // invalid_argument, and out_of_range from a library conversion
        fail(line, std::string("arithmetic: ") + e.what());
    }
}

ShellValue ShellEvaluator::command_substitution(const std::string& inner, int line) {
    std::string output;
    ShellState saved = state;
    std::string* saved_capture = capture;
    const Truth saved_last = last;
    capture = &output;
    ShellValue result;
    try {
        run_script(inner, file, line);
        while (!output.empty() && output.back() == '\n') output.pop_back();
        result = {output, ""};
    } catch (const NotPure& e) {
        result = {"", "the command substitution `" + abbreviate(inner) + "` at " + where(line) + " (" + e.why + ")"};
    }
    capture = saved_capture;
    state = std::move(saved);
    last = result.unknown.empty() ? saved_last : Truth::unknown(result.unknown);
    return result;
}

}  // namespace lostflops::interop
