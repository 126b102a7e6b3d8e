// Shell arithmetic (IEEE Std 1003.1-2017 Shell Command Language 2.6.4, and
// bash's ARITHMETIC EVALUATION: C operators and precedence, `**`, pre/post
// ++ and --, assignments, `,`), by precedence climbing, evaluated while
// parsing. 64-bit integers wrap as in bash; a variable whose value is not a
// number is evaluated as an expression in its own right, as bash does.
// Unknown operands make the result unknown; the side not taken of &&, || and
// ?: is parsed without being evaluated.
#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "shell/shell_state.h"

namespace lostflops::interop {

namespace {

struct Val {
    int64_t v = 0;
    std::string why;  // non-empty: unknown
    std::string name; // an lvalue: the variable this came from
};

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }
int64_t s(uint64_t v) { return static_cast<int64_t>(v); }

class Arith {
public:
    Arith(const std::string& text, ArithScope& scope) : t_(text), scope_(scope) {}

    Val run() {
        skip();
        if (i_ >= t_.size()) return {};  // $(( )) is 0
        Val v = comma(false);
        skip();
        if (i_ < t_.size()) throw std::invalid_argument("unexpected '" + t_.substr(i_, 8) + "' in '" + t_ + "'");
        return v;
    }

private:
    void skip() {
        while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
    }
    bool eat(const char* op) {
        skip();
        const std::string o(op);
        if (t_.compare(i_, o.size(), o) != 0) return false;
        // Do not take "<" out of "<<", "=" out of "==", "&" out of "&&", ...
        const char after = i_ + o.size() < t_.size() ? t_[i_ + o.size()] : '\0';
        if (o.size() == 1 && (o[0] == '<' || o[0] == '>' || o[0] == '&' || o[0] == '|' || o[0] == '*' || o[0] == '+' ||
                              o[0] == '-') && after == o[0])
            return false;
        if ((o == "<" || o == ">" || o == "!" || o == "=" || o == "+" || o == "-" || o == "*" || o == "/" ||
             o == "%" || o == "&" || o == "|" || o == "^" || o == "<<" || o == ">>") && after == '=')
            return false;
        i_ += o.size();
        return true;
    }
    Val known(int64_t v) { return {v, "", ""}; }
    static Val unknown_of(const Val& a, const Val& b) { return {0, a.why.empty() ? b.why : a.why, ""}; }
    Val load(const Val& v, bool skipping) {
        if (v.name.empty() || skipping) return v;
        std::string why;
        const auto x = scope_.get(v.name, why);
        if (!x) return {0, why, v.name};
        return {*x, "", v.name};
    }
    void store(const std::string& name, int64_t v, bool skipping) {
        if (!skipping) scope_.set(name, v);
    }

    struct Nest {
        explicit Nest(Arith& a) : a_(a) {
            if (++a_.nest_ > 256) throw std::invalid_argument("expression nested too deep");
        }
        ~Nest() { --a_.nest_; }
        Arith& a_;
    };

    Val comma(bool sk) {
        Val v = assign(sk);
        while (eat(",")) v = assign(sk);
        return v;
    }

    Val assign(bool sk) {
        Nest guard(*this);
        const size_t save = i_;
        skip();
        std::string name;
        while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) name += t_[i_++];
        if (!name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]))) {
            static const char* kOps[] = {"<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "="};
            skip();
            for (const char* op : kOps) {
                const std::string o(op);
                if (t_.compare(i_, o.size(), o) != 0 || (o == "=" && i_ + 1 < t_.size() && t_[i_ + 1] == '=')) continue;
                i_ += o.size();
                Val rhs = assign(sk);
                if (o == "=") {
                    if (rhs.why.empty()) store(name, rhs.v, sk);
                    return {rhs.v, rhs.why, ""};
                }
                Val lhs = load({0, "", name}, sk);
                if (!lhs.why.empty() || !rhs.why.empty()) return unknown_of(lhs, rhs);
                const Val r = binary(o.substr(0, o.size() - 1), lhs, rhs, sk);
                store(name, r.v, sk);
                return r;
            }
        }
        i_ = save;
        return ternary(sk);
    }

    Val ternary(bool sk) {
        Val c = binary_level(0, sk);
        if (!eat("?")) return c;
        const bool take = c.why.empty() && c.v != 0;
        Val a = comma(sk || !c.why.empty() || !take);
        if (!eat(":")) throw std::invalid_argument("expected ':' in '" + t_ + "'");
        Val b = ternary(sk || !c.why.empty() || take);
        if (!c.why.empty()) return {0, c.why, ""};
        return take ? a : b;
    }

    // Binary operators by precedence, lowest first (bash ARITHMETIC EVALUATION).
    Val binary_level(int level, bool sk) {
        static const std::vector<std::vector<const char*>> kLevels = {
            {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"}, {"<<", ">>"}, {"+", "-"},
            {"*", "/", "%"}};
        if (level == static_cast<int>(kLevels.size())) return power(sk);
        Val left = binary_level(level + 1, sk);
        for (;;) {
            const char* matched = nullptr;
            for (const char* op : kLevels[level])
                if (eat(op)) {
                    matched = op;
                    break;
                }
            if (!matched) return left;
            const std::string op(matched);
            bool skip_right = sk;
            if (op == "&&" && left.why.empty() && left.v == 0) skip_right = true;
            if (op == "||" && left.why.empty() && left.v != 0) skip_right = true;
            Val right = binary_level(level + 1, skip_right);
            if (skip_right && !sk) {
                left = known(op == "||" ? 1 : 0);
                continue;
            }
            left = binary(op, left, right, sk);
        }
    }

    Val binary(const std::string& op, const Val& a, const Val& b, bool sk) {
        if (!a.why.empty() || !b.why.empty()) return unknown_of(a, b);
        const int64_t x = a.v, y = b.v;
        if (op == "+") return known(s(u(x) + u(y)));
        if (op == "-") return known(s(u(x) - u(y)));
        if (op == "*") return known(s(u(x) * u(y)));
        if (op == "/" || op == "%") {
            if (y == 0) {
                if (sk) return known(0);
                throw std::invalid_argument("division by 0 in '" + t_ + "'");
            }
            if (x == INT64_MIN && y == -1) return known(op == "/" ? x : 0);
            return known(op == "/" ? x / y : x % y);
        }
        if (op == "**") {
            if (y < 0) {
                if (sk) return known(0);
                throw std::invalid_argument("negative exponent in '" + t_ + "'");
            }
            uint64_t r = 1, base = u(x);
            for (int64_t e = y; e > 0 && e < 4096; --e) r *= base;
            return known(s(r));
        }
        if (op == "<<") return known(s(u(x) << (y & 63)));
        if (op == ">>") return known(x >> (y & 63));
        if (op == "<") return known(x < y);
        if (op == ">") return known(x > y);
        if (op == "<=") return known(x <= y);
        if (op == ">=") return known(x >= y);
        if (op == "==") return known(x == y);
        if (op == "!=") return known(x != y);
        if (op == "&") return known(x & y);
        if (op == "|") return known(x | y);
        if (op == "^") return known(x ^ y);
        if (op == "&&") return known(x != 0 && y != 0);
        if (op == "||") return known(x != 0 || y != 0);
        throw std::invalid_argument("operator '" + op + "' in '" + t_ + "'");
    }

    Val power(bool sk) {
        Nest guard(*this);
        Val base = unary(sk);
        if (eat("**")) return binary("**", base, power(sk), sk);  // right-associative
        return base;
    }

    Val unary(bool sk) {
        Nest guard(*this);
        skip();
        if (t_.compare(i_, 2, "++") == 0 || t_.compare(i_, 2, "--") == 0) {
            const bool inc = t_[i_] == '+';
            i_ += 2;
            Val v = load(primary(sk), sk);
            if (v.name.empty()) throw std::invalid_argument("++/-- needs a variable in '" + t_ + "'");
            if (!v.why.empty()) return {0, v.why, ""};
            const int64_t r = s(u(v.v) + (inc ? 1u : static_cast<uint64_t>(-1)));
            store(v.name, r, sk);
            return known(r);
        }
        if (eat("!")) {
            Val v = unary(sk);
            return v.why.empty() ? known(v.v == 0) : Val{0, v.why, ""};
        }
        if (eat("~")) {
            Val v = unary(sk);
            return v.why.empty() ? known(~v.v) : Val{0, v.why, ""};
        }
        if (eat("-")) {
            Val v = unary(sk);
            return v.why.empty() ? known(s(0 - u(v.v))) : Val{0, v.why, ""};
        }
        if (eat("+")) return unary(sk);
        Val v = primary(sk);
        if (v.name.empty()) return v;
        skip();
        Val loaded = load(v, sk);
        if (t_.compare(i_, 2, "++") == 0 || t_.compare(i_, 2, "--") == 0) {
            const bool inc = t_[i_] == '+';
            i_ += 2;
            if (loaded.why.empty()) store(v.name, s(u(loaded.v) + (inc ? 1u : static_cast<uint64_t>(-1))), sk);
        }
        loaded.name.clear();
        return loaded;
    }

    Val primary(bool sk) {
        skip();
        if (i_ >= t_.size()) throw std::invalid_argument("expression ends early in '" + t_ + "'");
        if (eat("(")) {
            Val v = comma(sk);
            if (!eat(")")) throw std::invalid_argument("expected ')' in '" + t_ + "'");
            v.name.clear();
            return v;
        }
        const char c = t_[i_];
        if (std::isdigit(static_cast<unsigned char>(c))) return number();
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::string name;
            while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) name += t_[i_++];
            return {0, "", name};
        }
        throw std::invalid_argument("unexpected '" + std::string(1, c) + "' in '" + t_ + "'");
    }

    Val number() {
        std::string digits;
        while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '#' || t_[i_] == '_' ||
                                  t_[i_] == '@'))
            digits += t_[i_++];
        int base = 10;
        std::string body = digits;
        if (const auto hash = digits.find('#'); hash != std::string::npos) {
            // BASE#DIGITS, BASE 2..64 (bash): two decimal digits at most, so
            // no conversion can overflow (std::stoi threw out_of_range here).
            const std::string b = digits.substr(0, hash);
            if (b.empty() || b.size() > 2 || !std::all_of(b.begin(), b.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
                throw std::invalid_argument("bad base in '" + digits + "'");
            base = std::stoi(b);
            body = digits.substr(hash + 1);
        } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
            base = 16;
            body = digits.substr(2);
        } else if (digits.size() > 1 && digits[0] == '0') {
            base = 8;
            body = digits.substr(1);
        }
        if (base < 2 || base > 64 || body.empty()) throw std::invalid_argument("bad number '" + digits + "'");
        uint64_t v = 0;
        for (char ch : body) {
            int d = -1;
            if (std::isdigit(static_cast<unsigned char>(ch))) d = ch - '0';
            else if (ch >= 'a' && ch <= 'z') d = ch - 'a' + 10;
            else if (ch >= 'A' && ch <= 'Z') d = base <= 36 ? ch - 'A' + 10 : ch - 'A' + 36;
            if (d < 0 || d >= base) throw std::invalid_argument("bad number '" + digits + "' (base " + std::to_string(base) + ")");
            v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
        }
        return known(s(v));
    }

    const std::string& t_;
    ArithScope& scope_;
    size_t i_ = 0;
    int nest_ = 0;
};

}  // namespace

std::optional<int64_t> eval_arith(const std::string& text, ArithScope& scope, std::string& why) {
    const Val v = Arith(text, scope).run();
    if (!v.why.empty()) {
        why = v.why;
        return std::nullopt;
    }
    return v.v;
}

}  // namespace lostflops::interop
