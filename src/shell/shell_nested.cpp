// Scripts a launch script hands to another shell, followed without running
// anything: `source FILE` / `. FILE` (in the same shell), `sh -c STRING` and
// `bash FILE` (a new shell seeing the exported variables, bash(1) "-c"),
// `sbatch [options] FILE`, `sbatch <<EOF` and `sbatch --wrap` (Slurm
// sbatch(1): the batch script runs with the environment sbatch had, filtered
// by --export; its #SBATCH lines are options that the command line
// overrides). A file is read only when it lies inside the folder of the
// script the user gave (after following links), at most 8 deep.
#include <filesystem>
#include <set>

#include "shell/shell_state.h"
#include "lostflops/error.h"
#include "job/text_input.h"

namespace lostflops::interop {

namespace {

constexpr int kMaxNesting = 8;

std::string base_name(const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool takes_own_arguments(const std::string& base) {
    return base.rfind("python", 0) == 0 || base == "torchrun" || base == "deepspeed" || base == "accelerate" ||
           base == "mpirun" || base == "mpiexec";
}

// sbatch(1) options that take no value (long options with an optional value
// take it only as --opt=value).
bool sbatch_flag(const std::string& o) {
    static const std::set<std::string> kFlags = {
        "-H", "--hold", "-I", "--immediate", "-O", "--overcommit", "--parsable", "-Q", "--quiet", "--reboot",
        "--requeue", "--no-requeue", "-s", "--oversubscribe", "--spread-job", "--test-only", "--use-min-nodes",
        "-v", "--verbose", "-V", "--version", "-W", "--wait", "-h", "--help", "--usage", "--contiguous",
        "--exclusive", "--get-user-env", "-k", "--no-kill", "--nice", "--propagate", "--ignore-pbs"};
    return kFlags.count(o) != 0;
}

}  // namespace

std::string file_inside(const std::string& root, const std::string& dir, const std::string& path, std::string& error) {
    namespace fs = std::filesystem;
    fs::path p = path;
    if (p.is_relative()) p = fs::path(dir) / p;
    p = p.lexically_normal();
    const auto inside = [](const fs::path& x, const fs::path& folder) {
        const fs::path rel = x.lexically_relative(folder);
        return !rel.empty() && *rel.begin() != "..";
    };
    if (!inside(p, fs::path(root))) {
        error = p.string() + " is outside " + root + ", the folder of the script; lostflops reads only files beside the script";
        return "";
    }
    std::error_code ec;
    if (!fs::exists(p, ec)) {
        error = "no such file (" + p.string() + ")";
        return "";
    }
    const fs::path real = fs::weakly_canonical(p, ec);
    const fs::path real_root = fs::weakly_canonical(fs::path(root), ec);
    if (ec || !inside(real, real_root)) {
        error = p.string() + " leads outside " + root + " through a symbolic link; not read";
        return "";
    }
    return p.string();
}

std::string ShellEvaluator::resolve_inside(const std::string& path, int line, const char* what) {
    const std::string shown = std::string("`") + what + " " + path + "`";
    if (root.empty())
        fail(line, "cannot evaluate: " + shown + " in a script read from standard input; give the script as a file "
                   "so that the files beside it can be read");
    if (!state.cwd_unknown.empty() && !path.empty() && path[0] != '/')
        fail(line, "cannot evaluate: " + shown + " after " + state.cwd_unknown);
    std::string error;
    const std::string p = file_inside(root, state.cwd, path, error);
    if (p.empty()) fail(line, shown + ": " + error);
    return p;
}

Status ShellEvaluator::source_file(const ShellField& path, const std::vector<ShellField>& args, int line) {
    if (!path.known())
        fail(line, "cannot evaluate: `source` of a file named by " + path.unknown +
                       "; what it sets would be missing (give the value with --env, --var or --arg)");
    const std::string resolved = resolve_inside(path.text, line, "source");
    if (++depth > kMaxNesting) fail(line, "scripts source scripts more than 8 deep");
    const std::string text = read_text_file(resolved, kMaxJobBytes, "sourced script");
    std::vector<ShellValue> saved_args;
    const bool own_args = !args.empty();
    if (own_args) {
        saved_args = state.args;
        state.args.clear();
        for (const auto& a : args) state.args.push_back({a.text, a.unknown});
    }
    const auto saved_source = state.vars.find("BASH_SOURCE") == state.vars.end()
                                  ? std::nullopt
                                  : std::optional<ShellVar>(state.vars["BASH_SOURCE"]);
    state.vars["BASH_SOURCE"] = ShellVar{{{resolved, ""}}, "", false, true};
    Status st = run_script(text, path.text, 1, false);
    if (saved_source) state.vars["BASH_SOURCE"] = *saved_source;
    else state.vars.erase("BASH_SOURCE");
    if (own_args) state.args = std::move(saved_args);
    --depth;
    if (st.flow == Flow::ret) st.flow = Flow::normal;
    return st;
}

Status ShellEvaluator::run_child(const std::string& text, const std::string& child_file, int first_line,
                                 const std::vector<std::pair<std::string, ShellValue>>& env,
                                 const std::vector<ShellValue>& args, const std::vector<ShellField>& wrapper, bool batch,
                                 const std::vector<std::string>* export_only) {
    if (++depth > kMaxNesting) fail(first_line, "scripts run scripts more than 8 deep");
    ShellState child;
    child.cwd = state.cwd;
    child.cwd_unknown = state.cwd_unknown;
    for (const auto& [name, var] : state.vars) {
        if (!var.exported) continue;
        const bool listed = export_only == nullptr ||
                            std::find(export_only->begin(), export_only->end(), name) != export_only->end() ||
                            fixed_names.count(name) || name == "PWD";
        if (!listed) continue;
        count_copied(var_bytes(var));
        child.vars[name] = var;
    }
    for (const auto& [name, v] : env) child.vars[name] = ShellVar{{v}, "", true, false};
    child.args = args;
    ShellState saved = std::move(state);
    state = std::move(child);
    const size_t wrappers_before = wrappers.size();
    if (!wrapper.empty()) wrappers.push_back(wrapper);
    const Truth saved_last = last;
    Status st = run_script(text, child_file, first_line, batch);
    wrappers.resize(wrappers_before);
    state = std::move(saved);
    last = saved_last;
    --depth;
    if (st.flow == Flow::exit) st.flow = Flow::normal;
    return st;
}

bool ShellEvaluator::nested(const std::vector<ShellField>& words, const Node& n,
                            const std::vector<std::pair<std::string, ShellField>>& env) {
    std::vector<std::pair<std::string, ShellValue>> env_values;
    for (const auto& [k, v] : env) env_values.emplace_back(k, ShellValue{v.text, v.unknown});
    const auto heredoc_body = [&](std::string& text, int& line) {
        for (const auto& r : n.redirects) {
            if (!r.heredoc) continue;
            line = r.heredoc->line;
            if (!r.heredoc->expand) {
                text = r.heredoc->body;
                return true;
            }
            text = expand_one({r.heredoc->body, r.heredoc->line}, Mode::heredoc).text;
            return true;
        }
        return false;
    };
    for (size_t k = 0; k < words.size(); ++k) {
        if (!words[k].known()) continue;
        const std::string base = base_name(words[k].text);
        if (takes_own_arguments(base)) return false;
        const bool shell = base == "sh" || base == "bash" || base == "dash" || base == "zsh" || base == "ksh";
        if (!shell && base != "sbatch") continue;
        size_t i = k + 1;
        bool command_string = false;
        std::vector<std::string> export_list;
        bool export_filtered = false;
        std::string wrap;
        while (i < words.size() && words[i].known() && words[i].text.size() > 1 &&
               (words[i].text[0] == '-' || (shell && words[i].text[0] == '+'))) {
            const std::string& o = words[i].text;
            if (o == "--") {
                ++i;
                break;
            }
            if (shell) {
                if (o[0] == '-' && o[1] != '-' && o.find('c') != std::string::npos) command_string = true;
                if (o == "-o" || o == "+o" || o == "-O" || o == "+O" || o == "--rcfile" || o == "--init-file") ++i;
                ++i;
                continue;
            }
            const auto eq = o.find('=');
            const std::string opt = o.substr(0, eq);
            std::string value;
            if (eq != std::string::npos) {
                value = o.substr(eq + 1);
            } else if (o.size() > 2 && o[1] != '-') {
                value = o.substr(2);  // -N2
            } else if (!sbatch_flag(o) && i + 1 < words.size()) {
                value = words[++i].text;
            }
            if (opt == "--wrap") wrap = value;
            if (opt == "--export") {
                export_filtered = value != "ALL" && value.rfind("ALL,", 0) != 0;
                size_t p = 0;
                while (p <= value.size()) {
                    const size_t c = std::min(value.find(',', p), value.size());
                    const std::string item = value.substr(p, c - p);
                    const auto ieq = item.find('=');
                    if (ieq != std::string::npos) env_values.emplace_back(item.substr(0, ieq), ShellValue{item.substr(ieq + 1), ""});
                    else if (item != "NONE" && item != "ALL") export_list.push_back(item);
                    p = c + 1;
                }
            }
            ++i;
        }
        std::vector<ShellField> wrapper(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(shell ? k : i));
        const std::vector<std::string>* only = export_filtered ? &export_list : nullptr;
        std::vector<ShellValue> args;
        std::string text, child_file = file;
        int first_line = n.line;
        if (shell && command_string) {
            if (i >= words.size()) fail(n.line, base + " -c without a command string");
            text = words[i].text;  // unknown parts stay placeholders: each an unknown word
            for (size_t a = i + 2; a < words.size(); ++a) args.push_back({words[a].text, words[a].unknown});
        } else if (!wrap.empty()) {
            text = wrap;
        } else if (i < words.size()) {
            if (!words[i].known()) {
                out.notes.emplace_back(base, "cannot evaluate: the script `" + base + "` runs at " + where(n.line) +
                                                 " is " + words[i].unknown);
                return true;
            }
            child_file = resolve_inside(words[i].text, n.line, base.c_str());
            text = read_text_file(child_file, kMaxJobBytes, "batch script");
            child_file = words[i].text;
            first_line = 1;
            for (size_t a = i + 1; a < words.size(); ++a) args.push_back({words[a].text, words[a].unknown});
        } else if (!heredoc_body(text, first_line)) {
            return true;
        }
        run_child(text, child_file, first_line, env_values, args, wrapper, base == "sbatch", only);
        return true;
    }
    return false;
}

}  // namespace lostflops::interop
