// Simple commands of the launch-script evaluator: declarations (bash(1)
// "SHELL BUILTIN COMMANDS": export, declare / typeset, local, readonly take
// their NAME=value arguments unsplit), NAME=value before a command, shell
// functions with `local`, and programs (the builtins are in
// shell_builtins.cpp). A program is recorded (ShellCommand), never run; its exit
// status is unknown. Inside a command substitution only pure programs are
// evaluated (dirname, basename, realpath / readlink -f, seq), lexically.
#include <algorithm>
#include <filesystem>

#include "shell/shell_lexer.h"
#include "shell/shell_state.h"

namespace lostflops::interop {

namespace {

bool is_declaration(const std::string& w) {
    return w == "export" || w == "declare" || w == "typeset" || w == "local" || w == "readonly";
}

// "NAME=...", "NAME+=...", "NAME[i]=..." as written.
bool assignment_shaped(const std::string& raw, std::string& name, bool& append, std::string& value) {
    const auto eq = raw.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    std::string lhs = raw.substr(0, eq);
    append = lhs.back() == '+';
    if (append) lhs.pop_back();
    if (!is_shell_name(lhs)) return false;
    name = lhs;
    value = raw.substr(eq + 1);
    return true;
}

const char* attribute_name(char c) {
    switch (c) {
        case 'A': return "an associative array";
        case 'i': return "integer arithmetic on assignment";
        case 'n': return "a name reference";
        case 'l': return "lower-casing on assignment";
        case 'u': return "upper-casing on assignment";
        default: return "capitalising on assignment";
    }
}

std::string lexical_dirname(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    const auto slash = p.rfind('/');
    if (slash == std::string::npos) return ".";
    p = p.substr(0, slash);
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p.empty() ? "/" : p;
}

std::string lexical_basename(std::string p, const std::string& suffix) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    const auto slash = p.rfind('/');
    if (slash != std::string::npos && p.size() > 1) p = p.substr(slash + 1);
    if (!suffix.empty() && p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
        p.resize(p.size() - suffix.size());
    return p;
}

std::optional<int64_t> integer(const std::string& s) {
    if (s.empty() || s.size() > 18) return std::nullopt;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == s.size()) return std::nullopt;
    for (size_t k = i; k < s.size(); ++k)
        if (s[k] < '0' || s[k] > '9') return std::nullopt;
    return std::stoll(s);
}

}  // namespace

std::string ShellEvaluator::pure_output(const std::vector<ShellField>& words, int line) {
    for (const auto& w : words)
        if (!w.known()) throw NotPure{w.unknown};
    const std::string name = lexical_basename(words[0].text, "");
    std::vector<std::string> args;
    for (size_t i = 1; i < words.size(); ++i) args.push_back(words[i].text);
    std::string out_text;
    const auto absolute = [&](const std::string& p) {
        if (!state.cwd_unknown.empty() && (p.empty() || p[0] != '/')) throw NotPure{state.cwd_unknown};
        std::filesystem::path x = p.empty() || p[0] != '/' ? std::filesystem::path(state.cwd) / p : std::filesystem::path(p);
        std::string s = x.lexically_normal().string();
        while (s.size() > 1 && s.back() == '/') s.pop_back();
        return s;
    };
    if (name == "dirname") {
        for (const auto& a : args)
            if (a.empty() || a[0] != '-') out_text += lexical_dirname(a) + "\n";
    } else if (name == "basename") {
        std::string suffix;
        std::vector<std::string> names;
        for (size_t i = 0; i < args.size(); ++i) {
            if (args[i] == "-s" && i + 1 < args.size()) suffix = args[++i];
            else if (args[i] != "-a" && args[i] != "-z") names.push_back(args[i]);
        }
        if (names.size() == 2 && suffix.empty()) {
            suffix = names[1];
            names.pop_back();
        }
        for (const auto& n : names) out_text += lexical_basename(n, suffix) + "\n";
    } else if (name == "realpath" || (name == "readlink" && !args.empty() && args[0].size() == 2 &&
                                      (args[0] == "-f" || args[0] == "-e" || args[0] == "-m"))) {
        for (const auto& a : args)
            if (a.empty() || a[0] != '-') out_text += absolute(a) + "\n";
    } else if (name == "seq") {
        std::vector<int64_t> v;
        for (const auto& a : args) {
            const auto x = integer(a);
            if (!x) throw NotPure{"`seq " + a + "`"};
            v.push_back(*x);
        }
        if (v.empty() || v.size() > 3) throw NotPure{"`seq` with " + std::to_string(v.size()) + " arguments"};
        const int64_t first = v.size() > 1 ? v[0] : 1, step = v.size() == 3 ? v[1] : 1, last = v.back();
        if (step == 0 || (last - first) / step > 10000) throw NotPure{"`seq` of more than 10,000 numbers"};
        for (int64_t x = first; step > 0 ? x <= last : x >= last; x += step) out_text += std::to_string(x) + "\n";
    } else {
        throw NotPure{"`" + name + "` at " + where(line) + " is not run"};
    }
    return out_text;
}

Status ShellEvaluator::call_function(const Node& body, const std::vector<ShellField>& words) {
    if (++calls > 100) fail(body.line, "functions call each other more than 100 deep");
    std::vector<ShellValue> saved = state.args;
    state.args.clear();
    for (size_t i = 1; i < words.size(); ++i) state.args.push_back({words[i].text, words[i].unknown});
    locals.emplace_back();
    Status st = exec(body);
    for (auto& [name, old] : locals.back()) {
        if (old) state.vars[name] = *old;
        else state.vars.erase(name);
    }
    locals.pop_back();
    state.args = std::move(saved);
    --calls;
    if (st.flow == Flow::ret) st.flow = Flow::normal;
    return st;
}

Status ShellEvaluator::exec_simple(const Node& n) {
    if (!n.words.empty() && is_declaration(n.words[0].raw)) {
        const std::string kind = n.words[0].raw;
        bool exported = kind == "export", local = kind == "local", array = false;
        std::string attribute;  // an attribute not modelled, as not_evaluated() says it
        const auto make_local = [&](const std::string& name) {
            if (!local || locals.empty() || locals.back().count(name)) return;
            const auto it = state.vars.find(name);
            if (it != state.vars.end()) count_copied(var_bytes(it->second));
            locals.back()[name] = it == state.vars.end() ? std::nullopt : std::optional<ShellVar>(it->second);
        };
        const auto finish = [&](const std::string& name) {
            if (!exported && !array) return;
            ShellVar& v = state.vars[name];
            v.exported = v.exported || exported;
            v.array = v.array || array;
        };
        for (size_t i = 1; i < n.words.size(); ++i) {
            const std::string& raw = n.words[i].raw;
            std::string name, value;
            bool append = false;
            if (!raw.empty() && (raw[0] == '-' || raw[0] == '+')) {
                if (raw.find('f') != std::string::npos || raw.find('F') != std::string::npos || raw.find('p') != std::string::npos)
                    return {};
                exported = exported || (raw[0] == '-' && raw.find('x') != std::string::npos);
                array = array || raw.find('a') != std::string::npos;
                if (kind == "export" && raw == "-n") exported = false;
                // Attributes that change what an assignment stores or a read
                // gives: not modelled, so the names they cover are unknown.
                if (raw[0] == '-' && kind != "export")
                    for (const char c : raw.substr(1))
                        if (std::string("Ainluc").find(c) != std::string::npos)
                            attribute = "not evaluated: `" + kind + " " + raw + "` (" + attribute_name(c) + ") at " +
                                        where(n.words[i].line);
                continue;
            }
            if (!attribute.empty()) {
                std::string shaped = raw;
                if (assignment_shaped(raw, name, append, value)) shaped = name;
                if (is_shell_name(shaped)) {
                    make_local(shaped);
                    not_evaluated(shaped, attribute);
                }
                continue;
            }
            if (assignment_shaped(raw, name, append, value)) {
                make_local(name);
                Assignment a;
                a.name = name;
                a.append = append;
                a.value = {value, n.words[i].line};
                a.line = n.words[i].line;
                assign(a, nullptr);
                finish(name);
                continue;
            }
            for (const auto& f : expand(n.words[i], Mode::fields)) {
                if (!f.known() || !is_shell_name(f.text)) continue;
                make_local(f.text);
                if (local && !fixed_names.count(f.text)) state.vars.erase(f.text);
                finish(f.text);
            }
        }
        for (const auto& a : n.assignments) {
            make_local(a.name);
            if (!attribute.empty()) not_evaluated(a.name, attribute);
            else assign(a, nullptr);
            finish(a.name);
        }
        return {};
    }
    std::vector<ShellField> words;
    for (const auto& w : n.words)
        for (auto& f : expand(w, Mode::fields)) words.push_back(std::move(f));
    if (words.empty()) {
        last = Truth::yes();
        for (const auto& a : n.assignments) assign(a, nullptr);
        return {last};
    }
    std::vector<std::pair<std::string, ShellField>> env;
    for (const auto& a : n.assignments) assign(a, &env);
    // A function or builtin sees NAME=v before it for its duration only.
    std::vector<std::pair<std::string, std::optional<ShellVar>>> saved;
    const bool program = !words[0].known() || (!state.functions.count(words[0].text) && !is_builtin(words[0].text));
    if (!program) {
        for (const auto& [name, v] : env) {
            const auto it = state.vars.find(name);
            if (it != state.vars.end()) count_copied(var_bytes(it->second));
            saved.emplace_back(name, it == state.vars.end() ? std::nullopt : std::optional<ShellVar>(it->second));
            set_scalar(name, {v.text, v.unknown}, n.line);
        }
    }
    Status st;
    if (program) {
        st = external(words, n, env);
    } else if (const auto f = state.functions.find(words[0].text); f != state.functions.end()) {
        st = call_function(*f->second, words);
    } else {
        st = builtin(words[0].text, words, n);
    }
    for (auto& [name, old] : saved) {
        if (old) state.vars[name] = *old;
        else state.vars.erase(name);
    }
    last = st.truth;
    return st;
}

Status ShellEvaluator::external(std::vector<ShellField>& words, const Node& n,
                                std::vector<std::pair<std::string, ShellField>>& env) {
    if (capture) {
        *capture += pure_output(words, n.line);
        return {};
    }
    ShellCommand c;
    c.words = words;
    for (auto& w : c.words) w.text = strip(w.text);
    c.env = env;
    for (auto& e : c.env) e.second.text = strip(e.second.text);
    c.file = file;
    c.line = n.line;
    c.uncertain = speculative;
    c.wrappers = wrappers;
    for (auto& w : c.wrappers)
        for (auto& f : w) f.text = strip(f.text);
    out.commands.push_back(std::move(c));
    if (out.commands.size() > 100000) fail(n.line, "the script runs more than 100,000 programs; not evaluated further");
    nested(words, n, env);
    const std::string shown = words[0].known() ? "`" + words[0].text + "`" : "a program";
    return {Truth::unknown(shown + " at " + where(n.line) + ", which is not run")};
}

}  // namespace lostflops::interop
