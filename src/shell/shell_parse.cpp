// Recursive-descent parser of launch scripts into the tree of shell_syntax.h,
// following the grammar of IEEE Std 1003.1-2017 Shell Command Language 2.10
// (list, and_or, pipeline, compound commands, function definitions, case
// items) with the bash forms `[[ ... ]]`, `(( ... ))`, `function NAME`, and
// array assignments. Reserved words are recognised only where a command
// starts and only unquoted.
#include <set>

#include "shell/shell_lexer.h"
#include "shell/shell_syntax.h"
#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

// Nesting bound: a script deeper than this is not a launch script (and the
// recursion of the parser stays far from the stack's end).
constexpr int kMaxDepth = 200;

const std::set<std::string> kListEnd = {"then", "elif", "else", "fi", "do", "done", "esac", "}"};
const std::set<std::string> kListEndOps = {")", ";;", ";&", ";;&"};

class Parser {
public:
    Parser(const std::string& text, const std::string& source, int first_line) : lx_(text, source, first_line) {
        tok_ = lx_.next();
    }

    ShellScript script() {
        ShellScript s;
        s.body = sequence();
        if (tok_.kind != TokenKind::eof) fail("unexpected '" + tok_.text + "'");
        s.sbatch = lx_.sbatch();
        return s;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(lx_.source(), "line " + std::to_string(tok_.line), what);
    }
    void advance() { tok_ = lx_.next(); }
    bool is_word(const char* w) const { return tok_.kind == TokenKind::word && !tok_.array && tok_.text == w; }
    bool is_op(const char* o) const { return tok_.kind == TokenKind::op && tok_.text == o; }
    void skip_newlines() {
        while (tok_.kind == TokenKind::newline) advance();
    }
    void expect_word(const char* w, const std::string& after) {
        skip_newlines();
        if (!is_word(w))
            fail(std::string("expected '") + w + "' " + after +
                 (tok_.kind == TokenKind::eof ? ", got the end of the script" : ", got '" + tok_.text + "'"));
        advance();
    }
    bool at_list_end() const {
        if (tok_.kind == TokenKind::eof) return true;
        if (tok_.kind == TokenKind::op) return kListEndOps.count(tok_.text) != 0;
        return tok_.kind == TokenKind::word && !tok_.array && kListEnd.count(tok_.text) != 0;
    }

    struct DepthGuard {
        explicit DepthGuard(Parser& p) : p_(p) {
            if (++p_.depth_ > kMaxDepth) p_.fail("nested more than " + std::to_string(kMaxDepth) + " levels deep");
        }
        ~DepthGuard() { --p_.depth_; }
        Parser& p_;
    };

    Node sequence() {
        DepthGuard g(*this);
        Node seq;
        seq.kind = NodeKind::sequence;
        seq.line = tok_.line;
        for (;;) {
            skip_newlines();
            if (at_list_end()) return seq;
            seq.children.push_back(and_or());
            if (is_op(";") || is_op("&")) {
                advance();
            } else if (tok_.kind != TokenKind::newline) {
                return seq;
            }
        }
    }

    Node and_or() {
        Node first = pipeline();
        if (!is_op("&&") && !is_op("||")) return first;
        Node n;
        n.kind = NodeKind::and_or;
        n.line = first.line;
        n.children.push_back(std::move(first));
        while (is_op("&&") || is_op("||")) {
            n.ops.push_back(tok_.text);
            advance();
            skip_newlines();
            n.children.push_back(pipeline());
        }
        return n;
    }

    Node pipeline() {
        bool negate = false;
        if (is_word("!")) {
            negate = true;
            advance();
        }
        Node first = command();
        if (!is_op("|") && !is_op("|&") && !negate) return first;
        Node n;
        n.kind = NodeKind::pipeline;
        n.line = first.line;
        n.negate = negate;
        n.children.push_back(std::move(first));
        while (is_op("|") || is_op("|&")) {
            advance();
            skip_newlines();
            n.children.push_back(command());
        }
        return n;
    }

    void redirects(Node& n) {
        while (tok_.kind == TokenKind::op) {
            std::string op = tok_.text;
            const auto digits = op.find_first_not_of("0123456789");
            const std::string bare = op.substr(digits);
            static const std::set<std::string> kRedirects = {"<",  ">",  ">>", "<<", "<<-", "<<<", ">&",
                                                             "<&", "&>", "&>>", "<>", ">|"};
            if (!kRedirects.count(bare)) return;
            const int line = tok_.line;
            advance();
            if (tok_.kind != TokenKind::word) fail("expected a file or delimiter after '" + op + "'");
            Redirect r;
            r.op = bare;
            r.target = {tok_.text, tok_.line};
            if (bare == "<<" || bare == "<<-") r.heredoc = lx_.add_heredoc(tok_.text, bare == "<<-", line);
            n.redirects.push_back(std::move(r));
            advance();
        }
    }

    Node command() {
        DepthGuard g(*this);
        Node n;
        n.line = tok_.line;
        if (tok_.kind == TokenKind::word && !tok_.array) {
            const std::string& w = tok_.text;
            if (w == "if") n = if_clause();
            else if (w == "for") n = for_loop();
            else if (w == "while" || w == "until") n = while_loop(w == "until");
            else if (w == "case") n = case_clause();
            else if (w == "{") n = group();
            else if (w == "[[") n = cond();
            else if (w == "function") n = function_def();
            else return simple();
        } else if (is_op("(")) {
            advance();
            n.kind = NodeKind::subshell;
            n.children.push_back(sequence());
            if (!is_op(")")) fail("expected ')' to close the '(' of line " + std::to_string(n.line));
            advance();
        } else if (is_op("((")) {
            n.kind = NodeKind::arith;
            n.words.push_back({lx_.read_arith(), n.line});
            advance();
        } else if (tok_.kind == TokenKind::word) {
            return simple();
        } else {
            fail(tok_.kind == TokenKind::eof ? "unexpected end of the script" : "unexpected '" + tok_.text + "'");
        }
        redirects(n);
        return n;
    }

    // A compound command's node, its opening word consumed.
    Node open(NodeKind kind) {
        Node n;
        n.kind = kind;
        n.line = tok_.line;
        advance();
        return n;
    }

    Node if_clause() {
        Node n = open(NodeKind::if_clause);
        n.children.push_back(sequence());
        expect_word("then", "after the condition of 'if'");
        n.children.push_back(sequence());
        for (;;) {
            skip_newlines();
            if (is_word("elif")) {
                advance();
                n.children.push_back(sequence());
                expect_word("then", "after the condition of 'elif'");
                n.children.push_back(sequence());
            } else if (is_word("else")) {
                advance();
                n.children.push_back(sequence());
                n.has_else = true;
                expect_word("fi", "to close the 'if' of line " + std::to_string(n.line));
                return n;
            } else {
                expect_word("fi", "to close the 'if' of line " + std::to_string(n.line));
                return n;
            }
        }
    }

    void do_body(Node& n, const char* what) {
        skip_newlines();
        if (is_op(";")) advance();
        expect_word("do", what);
        n.children.push_back(sequence());
        expect_word("done", "to close the loop of line " + std::to_string(n.line));
    }

    Node for_loop() {
        Node n = open(NodeKind::for_loop);
        if (is_op("((")) {
            n.kind = NodeKind::arith_for;
            n.words.push_back({lx_.read_arith(), n.line});
            advance();
            do_body(n, "after 'for (( ... ))'");
            return n;
        }
        if (tok_.kind != TokenKind::word || !is_shell_name(tok_.text)) fail("expected a variable name after 'for'");
        n.name = tok_.text;
        advance();
        skip_newlines();
        if (is_word("in")) {
            advance();
            while (tok_.kind == TokenKind::word) {
                n.words.push_back({tok_.text, tok_.line});
                advance();
            }
        } else {
            n.all_args = true;
        }
        do_body(n, "after the list of 'for'");
        return n;
    }

    Node while_loop(bool until) {
        Node n = open(until ? NodeKind::until_loop : NodeKind::while_loop);
        n.children.push_back(sequence());
        expect_word("do", until ? "after the condition of 'until'" : "after the condition of 'while'");
        n.children.push_back(sequence());
        expect_word("done", "to close the loop of line " + std::to_string(n.line));
        return n;
    }

    Node case_clause() {
        Node n = open(NodeKind::case_clause);
        if (tok_.kind != TokenKind::word) fail("expected a word after 'case'");
        n.words.push_back({tok_.text, tok_.line});
        advance();
        expect_word("in", "after 'case WORD'");
        for (;;) {
            skip_newlines();
            if (is_word("esac")) break;
            if (tok_.kind == TokenKind::eof) fail("expected 'esac' to close the 'case' of line " + std::to_string(n.line));
            if (is_op("(")) advance();
            std::vector<ShellWordRaw> pats;
            for (;;) {
                if (tok_.kind != TokenKind::word) fail("expected a pattern in the 'case' of line " + std::to_string(n.line));
                pats.push_back({tok_.text, tok_.line});
                advance();
                if (!is_op("|")) break;
                advance();
            }
            if (!is_op(")")) fail("expected ')' after a pattern of the 'case' of line " + std::to_string(n.line));
            advance();
            n.patterns.push_back(std::move(pats));
            n.children.push_back(sequence());
            if (is_op(";;") || is_op(";&") || is_op(";;&")) advance();
        }
        advance();
        return n;
    }

    Node group() {
        Node n = open(NodeKind::group);
        n.children.push_back(sequence());
        expect_word("}", "to close the '{' of line " + std::to_string(n.line));
        return n;
    }

    Node cond() {
        Node n = open(NodeKind::cond);
        for (;;) {
            if (is_word("]]")) break;
            if (tok_.kind == TokenKind::eof || tok_.kind == TokenKind::newline)
                fail("expected ']]' to close the '[[' of line " + std::to_string(n.line));
            n.words.push_back({tok_.text, tok_.line, tok_.kind == TokenKind::op});
            advance();
        }
        advance();
        return n;
    }

    Node function_def() {
        Node n = open(NodeKind::function_def);
        if (tok_.kind != TokenKind::word || tok_.array) fail("expected a function name after 'function'");
        n.name = tok_.text;
        advance();
        if (is_op("(")) {
            advance();
            if (!is_op(")")) fail("expected ')' after 'function " + n.name + " ('");
            advance();
        }
        skip_newlines();
        n.children.push_back(command());
        return n;
    }

    Assignment assignment_of(const Token& t) {
        Assignment a;
        a.line = t.line;
        const auto eq = t.text.find('=');
        std::string lhs = t.text.substr(0, eq);
        if (!lhs.empty() && lhs.back() == '+') {
            a.append = true;
            lhs.pop_back();
        }
        const auto br = lhs.find('[');
        if (br != std::string::npos) {
            a.index = lhs.substr(br + 1, lhs.size() - br - 2);
            lhs = lhs.substr(0, br);
        }
        a.name = lhs;
        a.array = t.array;
        if (t.array) a.elements = t.elements;
        else a.value = {t.text.substr(eq + 1), t.line};
        return a;
    }

    static bool is_assignment(const Token& t) {
        if (t.array) return true;
        const auto eq = t.text.find('=');
        if (eq == std::string::npos || eq == 0) return false;
        std::string lhs = t.text.substr(0, eq);
        if (lhs.back() == '+') lhs.pop_back();
        const auto br = lhs.find('[');
        if (br != std::string::npos) {
            if (lhs.back() != ']') return false;
            lhs = lhs.substr(0, br);
        }
        return is_shell_name(lhs);
    }

    Node simple() {
        Node n;
        n.kind = NodeKind::simple;
        n.line = tok_.line;
        for (;;) {
            if (tok_.kind == TokenKind::word) {
                if (n.words.empty() && is_assignment(tok_)) n.assignments.push_back(assignment_of(tok_));
                else if (tok_.array) n.assignments.push_back(assignment_of(tok_));  // declare -a A=( ... )
                else n.words.push_back({tok_.text, tok_.line});
                advance();
                continue;
            }
            if (tok_.kind == TokenKind::op && is_op("(") && n.words.size() == 1 && n.assignments.empty() &&
                n.redirects.empty()) {
                // NAME ( ) compound-command: a function definition.
                Node f;
                f.kind = NodeKind::function_def;
                f.line = n.line;
                f.name = n.words[0].raw;
                advance();
                if (!is_op(")")) fail("expected ')' after '" + f.name + " ('");
                advance();
                skip_newlines();
                f.children.push_back(command());
                return f;
            }
            const size_t before = n.redirects.size();
            redirects(n);
            if (n.redirects.size() == before) break;
        }
        if (n.words.empty() && n.assignments.empty() && n.redirects.empty())
            fail(tok_.kind == TokenKind::eof ? "unexpected end of the script" : "unexpected '" + tok_.text + "'");
        return n;
    }

    ShellLexer lx_;
    Token tok_;
    int depth_ = 0;
};

}  // namespace

ShellScript parse_shell(const std::string& text, const std::string& source, int first_line) {
    return Parser(text, source, first_line).script();
}

}  // namespace lostflops::interop
