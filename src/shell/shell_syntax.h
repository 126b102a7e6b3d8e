// The syntax tree of a launch script as the shell parses it (IEEE Std
// 1003.1-2017, Shell Command Language 2.9 "Shell Commands", plus the bash
// forms launch scripts use: arrays `A=( ... )`, `[[ ... ]]`, `(( ... ))`,
// `function f { ... }`). Words keep their source text (quotes, `$`, `\`) and
// are expanded only when the evaluator reaches them (shell_expand.h).
// Nothing here runs anything.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace lostflops::interop {

// Unknown parts of a value are placeholders in its text: kMark, a number
// naming the reason, kMarkEnd; in a raw word, kMark '<' ... kMarkEnd is a
// template placeholder (`NAME=<path to data>`). Control characters never
// occur in a script (check_text and evaluate_shell refuse them), so they
// cannot be confused with its text.
inline constexpr char kMark = '\x01';
inline constexpr char kMarkEnd = '\x02';

struct ShellWordRaw {
    std::string raw;          // as written, quotes included, line continuations removed
    int line = 0;             // 1-based line where it starts
    bool op = false;          // inside [[ ]]: an operator token (&&, ||, (, ), <, >)
};

// `<<EOF` body: filled by the lexer when it reaches the line after the operator.
struct HereDoc {
    std::string body;
    bool expand = true;       // false when the delimiter was quoted ('EOF', "EOF", \EOF)
    int line = 0;             // first line of the body
};

struct Redirect {
    std::string op;                   // "<", ">", ">>", "<<", "<<-", "<<<", ">&", "<&", "&>", "&>>", "<>", ">|"
    ShellWordRaw target;              // file, descriptor, delimiter or here-string
    std::shared_ptr<HereDoc> heredoc; // for "<<" and "<<-"
};

// NAME=value, NAME+=value, NAME[i]=value, NAME=( w ... ), NAME+=( w ... ).
struct Assignment {
    std::string name;
    std::string index;                 // raw subscript of NAME[i]=; empty otherwise
    bool append = false;               // +=
    bool array = false;                // =( ... )
    ShellWordRaw value;                // scalar value (raw)
    std::vector<ShellWordRaw> elements;  // array elements
    int line = 0;
};

enum class NodeKind {
    simple,        // assignments, words, redirects
    pipeline,      // children joined by |; `negate` for a leading !
    and_or,        // children joined by ops (&&, ||)
    sequence,      // children run in order (; & newline)
    if_clause,     // children: cond0, body0, cond1, body1, ..., [else body]
    for_loop,      // name, words (in-list; `all_args` when absent), children[0] body
    arith_for,     // for (( ; ; )): never evaluated
    while_loop,    // children: cond, body
    until_loop,    // children: cond, body
    case_clause,   // words[0] subject, patterns[i] for children[i]
    group,         // { list; }
    subshell,      // ( list )
    function_def,  // name, children[0] body
    cond,          // [[ words ]]
    arith,         // (( words[0] ))
};

struct Node {
    NodeKind kind = NodeKind::simple;
    int line = 0;
    std::vector<Assignment> assignments;
    std::vector<ShellWordRaw> words;
    std::vector<Redirect> redirects;
    std::vector<Node> children;
    std::vector<std::string> ops;                       // and_or: "&&" / "||" between children
    std::vector<std::vector<ShellWordRaw>> patterns;    // case: the patterns of each arm
    std::string name;                                   // for / function name
    bool negate = false;                                // pipeline: ! pipeline
    bool has_else = false;                              // if: the last child is the else body
    bool all_args = false;                              // for NAME; do ... (iterates "$@")
};

struct ShellScript {
    Node body;                                    // a sequence
    std::vector<std::pair<std::string, int>> sbatch;  // "#SBATCH ..." lines before the first command
};

// Throws InputError(source, "line N", what was expected) on a syntax error
// (unterminated quote, missing `fi` / `done` / `esac`, ...). `first_line`
// numbers lines of a string evaluated inside another script (sh -c, eval).
ShellScript parse_shell(const std::string& text, const std::string& source, int first_line = 1);

}  // namespace lostflops::interop
