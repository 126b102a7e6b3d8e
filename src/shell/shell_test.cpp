// Conditions of launch scripts: `test` / `[ ]` (IEEE Std 1003.1-2017, test:
// the argument-count rules for up to 4 arguments, then ! ( ) -a -o by
// precedence), bash's `[[ ]]` (no splitting, == / != against a pattern, =~,
// && || ! ( ), -eq and friends on arithmetic expressions), and glob pattern
// matching (2.13 "Pattern Matching Notation"). Tests of files (-f, -d, ...)
// are never decided: nothing is read. An unknown operand makes the test
// unknown, and && / || keep what their known side decides.
#include <regex>

#include "shell/shell_state.h"

namespace lostflops::interop {

namespace {

Truth t_and(const Truth& a, const Truth& b) {
    if (a.v == Truth::V::no || b.v == Truth::V::no) return Truth::no();
    if (a.v == Truth::V::unknown) return a;
    return b;
}
Truth t_or(const Truth& a, const Truth& b) {
    if (a.v == Truth::V::yes || b.v == Truth::V::yes) return Truth::yes();
    if (a.v == Truth::V::unknown) return a;
    return b;
}
Truth t_not(const Truth& a) {
    if (a.v == Truth::V::unknown) return a;
    return Truth::of(a.v == Truth::V::no);
}

bool is_file_test(const std::string& op) {
    static const char* kOps[] = {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r",
                                 "-s", "-t", "-u", "-w", "-x", "-G", "-L", "-N", "-O", "-S"};
    for (const char* o : kOps)
        if (op == o) return true;
    return false;
}
bool is_string_unary(const std::string& op) { return op == "-z" || op == "-n" || op == "-v" || op == "-o"; }
bool is_binary(const std::string& op) {
    static const char* kOps[] = {"=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "=~"};
    for (const char* o : kOps)
        if (op == o) return true;
    return false;
}

std::optional<int64_t> strict_int(const std::string& s) {
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i >= s.size()) return std::nullopt;
    int64_t v = 0;
    for (; i < s.size() && s[i] != ' ' && s[i] != '\t'; ++i) {
        if (s[i] < '0' || s[i] > '9' || v > INT64_MAX / 10 - 10) return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    for (; i < s.size(); ++i)
        if (s[i] != ' ' && s[i] != '\t') return std::nullopt;
    return neg ? -v : v;
}

Truth compare_ints(const std::string& op, int64_t a, int64_t b) {
    if (op == "-eq") return Truth::of(a == b);
    if (op == "-ne") return Truth::of(a != b);
    if (op == "-lt") return Truth::of(a < b);
    if (op == "-le") return Truth::of(a <= b);
    if (op == "-gt") return Truth::of(a > b);
    return Truth::of(a >= b);
}

std::string unknown_of(const ShellField& a, const ShellField& b) { return a.known() ? b.unknown : a.unknown; }

}  // namespace

bool glob_match(const std::string& p, const std::string& quoted, const std::string& t) {
    size_t pi = 0, ti = 0, star_p = std::string::npos, star_t = 0;
    const auto lit = [&](size_t i) { return i < quoted.size() && quoted[i] == '1'; };
    while (ti < t.size()) {
        if (pi < p.size() && !lit(pi) && p[pi] == '*') {
            star_p = ++pi;
            star_t = ti;
            continue;
        }
        bool ok = false;
        size_t next = pi + 1;
        if (pi < p.size()) {
            if (!lit(pi) && p[pi] == '?') {
                ok = true;
            } else if (!lit(pi) && p[pi] == '[') {
                size_t j = pi + 1;
                const bool neg = j < p.size() && (p[j] == '!' || p[j] == '^');
                if (neg) ++j;
                bool in = false;
                const size_t first = j;
                for (; j < p.size() && (p[j] != ']' || j == first); ++j) {
                    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
                        in = in || (t[ti] >= p[j] && t[ti] <= p[j + 2]);
                        j += 2;
                    } else {
                        in = in || t[ti] == p[j];
                    }
                }
                if (j < p.size()) {
                    ok = in != neg;
                    next = j + 1;
                } else {
                    ok = t[ti] == '[';  // no closing ']': a literal '['
                }
            } else {
                ok = p[pi] == t[ti];
            }
        }
        if (ok) {
            pi = next;
            ++ti;
        } else if (star_p != std::string::npos) {
            pi = star_p;
            ti = ++star_t;
        } else {
            return false;
        }
    }
    while (pi < p.size() && !lit(pi) && p[pi] == '*') ++pi;
    return pi == p.size();
}

Truth ShellEvaluator::test_words(const std::vector<ShellField>& given, int line) {
    std::vector<ShellField> a;
    for (const auto& f : given) a.push_back(settle(f));
    // One primary: a unary test, a binary test, or a string.
    struct P {
        ShellEvaluator& ev;
        const std::vector<ShellField>& a;
        int line;
        size_t i = 0;
        int nest = 0;

        Truth unary(const std::string& op, const ShellField& x) {
            if (is_file_test(op)) return Truth::unknown("the file test `" + op + " " + x.text + "` (files are not read)");
            if (op == "-v") return Truth::of(ev.state.vars.count(x.text) != 0);
            if (op == "-o") return Truth::unknown("the shell option test `-o " + x.text + "`");
            if (!x.known()) return Truth::unknown(x.unknown);
            return Truth::of(op == "-z" ? x.text.empty() : !x.text.empty());
        }
        Truth binary(const ShellField& x, const std::string& op, const ShellField& y) {
            if (op == "-nt" || op == "-ot" || op == "-ef") return Truth::unknown("the file comparison `" + op + "`");
            if (!x.known() || !y.known()) return Truth::unknown(unknown_of(x, y));
            if (op == "=" || op == "==") return Truth::of(x.text == y.text);
            if (op == "!=") return Truth::of(x.text != y.text);
            if (op == "<") return Truth::of(x.text < y.text);
            if (op == ">") return Truth::of(x.text > y.text);
            const auto xi = strict_int(x.text), yi = strict_int(y.text);
            if (!xi || !yi) return Truth::no();  // bash: "integer expression expected", status 2
            return compare_ints(op, *xi, *yi);
        }
        Truth expr() {
            Truth t = conj();
            while (i < a.size() && a[i].text == "-o" && a[i].known()) {
                ++i;
                t = t_or(t, conj());
            }
            return t;
        }
        Truth conj() {
            Truth t = neg();
            while (i < a.size() && a[i].text == "-a" && a[i].known()) {
                ++i;
                t = t_and(t, neg());
            }
            return t;
        }
        Truth neg() {
            if (++nest > 256) ev.fail(line, "test nested too deep");
            Truth t;
            if (i < a.size() && a[i].text == "!" && i + 1 < a.size()) {
                ++i;
                t = t_not(neg());
            } else {
                t = prim();
            }
            --nest;
            return t;
        }
        Truth prim() {
            if (i >= a.size()) ev.fail(line, "test: an operand is missing");
            if (a[i].text == "(" && i + 2 < a.size() && !is_binary(a[i + 1].text)) {
                ++i;
                Truth t = expr();
                if (i >= a.size() || a[i].text != ")") ev.fail(line, "test: expected ')'");
                ++i;
                return t;
            }
            if (i + 2 < a.size() + 0 && is_binary(a[i + 1].text)) {
                const ShellField& x = a[i];
                const std::string op = a[i + 1].text;
                const ShellField& y = a[i + 2];
                i += 3;
                return binary(x, op, y);
            }
            if (i + 1 < a.size() && (is_file_test(a[i].text) || is_string_unary(a[i].text))) {
                const std::string op = a[i].text;
                i += 2;
                return unary(op, a[i - 1]);
            }
            const ShellField& x = a[i++];
            if (!x.known()) return Truth::unknown(x.unknown);
            return Truth::of(!x.text.empty());
        }
    };
    P p{*this, a, line};
    if (a.empty()) return Truth::no();
    // POSIX: with 1 to 3 arguments the count decides, not the operators.
    if (a.size() == 1) return a[0].known() ? Truth::of(!a[0].text.empty()) : Truth::unknown(a[0].unknown);
    if (a.size() == 2 && a[0].text == "!") return a[1].known() ? Truth::of(a[1].text.empty()) : Truth::unknown(a[1].unknown);
    if (a.size() == 2) {
        if (is_file_test(a[0].text) || is_string_unary(a[0].text)) return p.unary(a[0].text, a[1]);
        fail(line, "test: unknown unary operator '" + a[0].text + "'");
    }
    if (a.size() == 3 && is_binary(a[1].text)) return p.binary(a[0], a[1].text, a[2]);
    const Truth t = p.expr();
    if (p.i != a.size()) fail(line, "test: unexpected '" + a[p.i].text + "'");
    return t;
}

Truth ShellEvaluator::cond_words(const std::vector<ShellWordRaw>& w, int line) {
    struct C {
        ShellEvaluator& ev;
        const std::vector<ShellWordRaw>& w;
        int line;
        size_t i = 0;
        int nest = 0;

        bool is(const char* op) const { return i < w.size() && w[i].op && w[i].raw == op; }
        bool word_is(size_t k, const char* text) const { return k < w.size() && !w[k].op && w[k].raw == text; }
        ShellField value(size_t k) { return ev.settle(ev.expand_one(w[k], ShellEvaluator::Mode::single)); }

        Truth expr() {
            Truth t = conj();
            while (is("||")) {
                ++i;
                t = t_or(t, conj());
            }
            return t;
        }
        Truth conj() {
            Truth t = neg();
            while (is("&&")) {
                ++i;
                t = t_and(t, neg());
            }
            return t;
        }
        Truth neg() {
            if (++nest > 256) ev.fail(line, "[[ ]] nested too deep");
            Truth t;
            if (word_is(i, "!")) {
                ++i;
                t = t_not(neg());
            } else if (is("(")) {
                ++i;
                t = expr();
                if (!is(")")) ev.fail(line, "[[ ]]: expected ')'");
                ++i;
            } else {
                t = prim();
            }
            --nest;
            return t;
        }
        Truth prim() {
            if (i >= w.size() || w[i].op) ev.fail(line, "[[ ]]: an operand is missing");
            const std::string op = i + 1 < w.size() ? w[i + 1].raw : "";
            if (i + 2 < w.size() && (is_binary(op) || (w[i + 1].op && (op == "<" || op == ">")))) {
                const ShellField x = value(i);
                const ShellWordRaw& rhs = w[i + 2];
                i += 3;
                if (op == "==" || op == "=" || op == "!=") {
                    std::string mask;
                    const ShellField y = ev.settle(ev.expand_pattern(rhs, mask));
                    if (!x.known() || !y.known()) return Truth::unknown(unknown_of(x, y));
                    const bool m = glob_match(y.text, mask, x.text);
                    return Truth::of(op == "!=" ? !m : m);
                }
                const ShellField y = ev.settle(ev.expand_one(rhs, ShellEvaluator::Mode::single));
                if (!x.known() || !y.known()) return Truth::unknown(unknown_of(x, y));
                if (op == "=~") {
                    if (x.text.size() > 4096 || y.text.size() > 1024) return Truth::unknown("a long =~ regular expression");
                    try {
                        return Truth::of(std::regex_search(x.text, std::regex(y.text, std::regex::extended)));
                    } catch (const std::regex_error&) {
                        return Truth::unknown("the regular expression '" + y.text + "'");
                    }
                }
                if (op == "<") return Truth::of(x.text < y.text);
                if (op == ">") return Truth::of(x.text > y.text);
                if (op == "-nt" || op == "-ot" || op == "-ef") return Truth::unknown("the file comparison `" + op + "`");
                std::string why;
                const auto xi = ev.arith_value(x.text, line, why);
                const auto yi = ev.arith_value(y.text, line, why);
                if (!xi || !yi) return Truth::unknown(why);
                return compare_ints(op, *xi, *yi);
            }
            if (i + 1 < w.size() && !w[i].op && (is_file_test(w[i].raw) || is_string_unary(w[i].raw))) {
                const std::string u = w[i].raw;
                const ShellField x = value(i + 1);
                i += 2;
                if (is_file_test(u)) return Truth::unknown("the file test `" + u + " " + x.text + "` (files are not read)");
                if (u == "-v") return Truth::of(ev.state.vars.count(x.text) != 0);
                if (u == "-o") return Truth::unknown("the shell option test `-o " + x.text + "`");
                if (!x.known()) return Truth::unknown(x.unknown);
                return Truth::of(u == "-z" ? x.text.empty() : !x.text.empty());
            }
            const ShellField x = value(i++);
            if (!x.known()) return Truth::unknown(x.unknown);
            return Truth::of(!x.text.empty());
        }
    };
    C c{*this, w, line};
    if (w.empty()) fail(line, "[[ ]] without a condition");
    const Truth t = c.expr();
    if (c.i != w.size()) fail(line, "[[ ]]: unexpected '" + w[c.i].raw + "'");
    return t;
}

}  // namespace lostflops::interop
