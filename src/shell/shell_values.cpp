// Values of the launch-script evaluator that are not plain text: the
// placeholders that carry an unknown value through expansion (and their
// reasons), arithmetic expansion and $(( )) values, and command
// substitution (pure commands only, shell_builtins.cpp).
#include <algorithm>
#include <stdexcept>

#include "shell/shell_lexer.h"
#include "shell/shell_scan.h"

namespace lostflops::interop {

using scan::abbreviate;

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
    ShellState saved = copy_state();
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
