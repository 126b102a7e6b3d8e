// The parameter operators of word expansion (shell_scan.h): ${NAME#pattern}
// ## % %% / // /# /% (glob patterns, shell_test.cpp glob_match), ${NAME:offset[:length]}
// of a value and of a list (bash(1) "Parameter Expansion"), ^^ and ,,; the
// defaults - = + ?; an operator lostflops does not evaluate gives a value
// that says "not evaluated".
#include <algorithm>

#include "shell/shell_scan.h"

namespace lostflops::interop::scan {

void Scanner::operation(const std::string& in, size_t i, const std::string& name, Got& g, bool dq) {
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
        if (g.multi) {
            slice(g, name, in, off, colon2 != std::string::npos, len, why, dq);
            return;
        }
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
        b_.value({"", "not evaluated: the expansion '${" + in + "}' at " + ev_.where(line_) +
                          " is not one lostflops evaluates"},
                 dq);
        return;
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

// ${A[@]:offset[:length]}, ${@:offset[:length]}: a slice of the list
// (bash(1) "Parameter Expansion"): offset 0 of $@ is $0; a negative
// offset counts from the end; a negative length stops bash (unknown here).
void Scanner::slice(Got& g, const std::string& name, const std::string& in, std::optional<int64_t> off, bool has_len,
                    std::optional<int64_t> len, const std::string& why, bool dq) {
    if (!off || !len) {
        b_.value({"", why}, dq);
        return;
    }
    if (has_len && *len < 0) {
        b_.value({"", "not evaluated: '${" + in + "}' at " + ev_.where(line_) +
                          ": bash stops here (substring expression < 0)"},
                 dq);
        return;
    }
    std::vector<ShellValue> list = std::move(g.items);
    if (name == "@" || name == "*") list.insert(list.begin(), *ev_.lookup("0", false));
    const auto n = static_cast<int64_t>(list.size());
    const int64_t a = *off < 0 ? n + *off : *off;
    const int64_t e = has_len ? std::min(n, a + *len) : n;
    g.items.clear();
    for (int64_t k = std::max<int64_t>(a, 0); a >= 0 && k < e; ++k)
        g.items.push_back(std::move(list[static_cast<size_t>(k)]));
    emit_got(g, dq);
}

std::string Scanner::replace(const std::string& t, const std::string& p, const std::string& mask, const std::string& rep,
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

}  // namespace lostflops::interop::scan
