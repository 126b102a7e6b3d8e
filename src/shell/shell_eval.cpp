// Control flow of the launch-script evaluator (shell_eval.h), as bash runs
// it (IEEE Std 1003.1-2017 Shell Command Language 2.9.3-2.9.4: lists,
// && / ||, pipelines each in a subshell, if / elif / else, for, while,
// until, case, groups, subshells, functions). Where a condition cannot be
// decided, every way through is followed from the same state and the states
// merged (ShellEvaluator::merge): what all ways agree on stays known, the
// rest becomes unknown, and the commands met on the way are marked with the
// condition they depend on.
#include <filesystem>

#include "shell/shell_state.h"
#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

constexpr long kMaxSteps = 1000000;
constexpr int kMaxIterations = 10000;
// Work bounds. A launch script and what it sources are a few KB: parsing
// 16 MiB of text (16 x the largest file read) or copying 256 MiB of values
// is thousands of times a real script's work, and takes a few seconds.
constexpr uint64_t kMaxParsedBytes = 16u << 20;
constexpr uint64_t kMaxCopiedBytes = 256u << 20;
constexpr uint64_t kItemBytes = 64;  // what a value costs besides its text (std::string, vector slot)

std::vector<ShellField> directive_words(const std::string& text, int line) {
    std::vector<ShellField> out;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
        if (i >= text.size() || text[i] == '#') break;  // the rest of a directive line is a comment
        size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\r') ++j;
        out.push_back({text.substr(i, j - i), "", line});
        i = j;
    }
    return out;
}

// After one pass of a loop's body: nullopt to go on, else what the loop
// returns (break N and continue N leave N - 1 enclosing loops to go).
std::optional<Status> after_body(const Status& b) {
    if (b.flow == Flow::brk) return b.levels > 1 ? Status{Truth::yes(), Flow::brk, b.levels - 1} : Status{};
    if (b.flow == Flow::cont) {
        if (b.levels > 1) return Status{Truth::yes(), Flow::cont, b.levels - 1};
        return std::nullopt;
    }
    if (b.flow != Flow::normal) return b;
    return std::nullopt;
}

}  // namespace

ShellEvaluator::ShellEvaluator(const ShellOptions& o, ShellRun& r) : options(o), out(r) {
    namespace fs = std::filesystem;
    const fs::path script = o.script_path.empty() ? fs::path() : fs::path(o.script_path);
    const fs::path dir = script.empty() ? fs::current_path() : fs::absolute(script).parent_path();
    state.cwd = dir.lexically_normal().string();
    if (!script.empty()) {
        root = state.cwd;
        script_abs_ = fs::absolute(script).lexically_normal().string();
        state.vars["BASH_SOURCE"] = ShellVar{{{script_abs_, ""}}, "", false, true};
    }
    state.vars["IFS"] = ShellVar{{{" \t\n", ""}}, "", false, false};  // bash sets it at startup
    for (const auto& [k, v] : o.env) state.vars[k] = ShellVar{{{v, ""}}, "", true, false};
    for (const auto& [k, v] : o.fixed) {
        state.vars[k] = ShellVar{{{v, ""}}, "", true, false};
        fixed_names.insert(k);
    }
    for (const auto& a : o.args) state.args.push_back({a, ""});
    state.vars["PWD"] = ShellVar{{{state.cwd, ""}}, "", true, false};
}

void ShellEvaluator::fail(int line, const std::string& what) const {
    throw InputError(file, "line " + std::to_string(line), what);
}

std::string ShellEvaluator::where(int line) const {
    if (file == out_file_) return "line " + std::to_string(line);
    return file + " line " + std::to_string(line);
}

void ShellEvaluator::count_step(int line) {
    line_now_ = line;
    if (++steps > kMaxSteps) fail(line, "the script runs more than 1,000,000 commands; not evaluated further");
}

void ShellEvaluator::count_copied(uint64_t bytes) {
    copied_ += bytes;
    if (copied_ > kMaxCopiedBytes)
        fail(line_now_, "the script copies more than 256 MiB of values (expansions, assignments, states of subshells "
                        "and branches); a work bound: not evaluated further");
}

void ShellEvaluator::count_parsed(uint64_t bytes, int line) {
    parsed_ += bytes;
    if (parsed_ > kMaxParsedBytes)
        fail(line, "the script parses more than 16 MiB of text (itself, sourced files, sh -c, eval and $( ) "
                   "strings, each time they run); a work bound: not evaluated further");
}

uint64_t ShellEvaluator::var_bytes(const ShellVar& v) {
    uint64_t n = kItemBytes + v.unknown.size();
    for (const ShellValue& i : v.items) n += kItemBytes + i.text.size() + i.unknown.size();
    return n;
}

uint64_t ShellEvaluator::state_bytes() const {
    uint64_t n = 0;
    for (const auto& [name, v] : state.vars) n += name.size() + var_bytes(v);
    for (const ShellValue& a : state.args) n += kItemBytes + a.text.size() + a.unknown.size();
    return n;
}

ShellState ShellEvaluator::copy_state() {
    count_copied(state_bytes());
    return state;
}

Status ShellEvaluator::run_script(const std::string& text, const std::string& f, int first_line, bool batch) {
    const std::string saved_file = file;
    file = f;
    count_parsed(text.size(), first_line);
    scripts.push_back(std::make_unique<ShellScript>(parse_shell(text, f, first_line)));
    const ShellScript& s = *scripts.back();
    const size_t wrappers_before = wrappers.size();
    if (batch && !s.sbatch.empty()) {
        std::vector<ShellField> words{{"#SBATCH", "", s.sbatch.front().second}};
        for (const auto& [line_text, line] : s.sbatch)
            for (auto& w : directive_words(line_text, line)) words.push_back(std::move(w));
        wrappers.push_back(std::move(words));
    }
    Status st = exec(s.body);
    wrappers.resize(wrappers_before);
    file = saved_file;
    return st;
}

Status ShellEvaluator::speculate(const std::vector<std::function<Status()>>& branches, bool include_skip,
                                 const std::string& why) {
    const ShellState before = copy_state();
    const std::string saved = speculative;
    if (speculative.empty()) speculative = why;
    std::vector<ShellState> after;
    int exit_line = 0;
    const uint64_t size = state_bytes();
    for (const auto& branch : branches) {
        count_copied(2 * size);  // the state the branch starts from, and the one it leaves
        state = before;
        const Status s = branch();
        if (s.flow == Flow::exit) {
            exit_line = s.line;
            continue;  // that way ends the script
        }
        after.push_back(std::move(state));
    }
    if (include_skip) after.push_back(before);
    speculative = saved;
    if (after.empty()) {
        state = before;
        Status s{Truth::unknown(why), Flow::exit};
        s.line = exit_line;
        return s;
    }
    state = merge(before, after, why);
    return {Truth::unknown(why)};
}

Status ShellEvaluator::exec(const Node& n) {
    count_step(n.line);
    switch (n.kind) {
        case NodeKind::simple: return exec_simple(n);
        case NodeKind::sequence: {
            Status st;
            for (const Node& c : n.children) {
                st = exec(c);
                if (st.flow != Flow::normal) return st;
            }
            return st;
        }
        case NodeKind::and_or: {
            Status st = exec(n.children[0]);
            for (size_t i = 1; i < n.children.size() && st.flow == Flow::normal; ++i) {
                const bool on_success = n.ops[i - 1] == "&&";
                if (st.truth.v == Truth::V::unknown) {
                    const Node& c = n.children[i];
                    st = speculate({[&] { return exec(c); }}, true, st.truth.why);
                    continue;
                }
                if ((st.truth.v == Truth::V::yes) == on_success) st = exec(n.children[i]);
            }
            return st;
        }
        case NodeKind::pipeline: {
            Status st;
            for (const Node& c : n.children) {
                const ShellState saved = copy_state();
                st = exec(c);
                state = saved;
            }
            st.flow = Flow::normal;
            if (n.negate && st.truth.v != Truth::V::unknown) st.truth = Truth::of(st.truth.v == Truth::V::no);
            return st;
        }
        case NodeKind::if_clause: return exec_if(n, 0);
        case NodeKind::for_loop: return exec_for(n);
        case NodeKind::while_loop:
        case NodeKind::until_loop: return exec_loop(n);
        case NodeKind::arith_for:
            return speculate({[&] { return exec(n.children[0]); }}, true,
                             "the `for (( ... ))` loop at " + where(n.line) + " (not evaluated)");
        case NodeKind::case_clause: return exec_case(n);
        case NodeKind::group: return exec(n.children[0]);
        case NodeKind::subshell: {
            const ShellState saved = copy_state();
            Status st = exec(n.children[0]);
            state = saved;
            if (st.flow == Flow::exit) st.flow = Flow::normal;
            return st;
        }
        case NodeKind::function_def:
            state.functions[n.name] = &n.children[0];
            return {};
        case NodeKind::cond: return {cond_words(n.words, n.line)};
        case NodeKind::arith: {
            const ShellValue v = arith_expansion(n.words[0].raw, n.line);
            if (!v.unknown.empty()) return {Truth::unknown(v.unknown)};
            return {Truth::of(v.text != "0")};
        }
    }
    return {};
}

Status ShellEvaluator::exec_if(const Node& n, size_t from) {
    const size_t pairs = (n.children.size() - (n.has_else ? 1 : 0)) / 2;
    for (size_t k = from; k < pairs; ++k) {
        const Status c = exec(n.children[2 * k]);
        if (c.flow != Flow::normal) return c;
        if (c.truth.v == Truth::V::yes) return exec(n.children[2 * k + 1]);
        if (c.truth.v == Truth::V::unknown) {
            const std::string why = "the `if` at " + where(n.children[2 * k].line) + " on " + c.truth.why;
            const Node& body = n.children[2 * k + 1];
            return speculate({[&] { return exec(body); }, [&, k] { return exec_if(n, k + 1); }}, false, why);
        }
    }
    if (n.has_else) return exec(n.children.back());
    return {};
}

Status ShellEvaluator::exec_loop(const Node& n) {
    const bool until = n.kind == NodeKind::until_loop;
    for (int iteration = 0;; ++iteration) {
        if (iteration >= kMaxIterations) fail(n.line, "the loop runs more than 10,000 times; not evaluated further");
        const Status c = exec(n.children[0]);
        if (c.flow != Flow::normal) return c;
        if (c.truth.v == Truth::V::unknown) {
            const std::string why = "the loop at " + where(n.line) + " on " + c.truth.why;
            return speculate({[&] { return exec(n.children[1]); }}, true, why);
        }
        if ((c.truth.v == Truth::V::yes) == until) return {};
        if (const auto done = after_body(exec(n.children[1]))) return *done;
    }
}

Status ShellEvaluator::exec_for(const Node& n) {
    std::vector<ShellField> items;
    if (n.all_args) {
        for (const auto& a : state.args) items.push_back({a.text, a.unknown, n.line});
    } else {
        for (const auto& w : n.words)
            for (auto& f : expand(w, Mode::fields)) items.push_back(settle(f));
    }
    for (const auto& it : items) {
        if (it.known()) continue;
        const std::string why = "the loop at " + where(n.line) + " over " + it.unknown;
        return speculate({[&] {
                              set_scalar(n.name, {"", why}, n.line);
                              return exec(n.children[0]);
                          }},
                         true, why);
    }
    if (items.size() > static_cast<size_t>(kMaxIterations))
        fail(n.line, "the loop runs more than 10,000 times; not evaluated further");
    for (const auto& it : items) {
        set_scalar(n.name, {it.text, ""}, n.line);
        if (const auto done = after_body(exec(n.children[0]))) return *done;
    }
    return {};
}

Status ShellEvaluator::exec_case(const Node& n) {
    const ShellField subject = settle(expand_one(n.words[0]));
    for (size_t arm = 0; arm < n.children.size(); ++arm) {
        for (const auto& p : n.patterns[arm]) {
            std::string mask;
            const ShellField pat = settle(expand_pattern(p, mask));
            if (!subject.known() || !pat.known()) {
                const std::string why =
                    "the `case` at " + where(n.line) + " on " + (subject.known() ? pat.unknown : subject.unknown);
                std::vector<std::function<Status()>> rest;
                for (size_t k = arm; k < n.children.size(); ++k) rest.push_back([&, k] { return exec(n.children[k]); });
                return speculate(rest, true, why);
            }
            if (glob_match(pat.text, mask, subject.text)) return exec(n.children[arm]);
        }
    }
    return {};
}

ShellRun evaluate_shell(const std::string& text, const std::string& source, const ShellOptions& options) {
    if (text.find_first_of(std::string{kMark, kMarkEnd}) != std::string::npos)
        throw InputError(source, "", "control characters in the script; expected shell text");
    ShellRun run;
    ShellEvaluator ev(options, run);
    ev.out_file_ = source;
    const Status st = ev.run_script(text, source, 1, true);
    if (st.flow == Flow::exit) {
        run.exit_line = st.line;
        run.exit_file = ev.exit_file_.empty() ? source : ev.exit_file_;
    }
    for (const auto& name : options.fixed)
        if (!ev.fixed_read_.count(name.first))
            run.notes.emplace_back("--var " + name.first, "the script never reads " + name.first);
    return run;
}

}  // namespace lostflops::interop
