// The builtins of the launch-script evaluator with bash's meaning (bash(1)
// "SHELL BUILTIN COMMANDS"): : true false echo printf cd pwd unset shift set
// source . eval exit return break continue test [ read mapfile getopts let
// command builtin exec, and the ones that change nothing a launch depends on
// (trap, ulimit, shopt, wait, ...). echo, printf and pwd write to the output
// of the command substitution being evaluated; elsewhere their output is
// dropped.
#include <filesystem>
#include <set>

#include "shell/shell_lexer.h"
#include "shell/shell_state.h"

namespace lostflops::interop {

namespace {

std::string escapes(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 >= s.size()) {
            out += s[i];
            continue;
        }
        const char e = s[++i];
        if (e == 'n') out += '\n';
        else if (e == 't') out += '\t';
        else if (e == 'r') out += '\r';
        else if (e == '\\') out += '\\';
        else if (e == '"') out += '"';
        else out += std::string{'\\', e};
    }
    return out;
}

// printf FORMAT ARGS: %s %b %d %i %u %% with flags and width, the format
// reused while arguments remain. nullopt for what it does not know.
std::optional<std::string> printf_format(const std::string& fmt, const std::vector<std::string>& args) {
    std::string out;
    size_t used = 0;
    do {
        const size_t before = used;
        for (size_t i = 0; i < fmt.size(); ++i) {
            if (fmt[i] == '\\' && i + 1 < fmt.size()) {
                out += escapes(fmt.substr(i, 2));
                ++i;
                continue;
            }
            if (fmt[i] != '%') {
                out += fmt[i];
                continue;
            }
            if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
                out += '%';
                ++i;
                continue;
            }
            size_t j = i + 1;
            bool left = false, zero = false;
            while (j < fmt.size() && (fmt[j] == '-' || fmt[j] == '0' || fmt[j] == ' ' || fmt[j] == '+')) {
                left = left || fmt[j] == '-';
                zero = zero || fmt[j] == '0';
                ++j;
            }
            size_t width = 0;
            while (j < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[j])) && width < 1000) width = width * 10 + static_cast<size_t>(fmt[j++] - '0');
            if (j >= fmt.size()) return std::nullopt;
            const char conv = fmt[j];
            const std::string arg = used < args.size() ? args[used] : std::string();
            ++used;
            std::string text;
            if (conv == 's') text = arg;
            else if (conv == 'b') text = escapes(arg);
            else if (conv == 'd' || conv == 'i' || conv == 'u') {
                text = arg.empty() ? std::string(1, '0') : arg;
                for (size_t k = text[0] == '-' ? 1 : 0; k < text.size(); ++k)
                    if (!std::isdigit(static_cast<unsigned char>(text[k]))) return std::nullopt;
            } else {
                return std::nullopt;
            }
            if (text.size() < width) {
                const std::string pad(width - text.size(), zero && !left && conv != 's' ? '0' : ' ');
                text = left ? text + pad : pad + text;
            }
            out += text;
            i = j;
        }
        if (used == before) break;
    } while (used < args.size());
    return out;
}

}  // namespace

bool ShellEvaluator::is_builtin(const std::string& name) {
    static const std::set<std::string> kBuiltins = {
        ":",      "true",    "false",  "echo",     "printf", "cd",       "pwd",   "unset",   "shift",   "set",
        "source", ".",       "eval",   "exit",     "return", "break",    "continue", "test",  "[",       "read",
        "mapfile", "readarray", "getopts", "let",  "wait",   "trap",     "umask", "ulimit",  "shopt",   "alias",
        "unalias", "hash",   "type",   "jobs",     "disown", "command",  "builtin", "exec",  "export",  "declare",
        "typeset", "local",  "readonly", "times",  "enable", "pushd",    "popd",  "dirs",    "caller",  "complete"};
    return kBuiltins.count(name) != 0;
}

Status ShellEvaluator::echo_builtin(const std::vector<ShellField>& words) {
    size_t i = 1;
    bool newline = true, esc = false;
    for (; i < words.size() && (words[i].text == "-n" || words[i].text == "-e" || words[i].text == "-E"); ++i) {
        newline = newline && words[i].text != "-n";
        esc = words[i].text == "-e" || (esc && words[i].text != "-E");
    }
    std::string text;
    for (size_t k = i; k < words.size(); ++k) {
        if (!words[k].known()) {
            if (capture) throw NotPure{words[k].unknown};
            return {};  // to the terminal: nothing to remember
        }
        if (k > i) text.push_back(' ');
        text.append(esc ? escapes(words[k].text) : words[k].text);
    }
    if (!capture) {
        out.last_said = text;
        return {};
    }
    *capture += text;
    if (newline) *capture += "\n";
    return {};
}

Status ShellEvaluator::printf_builtin(const std::vector<ShellField>& words, int line) {
    size_t i = 1;
    std::string var;
    if (i + 1 < words.size() && words[i].text == "-v") {
        var = words[i + 1].text;
        i += 2;
    }
    if (i >= words.size()) return {Truth::no()};
    std::vector<std::string> args;
    for (size_t k = i + 1; k < words.size(); ++k) args.push_back(words[k].text);
    std::optional<std::string> text;
    std::string why;
    for (size_t k = i; k < words.size(); ++k)
        if (!words[k].known() && why.empty()) why = words[k].unknown;
    if (why.empty()) text = printf_format(words[i].text, args);
    if (!text && why.empty()) why = "the printf format '" + words[i].text + "'";
    if (!var.empty()) {
        set_scalar(var, {text.value_or(""), why}, line);
        return {};
    }
    if (!capture) {
        if (text) out.last_said = *text;
        return {};
    }
    if (!text) throw NotPure{why};
    *capture += *text;
    return {};
}

Status ShellEvaluator::cd_builtin(std::vector<ShellField>& words, int line) {
    if (words.size() < 2) {
        const auto home = lookup("HOME", true);
        if (!home) return {Truth::no()};
        words.push_back({home->text, home->unknown, line});
    }
    const ShellField& to = words[1];
    if (!to.known() || to.text == "-") {
        state.cwd_unknown = to.known() ? "`cd -` at " + where(line) : to.unknown;
        state.vars["PWD"] = ShellVar{{{"", state.cwd_unknown}}, "", true, false};
        return {};
    }
    std::filesystem::path p = to.text;
    if (p.is_relative()) {
        if (!state.cwd_unknown.empty()) return {};
        p = std::filesystem::path(state.cwd) / p;
    }
    state.cwd = p.lexically_normal().string();
    while (state.cwd.size() > 1 && state.cwd.back() == '/') state.cwd.pop_back();
    state.cwd_unknown.clear();
    state.vars["PWD"] = ShellVar{{{state.cwd, ""}}, "", true, false};
    return {};
}

Status ShellEvaluator::unset_builtin(const std::vector<ShellField>& words) {
    bool functions = false;
    for (size_t i = 1; i < words.size(); ++i) {
        if (words[i].text == "-f") functions = true;
        if (!words[i].known() || words[i].text.empty() || words[i].text[0] == '-') continue;
        if (functions) state.functions.erase(words[i].text);
        else if (!fixed_names.count(words[i].text)) {
            state.vars.erase(words[i].text);
            not_evaluated_.erase(words[i].text);
        }
    }
    return {};
}

Status ShellEvaluator::set_builtin(const std::vector<ShellField>& words) {
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string& w = words[i].text;
        if (w == "--" || (i == 1 && !w.empty() && w[0] != '-' && w[0] != '+')) {
            state.args.clear();
            for (size_t k = w == "--" ? i + 1 : i; k < words.size(); ++k)
                state.args.push_back({words[k].text, words[k].unknown});
            break;
        }
        if (w == "-o" || w == "+o") ++i;
    }
    return {};
}

// read, mapfile, readarray, getopts: the variables they set become unknown.
Status ShellEvaluator::read_builtin(const std::string& name, const std::vector<ShellField>& words, int line) {
    const std::string why = "`" + name + "` at " + where(line) + " (reads input)";
    std::vector<std::string> names;
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string& w = words[i].text;
        if (!w.empty() && w[0] == '-') {
            if (w.size() == 2 && std::string("adpntuiNCOsc").find(w[1]) != std::string::npos && w != "-r" &&
                w != "-s" && i + 1 < words.size()) {
                if (w == "-a") names.push_back(words[i + 1].text);
                ++i;
            }
            continue;
        }
        names.push_back(w);
    }
    if (name == "getopts" && !names.empty()) names.erase(names.begin());
    if (names.empty()) names.push_back(name == "read" ? "REPLY" : name == "getopts" ? "OPTARG" : "MAPFILE");
    for (const auto& v : names)
        if (is_shell_name(v) && !fixed_names.count(v)) state.vars[v] = ShellVar{{}, why, false, name != "read"};
    return {Truth::unknown(why)};
}

Status ShellEvaluator::let_builtin(const std::vector<ShellField>& words, int line) {
    Truth t = Truth::yes();
    for (size_t i = 1; i < words.size(); ++i) {
        std::string why;
        const auto v = words[i].known() ? arith_value(words[i].text, line, why) : std::nullopt;
        t = v ? Truth::of(*v != 0) : Truth::unknown(words[i].known() ? why : words[i].unknown);
    }
    return {t};
}

// command, builtin, exec: the rest of the words as a command of their own.
Status ShellEvaluator::command_builtin(const std::string& name, std::vector<ShellField>& words, const Node& n) {
    const int line = n.line;
    if (words.size() < 2) return {};
    if (words[1].text == "-v" || words[1].text == "-V")
        return {Truth::unknown("`command -v` at " + where(line) + " (looks for a program)")};
    words.erase(words.begin());
    Status st;
    if (name != "exec" && words[0].known() && is_builtin(words[0].text)) {
        st = builtin(words[0].text, words, n);
    } else {
        std::vector<std::pair<std::string, ShellField>> env;
        st = external(words, n, env);
    }
    if (name == "exec") {
        st.flow = Flow::exit;
        st.line = line;
        exit_file_ = file;
    }
    return st;
}

Status ShellEvaluator::builtin(const std::string& name, std::vector<ShellField>& words, const Node& n) {
    const int line = n.line;
    const auto number_arg = [&](size_t i, int fallback) {
        if (i >= words.size() || !words[i].known()) return fallback;
        try {
            return std::stoi(words[i].text);
        } catch (const std::exception&) {
            return fallback;
        }
    };
    if (name == ":" || name == "true") return {};
    if (name == "false") return {Truth::no()};
    if (name == "echo") return echo_builtin(words);
    if (name == "printf") return printf_builtin(words, line);
    if (name == "cd") return cd_builtin(words, line);
    if (name == "pwd") {
        if (!capture) return {};
        if (!state.cwd_unknown.empty()) throw NotPure{state.cwd_unknown};
        *capture += state.cwd + "\n";
        return {};
    }
    if (name == "unset") return unset_builtin(words);
    if (name == "shift") {
        const int k = number_arg(1, 1);
        if (k < 0 || static_cast<size_t>(k) > state.args.size()) return {Truth::no()};
        state.args.erase(state.args.begin(), state.args.begin() + k);
        return {};
    }
    if (name == "set") return set_builtin(words);
    if (name == "source" || name == ".") {
        if (words.size() < 2) fail(line, name + ": a file name is needed");
        return source_file(words[1], {words.begin() + 2, words.end()}, line);
    }
    if (name == "eval") {
        std::string text;
        for (size_t i = 1; i < words.size(); ++i) text += (i > 1 ? " " : "") + words[i].text;
        if (++depth > 64) fail(line, "eval nested more than 64 deep");
        const Status st = run_script(text, file, line);
        --depth;
        return st;
    }
    if (name == "exit" || name == "return") {
        Status st{Truth::of(number_arg(1, 0) == 0), name == "exit" ? Flow::exit : Flow::ret};
        st.line = line;
        if (name == "exit") exit_file_ = file;
        return st;
    }
    if (name == "break" || name == "continue") {
        Status st{Truth::yes(), name == "break" ? Flow::brk : Flow::cont};
        st.levels = std::max(1, number_arg(1, 1));
        return st;
    }
    if (name == "test" || name == "[") {
        std::vector<ShellField> args(words.begin() + 1, words.end());
        if (name == "[") {
            if (args.empty() || args.back().text != "]") fail(line, "`[` without its closing `]`");
            args.pop_back();
        }
        return {test_words(args, line)};
    }
    if (name == "read" || name == "mapfile" || name == "readarray" || name == "getopts")
        return read_builtin(name, words, line);
    if (name == "let") return let_builtin(words, line);
    if (name == "command" || name == "builtin" || name == "exec") return command_builtin(name, words, n);
    if (name == "type" || name == "hash") return {Truth::unknown("`" + name + "` at " + where(line) + " (looks for a program)")};
    return {};  // trap, ulimit, shopt, wait, alias, declarations reached through an expansion, ...
}

}  // namespace lostflops::interop
