// A safe evaluator of launch scripts: it follows a bash script as bash would
// (assignments, `export`, `${VAR}`, `${VAR:-default}` and the other parameter
// operators, arrays and `"${A[@]}"`, `$(( ... ))`, quoting and field
// splitting, `if` / `case` / `for` / `while` on values it knows, functions,
// `source` of files beside the script, `sh -c "..."`, `sbatch` batch scripts
// and here-documents) and records the commands the script would run, with
// their words. NOTHING IS EVER RUN: no program, no command substitution, no
// file other than a sourced script inside the folder of the script the user
// gave is read.
//
// What it cannot know is carried, not guessed: a command substitution other
// than the pure idioms below, a positional argument not given, `$RANDOM`, a
// value set under an `if` whose condition depends on one of those or on a
// file test, ... A field or value holding such a thing says why
// (`unknown`), and a command run under an undecidable condition says which
// (`uncertain`). The importer decides whether that matters (a path: no; the
// number of layers: an error naming the line).
//
// Pure command substitutions evaluated without running anything: pwd,
// dirname, basename, realpath / readlink -f (lexically, no links followed),
// echo, printf with %s / %d, cd; `$PWD` and the working directory start as
// the folder of the script (assumed: it is run from there).
//
// Bounds: 8 nested sources / batch scripts, 10,000 iterations per loop,
// 1,000,000 commands, 1 MiB per value; and the work: 16 MiB of script text
// parsed in all (sourced files each time, sh -c, eval, $( )), 256 MiB of
// values copied (expansions, assignments, reads, the states of subshells
// and branches); past them InputError. A construct it does not evaluate
// (declare -A, -i, -n, -l, -u; IFS other than blank, tab, newline; sparse
// arrays; ${X@op}) gives a value whose reason says "not evaluated: ...",
// never another value than bash's.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lostflops::interop {

struct ShellField {
    std::string text;
    std::string unknown;  // empty: known; else why the text is not the real value
    int line = 0;
    bool known() const { return unknown.empty(); }
};

// One command the script runs (builtins excluded), fully expanded.
struct ShellCommand {
    std::vector<ShellField> words;
    std::vector<std::pair<std::string, ShellField>> env;  // NAME=value before the command
    std::string file;                                     // script (or sourced file) it is in
    int line = 0;
    std::string uncertain;  // empty: runs whenever the script runs; else the condition it depends on
    // The launchers around it, outermost first: the words of `sbatch ...`
    // (up to the batch script), of the batch script's `#SBATCH` lines (first
    // word "#SBATCH", the options the command line overrides), or of
    // `srun ... sh -c` (up to the shell).
    std::vector<std::vector<ShellField>> wrappers;
};

struct ShellOptions {
    std::string script_path;   // as the user gave it: $0, and its folder bounds `source`; empty: standard input
    std::vector<std::pair<std::string, std::string>> env;    // the environment (the script's assignments win)
    std::vector<std::pair<std::string, std::string>> fixed;  // fixed values: the script's assignments are skipped
    std::vector<std::string> args;                           // $1, $2, ...
};

struct ShellRun {
    std::vector<ShellCommand> commands;
    std::vector<std::string> unset_read;   // variables read while neither set by the script nor given
    std::vector<std::string> args_tested;  // "argument N": positional arguments not given that a condition read
    std::vector<std::pair<std::string, std::string>> notes;  // (what, message): assumptions made
    int exit_line = 0;                     // the line of an `exit` that ended the script; 0 if none
    // The last text the script printed (echo, printf to the terminal, not
    // captured) when every word of it was known: what a script says before
    // it exits ("Please set WORKSPACE ..."). Empty if none.
    std::string last_said;
    std::string exit_file;
};

// Throws InputError(source, "line N", ...) for a syntax error, a bound
// exceeded, a `source` outside the script's folder or missing.
ShellRun evaluate_shell(const std::string& text, const std::string& source, const ShellOptions& options);

// `path` (relative to `dir`) lexically normalised, when it names an existing
// file inside the folder `root` also after following links; else "" and
// `error` says why. The rule for every file a script makes lostflops read.
std::string file_inside(const std::string& root, const std::string& dir, const std::string& path, std::string& error);

}  // namespace lostflops::interop
