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

Scanner::Got Scanner::get(const std::string& name, const std::string& sub) {
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
        ev_.count_copied(ShellEvaluator::var_bytes(var));
        g.items = var.items;
        return g;
    }
    // The subscript is expanded, then evaluated as arithmetic (bash(1) "Arrays").
    const ShellField index = ev_.settle(ev_.expand_one({sub, line_}, ShellEvaluator::Mode::heredoc));
    if (!index.known()) {
        g.set = true;
        g.items.push_back({"", index.unknown});
        return g;
    }
    std::string why;
    auto idx = ev_.arith_value(index.text, line_, why);
    // A negative subscript counts from the end.
    if (idx && *idx < 0) *idx += static_cast<int64_t>(var.items.size());
    if (!idx) {
        g.set = true;
        g.items.push_back({"", why});
    } else if (*idx < 0) {
        g.set = true;
        g.items.push_back({"", "not evaluated: ${" + name + "[" + sub + "]} at " + ev_.where(line_) +
                                   ", a subscript before the first element (bash: bad array subscript)"});
    } else if (static_cast<size_t>(*idx) < var.items.size()) {
        g.set = true;
        ev_.count_copied(var.items[static_cast<size_t>(*idx)].text.size());
        g.items.push_back(var.items[static_cast<size_t>(*idx)]);
    }
    return g;
}

// ${!A[@]}: the subscripts of an indexed array (dense here: a sparse one
// is unknown, shell_vars.cpp), 0 to n - 1.
Scanner::Got Scanner::keys(const std::string& name, const std::string& sub) {
    Got g;
    g.multi = true;
    g.star = sub == "*";
    const auto it = ev_.state.vars.find(name);
    if (it == ev_.state.vars.end()) return g;
    g.set = true;
    if (!it->second.unknown.empty()) {
        g.multi = false;
        g.items.push_back({"", it->second.unknown});
        return g;
    }
    for (size_t k = 0; k < it->second.items.size(); ++k) g.items.push_back({std::to_string(k), ""});
    return g;
}

void Scanner::emit_got(const Got& g, bool dq) {
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
    if (g.star && dq && g.items.size() > 1) {
        if (const std::string why = ev_.ifs_join_not_evaluated(); !why.empty()) {
            b_.value({"", why}, true);
            return;
        }
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

void Scanner::parameter(const std::string& in, bool dq) {
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
    if (indirect && (sub == "@" || sub == "*")) {
        if (i != in.size()) {
            b_.value({"", "not evaluated: the expansion '${" + in + "}' at " + ev_.where(line_)}, dq);
            return;
        }
        emit_got(keys(name, sub), dq);
        return;
    }
    if (indirect && i < in.size() && (in[i] == '@' || in[i] == '*') && i + 1 == in.size()) {
        b_.value({"", "not evaluated: '${" + in + "}' (the names of variables) at " + ev_.where(line_)}, dq);
        return;
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
