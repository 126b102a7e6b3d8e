// The evaluator of shell_eval.h, shared by its parts: control flow
// (shell_eval.cpp), word expansion (shell_expand.cpp), variables
// (shell_vars.cpp), simple commands (shell_commands.cpp), builtins
// (shell_builtins.cpp), nested scripts (shell_nested.cpp), conditions
// (shell_test.cpp) and arithmetic (shell_arith.cpp). Internal to src/shell.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "shell/shell_eval.h"
#include "shell/shell_syntax.h"

namespace lostflops::interop {

struct ShellValue {
    std::string text;
    std::string unknown;  // empty: known; else why (the text may hold placeholders)
    bool operator==(const ShellValue& o) const { return text == o.text && unknown == o.unknown; }
};

struct ShellVar {
    std::vector<ShellValue> items;  // a scalar is item 0
    std::string unknown;            // the whole variable (an array set under an undecidable condition)
    bool exported = false;
    bool array = false;
    bool operator==(const ShellVar& o) const {
        return items == o.items && unknown == o.unknown && exported == o.exported && array == o.array;
    }
};

// The outcome of a test or command: known true / false, or unknown and why.
struct Truth {
    enum class V { yes, no, unknown } v = V::yes;
    std::string why;
    static Truth yes() { return {V::yes, ""}; }
    static Truth no() { return {V::no, ""}; }
    static Truth unknown(std::string why) { return {V::unknown, std::move(why)}; }
    static Truth of(bool b) { return b ? yes() : no(); }
};

enum class Flow { normal, exit, ret, brk, cont };

struct Status {
    Truth truth;
    Flow flow = Flow::normal;
    int levels = 1;  // break N / continue N
    int line = 0;    // exit: the line of the `exit`
};

// What a subshell copies and a speculative branch may change.
struct ShellState {
    std::map<std::string, ShellVar> vars;
    std::map<std::string, const Node*> functions;
    std::vector<ShellValue> args;  // $1 ...
    std::string cwd;               // absolute, lexically normal
    std::string cwd_unknown;       // non-empty: `cd` to a folder not known (why)
};

// Thrown inside a command substitution that would have to run a program.
struct NotPure {
    std::string why;
};

class ShellEvaluator {
public:
    ShellEvaluator(const ShellOptions& options, ShellRun& out);
    // Evaluates a whole script (top level or nested) in the current state;
    // `batch`: its #SBATCH lines apply to the commands it runs.
    Status run_script(const std::string& text, const std::string& file, int first_line = 1, bool batch = false);

    // shell_eval.cpp: control flow.
    Status exec(const Node& n);
    Status exec_if(const Node& n, size_t from);
    Status exec_loop(const Node& n);
    Status exec_for(const Node& n);
    Status exec_case(const Node& n);
    // Runs each branch from the same state, as if under `why`; the state
    // after is their merge (a variable that differs becomes unknown).
    Status speculate(const std::vector<std::function<Status()>>& branches, bool include_skip, const std::string& why);

    // shell_expand.cpp: words.
    enum class Mode { fields, single, pattern, heredoc };
    std::vector<ShellField> expand(const ShellWordRaw& w, Mode mode);
    ShellField expand_one(const ShellWordRaw& w, Mode mode = Mode::single);
    // A pattern (case, [[ == ]], ${VAR#...}): `mask` gets '1' for each
    // character that was quoted (matches literally), '0' otherwise.
    ShellField expand_pattern(const ShellWordRaw& w, std::string& mask);
    ShellValue command_substitution(const std::string& inner, int line);
    ShellValue arith_expansion(const std::string& inner, int line);
    std::optional<int64_t> arith_value(const std::string& text, int line, std::string& unknown);
    bool joining() const { return joining_; }
    // `soft`: a positional argument not given, which is empty when the
    // script runs without it (conditions see it so) and unknown as a value.
    std::string placeholder(const std::string& why, bool soft = false);
    std::string reason_in(const std::string& text) const;  // "" when the text holds no placeholder
    static std::string strip(const std::string& text);     // placeholders removed
    // A field whose only unknown parts are soft: known, with them empty.
    ShellField settle(const ShellField& f) const;

    // shell_vars.cpp: variables.
    // nullopt when unset; `note` records a read of a variable nobody set.
    std::optional<ShellValue> lookup(const std::string& name, bool note);
    void note_unset(const std::string& name);
    void set_scalar(const std::string& name, ShellValue v, int line);
    // A variable given an attribute the evaluator does not model (declare
    // -A, -i, -n, -l, -u, -c): unknown, `why` naming the construct; `sticky`:
    // from then on (its assignments too), until `unset`.
    void not_evaluated(const std::string& name, const std::string& why, bool sticky = true);
    // "" when field splitting of `text` and joining with "$*" are bash's
    // default (IFS unset or blank, tab, newline) or, with another IFS, when
    // `text` holds none of its characters nor a blank; else why the split
    // is not evaluated.
    std::string ifs_not_evaluated(const std::string& text);
    // "" when "$*" and "${A[*]}" join with a blank, as lostflops does.
    std::string ifs_join_not_evaluated();
    // An assignment word; with `env` (NAME=v before a program) the value goes
    // to that program's environment instead of the shell.
    void assign(const Assignment& a, std::vector<std::pair<std::string, ShellField>>* env);
    // The state after branches that started from `before`: a variable the
    // branches leave different becomes unknown (`why`).
    ShellState merge(const ShellState& before, const std::vector<ShellState>& after, const std::string& why) const;

    // shell_commands.cpp: simple commands, functions, programs.
    Status exec_simple(const Node& n);
    // shell_builtins.cpp.
    static bool is_builtin(const std::string& name);
    Status builtin(const std::string& name, std::vector<ShellField>& words, const Node& n);
    // The builtins of more than a few lines, one each (`builtin` dispatches).
    Status echo_builtin(const std::vector<ShellField>& words);
    Status printf_builtin(const std::vector<ShellField>& words, int line);
    Status cd_builtin(std::vector<ShellField>& words, int line);
    Status unset_builtin(const std::vector<ShellField>& words);
    Status set_builtin(const std::vector<ShellField>& words);
    Status read_builtin(const std::string& name, const std::vector<ShellField>& words, int line);
    Status let_builtin(const std::vector<ShellField>& words, int line);
    Status command_builtin(const std::string& name, std::vector<ShellField>& words, const Node& n);
    Status call_function(const Node& body, const std::vector<ShellField>& words);
    Status external(std::vector<ShellField>& words, const Node& n,
                    std::vector<std::pair<std::string, ShellField>>& env);
    std::string pure_output(const std::vector<ShellField>& words, int line);

    // shell_nested.cpp: sh -c, bash FILE, sbatch, source.
    bool nested(const std::vector<ShellField>& words, const Node& n,
                const std::vector<std::pair<std::string, ShellField>>& env);
    Status source_file(const ShellField& path, const std::vector<ShellField>& args, int line);
    std::string resolve_inside(const std::string& path, int line, const char* what);
    // A script run by a new shell (sh -c, bash FILE, sbatch): the exported
    // variables and `env`, its own arguments, and `wrapper` (the launcher's
    // words, when not empty) around every command it runs.
    Status run_child(const std::string& text, const std::string& file, int first_line,
                     const std::vector<std::pair<std::string, ShellValue>>& env, const std::vector<ShellValue>& args,
                     const std::vector<ShellField>& wrapper, bool batch, const std::vector<std::string>* export_only);

    // shell_test.cpp: [ ], test, [[ ]], (( )).
    Truth test_words(const std::vector<ShellField>& args, int line);
    Truth cond_words(const std::vector<ShellWordRaw>& words, int line);

    [[noreturn]] void fail(int line, const std::string& what) const;
    void count_step(int line);
    // Work bounds (shell_eval.cpp): bytes of values read, written and
    // expanded, and of states copied for subshells and branches; bytes of
    // script text parsed (the script, sourced files, sh -c, eval, $( )).
    void count_copied(uint64_t bytes);
    void count_parsed(uint64_t bytes, int line);
    static uint64_t var_bytes(const ShellVar& v);
    uint64_t state_bytes() const;
    // A copy of the state, its size counted as copied.
    ShellState copy_state();
    std::string where(int line) const;  // "line N" or "file line N" in a sourced file

    const ShellOptions& options;
    ShellRun& out;
    ShellState state;
    std::string file;                       // the file being evaluated
    std::string root;                       // folder `source` may read from; empty: none (standard input)
    std::string speculative;                // non-empty: what the commands now run depend on
    std::string* capture = nullptr;         // inside $( ): output of pure builtins
    std::vector<std::vector<ShellField>> wrappers;
    std::set<std::string> fixed_names;
    std::set<std::string> assigned_ever;    // names the script assigned (unset reads of others are reported)
    std::map<std::string, std::string> not_evaluated_;  // name -> the construct (not_evaluated())
    Truth last = Truth::yes();
    bool joining_ = false;                  // expanding a single value: "$@" joins with spaces
    int depth = 0;                          // nested scripts (source, sh -c, sbatch)
    int calls = 0;                          // nested function calls
    long steps = 0;
    int line_now_ = 0;                      // the line of the command being run (for count_copied)
    uint64_t copied_ = 0, parsed_ = 0;
    std::vector<std::unique_ptr<ShellScript>> scripts;  // kept alive: functions point into them
    std::vector<std::map<std::string, std::optional<ShellVar>>> locals;  // `local` per function call
    std::string out_file_;                  // the name of the top-level script in messages
    std::string script_abs_;                // $0: the script's absolute path (empty: standard input)
    std::string exit_file_;                 // the file of the `exit` that ended the script
    std::set<std::string> fixed_read_;      // --var names the script read
    std::vector<std::string> reasons_;      // of placeholders, by number
    std::set<size_t> soft_;                 // placeholders of positional arguments not given
    std::map<std::string, size_t> reason_ids_;
};

// Glob matching of a pattern word (shell_test.cpp): `quoted` marks characters
// that match literally (quoted in the script). *, ?, [...] with ! or ^.
bool glob_match(const std::string& pattern, const std::string& quoted, const std::string& text);

// Integer arithmetic of $(( )) / (( )) / let (shell_arith.cpp), C precedence
// and 64-bit wrapping as bash. `get` returns a variable's value (nullopt:
// unknown, with `why` set); `set` assigns. Throws std::invalid_argument with
// a message on a syntax error or a division by zero.
struct ArithScope {
    virtual ~ArithScope() = default;
    virtual std::optional<int64_t> get(const std::string& name, std::string& why) = 0;
    virtual void set(const std::string& name, int64_t value) = 0;
};
std::optional<int64_t> eval_arith(const std::string& text, ArithScope& scope, std::string& why);

}  // namespace lostflops::interop
