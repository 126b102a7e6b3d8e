// Variables of the launch-script evaluator: lookup with the special
// parameters (bash(1) "Special Parameters": $#, $?, $0, $1 ...; $$, $!,
// $RANDOM and friends differ at each run, so they are unknown), scalar and
// array assignment (NAME=v, NAME+=v, NAME[i]=v, NAME=( ... ), NAME+=( ... )),
// the values the user fixed with --var, and the merge of the states left by
// branches the evaluator could not choose between.
#include <algorithm>
#include <set>

#include "shell/shell_state.h"

namespace lostflops::interop {

namespace {

constexpr size_t kMaxValueBytes = 1u << 20;
constexpr size_t kMaxItems = 100000;

bool is_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<ShellValue> ShellEvaluator::lookup(const std::string& name, bool note) {
    if (name == "#") return ShellValue{std::to_string(state.args.size()), ""};
    if (name == "?") {
        if (last.v == Truth::V::unknown) return ShellValue{"", "the exit status of a command not run (" + last.why + ")"};
        return ShellValue{last.v == Truth::V::yes ? "0" : "1", ""};
    }
    if (name == "$" || name == "!") return ShellValue{"", "$" + name + ", a process id"};
    if (name == "-") return ShellValue{"hB", ""};
    if (name == "0") return ShellValue{script_abs_.empty() ? "bash" : script_abs_, ""};
    if (is_digits(name)) {
        const size_t k = std::stoul(name.substr(0, 6));
        if (k >= 1 && k <= state.args.size()) return state.args[k - 1];
        return std::nullopt;
    }
    if (fixed_names.count(name)) fixed_read_.insert(name);
    const auto it = state.vars.find(name);
    if (it != state.vars.end()) {
        if (!it->second.unknown.empty()) return ShellValue{"", it->second.unknown};
        if (it->second.items.empty()) return std::nullopt;
        count_copied(it->second.items[0].text.size());
        return it->second.items[0];
    }
    static const std::set<std::string> kChanging = {"RANDOM", "SRANDOM", "SECONDS", "EPOCHSECONDS", "EPOCHREALTIME",
                                                    "BASHPID", "PPID", "LINENO"};
    if (kChanging.count(name)) return ShellValue{"", "$" + name + ", which differs at each run"};
    if (note) note_unset(name);
    return std::nullopt;
}

void ShellEvaluator::note_unset(const std::string& name) {
    if (assigned_ever.count(name) || fixed_names.count(name)) return;
    if (std::find(out.unset_read.begin(), out.unset_read.end(), name) == out.unset_read.end())
        out.unset_read.push_back(name);
}

void ShellEvaluator::not_evaluated(const std::string& name, const std::string& why, bool sticky) {
    if (fixed_names.count(name)) return;
    if (sticky) not_evaluated_[name] = why;
    ShellVar& var = state.vars[name];
    var.items.clear();
    var.unknown = why;
    assigned_ever.insert(name);
}

std::string ShellEvaluator::ifs_not_evaluated(const std::string& text) {
    const auto it = state.vars.find("IFS");
    if (it == state.vars.end()) return "";
    const ShellVar& v = it->second;
    const bool known = v.unknown.empty() && !v.items.empty() && v.items[0].unknown.empty();
    if (known && v.items[0].text == " \t\n") return "";
    if (known && text.find_first_of(v.items[0].text + " \t\n") == std::string::npos) return "";
    return "not evaluated: field splitting with IFS set to " +
           (known ? "'" + v.items[0].text + "'" : std::string("a value not known")) +
           " (lostflops splits on blank, tab and newline only)";
}

std::string ShellEvaluator::ifs_join_not_evaluated() {
    const auto it = state.vars.find("IFS");
    if (it == state.vars.end()) return "";
    const ShellVar& v = it->second;
    if (v.unknown.empty() && !v.items.empty() && v.items[0].unknown.empty() && !v.items[0].text.empty() &&
        v.items[0].text[0] == ' ')
        return "";
    return "not evaluated: \"$*\" joined with the first character of IFS, set to something else than a blank";
}

void ShellEvaluator::set_scalar(const std::string& name, ShellValue v, int line) {
    if (fixed_names.count(name)) return;
    if (const auto ne = not_evaluated_.find(name); ne != not_evaluated_.end()) return not_evaluated(name, ne->second);
    if (v.text.size() > kMaxValueBytes) fail(line, "the value of " + name + " grows past 1 MiB");
    count_copied(v.text.size());
    ShellVar& var = state.vars[name];
    if (!var.unknown.empty()) {
        var.unknown.clear();
        var.items.clear();
    }
    if (var.items.empty()) var.items.push_back(std::move(v));
    else var.items[0] = std::move(v);
    assigned_ever.insert(name);
}

void ShellEvaluator::assign(const Assignment& a, std::vector<std::pair<std::string, ShellField>>* env) {
    if (fixed_names.count(a.name)) {
        const std::string what = "--var " + a.name;
        for (const auto& n : out.notes)
            if (n.first == what) return;
        out.notes.emplace_back(what, "fixed: the script's own assignment at " + where(a.line) + " skipped");
        return;
    }
    if (env && !a.array && a.index.empty()) {
        env->emplace_back(a.name, expand_one(a.value));
        return;
    }
    if (const auto ne = not_evaluated_.find(a.name); ne != not_evaluated_.end()) return not_evaluated(a.name, ne->second);
    assigned_ever.insert(a.name);
    if (a.array) {
        for (const auto& e : a.elements)
            if (e.raw.size() > 2 && e.raw[0] == '[' && e.raw.find("]=") != std::string::npos)
                return not_evaluated(a.name, "not evaluated: `" + a.name + "=(" + e.raw +
                                                 " ...)` (subscripts in a compound assignment) at " + where(a.line),
                                     false);
        std::vector<ShellValue> items;
        for (const auto& e : a.elements)
            for (auto& f : expand(e, Mode::fields)) items.push_back({std::move(f.text), std::move(f.unknown)});
        ShellVar& var = state.vars[a.name];
        if (!var.unknown.empty() && a.append) return;  // appending to an unknown array: still unknown
        if (!a.append) var.items.clear();
        var.unknown.clear();
        var.array = true;
        for (const ShellValue& i : items) count_copied(i.text.size() + i.unknown.size());
        var.items.insert(var.items.end(), items.begin(), items.end());
        if (var.items.size() > kMaxItems) fail(a.line, "the array " + a.name + " grows past 100,000 elements");
        return;
    }
    const ShellField f = expand_one(a.value);
    ShellValue v{f.text, f.unknown};
    if (!a.index.empty()) {
        std::string why;
        auto idx = arith_value(expand_one({a.index, a.line}).text, a.line, why);
        ShellVar& var = state.vars[a.name];
        var.array = true;
        // A negative subscript counts from the end; one past the end
        // appends; further would leave a gap, which a dense list cannot say
        // (bash's arrays are sparse): unknown, naming it.
        if (idx && *idx < 0) *idx += static_cast<int64_t>(var.items.size());
        if (!idx || *idx < 0 || *idx >= static_cast<int64_t>(kMaxItems)) {
            var.unknown = idx ? "an array index out of range at " + where(a.line) : why;
            return;
        }
        if (static_cast<size_t>(*idx) > var.items.size() && var.unknown.empty()) {
            var.unknown = "not evaluated: a sparse array (" + a.name + "[" + std::to_string(*idx) + "] set past its end at " +
                          where(a.line) + ")";
            return;
        }
        if (var.items.size() <= static_cast<size_t>(*idx)) var.items.resize(static_cast<size_t>(*idx) + 1);
        ShellValue& slot = var.items[static_cast<size_t>(*idx)];
        count_copied(slot.text.size() + v.text.size());
        slot = a.append ? ShellValue{slot.text + v.text, slot.unknown.empty() ? v.unknown : slot.unknown} : v;
        return;
    }
    if (a.append) {
        const auto old = lookup(a.name, false);
        if (old) v = {old->text + v.text, old->unknown.empty() ? v.unknown : old->unknown};
    }
    set_scalar(a.name, std::move(v), a.line);
}

ShellState ShellEvaluator::merge(const ShellState& before, const std::vector<ShellState>& after,
                                 const std::string& why) const {
    ShellState out_state = after.front();
    std::set<std::string> names;
    for (const auto& s : after)
        for (const auto& kv : s.vars) names.insert(kv.first);
    for (const auto& kv : before.vars) names.insert(kv.first);
    for (const auto& name : names) {
        const ShellVar* first = nullptr;
        bool first_seen = false, same = true;
        ShellVar any;
        for (const auto& s : after) {
            const auto it = s.vars.find(name);
            const ShellVar* v = it == s.vars.end() ? nullptr : &it->second;
            if (v) {
                any.exported = any.exported || v->exported;
                any.array = any.array || v->array;
            }
            if (!first_seen) {
                first = v;
                first_seen = true;
            } else if ((first == nullptr) != (v == nullptr) || (first && v && !(*first == *v))) {
                same = false;
            }
        }
        if (same) {
            if (first) out_state.vars[name] = *first;
            else out_state.vars.erase(name);
            continue;
        }
        any.unknown = why;
        out_state.vars[name] = any;
    }
    for (const auto& s : after)
        for (const auto& kv : s.functions) out_state.functions.insert(kv);
    out_state.cwd = before.cwd;
    for (const auto& s : after)
        if (s.cwd != before.cwd) out_state.cwd = s.cwd;
    return out_state;
}

}  // namespace lostflops::interop
