// The launch-script evaluator against bash itself, and its work bounds
// (issue 36, items 2, 3 and 9). The differential test runs each snippet
// through `bash` (skipped where bash is absent) and through the evaluator:
// every word the evaluator says it knows must be bash's word; a construct it
// does not evaluate must come out unknown ("not evaluated: ..."), never as
// another value. Only bash runs the snippets: the evaluator runs nothing.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "shell/shell_eval.h"
#include "lostflops/error.h"

namespace lostflops::test {
namespace {

using W = std::vector<std::string>;

// The words `cmd` gets in the snippet, unknown ones as "?" (the last `cmd`).
W evaluator_words(const std::string& script, std::string* why = nullptr) {
    const auto r = interop::evaluate_shell(script, "t.sh", {});
    for (auto it = r.commands.rbegin(); it != r.commands.rend(); ++it) {
        if (it->words.empty() || it->words[0].text != "cmd") continue;
        W out;
        for (size_t i = 1; i < it->words.size(); ++i) {
            out.push_back(it->words[i].known() ? it->words[i].text : "?");
            if (why && !it->words[i].known() && why->empty()) *why = it->words[i].unknown;
        }
        return out;
    }
    return {"(no cmd)"};
}

bool have_bash() { return std::system("bash -c true >/dev/null 2>&1") == 0; }

// The words bash passes to `cmd` (a function printing each, NUL-terminated).
W bash_words(const std::string& script) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("lostflops-bash-diff-" + std::to_string(::getpid()) + ".sh"))
                                 .string();
    std::ofstream(path) << "cmd() { for w in \"$@\"; do printf '%s\\0' \"$w\"; done; }\n" << script;
    W out;
    if (FILE* p = popen(("bash " + path + " 2>/dev/null").c_str(), "r")) {
        std::string all;
        std::array<char, 4096> buf{};
        size_t n;
        while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) all.append(buf.data(), n);
        pclose(p);
        for (size_t at = 0; at < all.size();) {
            const size_t end = all.find('\0', at);
            out.push_back(all.substr(at, end - at));
            at = end + 1;
        }
    }
    std::filesystem::remove(path);
    return out;
}

struct Case {
    const char* script;
    bool known;  // the evaluator evaluates it: every word known and bash's
};

TEST(ShellBash, SameWordsAsBashOrNotEvaluated) {
    if (!have_bash()) GTEST_SKIP() << "bash is not installed";
    const Case cases[] = {
        // Evaluated as bash does (before: empty, and the whole array).
        {"TPS=(1 2 4)\ncmd \"${TPS[-1]}\" \"${TPS[-3]}\" ${TPS[@]: -1} ${TPS[@]:1} ${TPS[@]:1:1} ${TPS[@]:5} x\n", true},
        {"set -- a b c\ncmd ${@: -1} ${@:1:1} ${*: -2} \"${@:2}\"\n", true},
        {"A=(1 2 4)\nA[-1]=9\ncmd \"${A[@]}\" ${#A[@]} ${!A[@]} \"${!A[*]}\"\n", true},
        {"A=(4 8)\nfor k in ${!A[@]}; do TP=${A[$k]}; done\ni=0\ncmd $TP ${A[$i+1]} ${A[i]}\n", true},
        {"A=(1 2 4)\nB=$(echo hi)\ncmd ${#A[@]} \"${A[@]}\" ${A[1]} \"${A[*]}\" $B\n", true},
        {"X=a,b\nIFS=' '\ncmd $X\n", true},
        {"OLD=$IFS\nIFS=,\nIFS=$OLD\nX='a b'\ncmd $X $'e\\ef\\tg'\n", true},
        // Not evaluated, and said so (before: 2, '[tp]=4', split on blanks, ...).
        {"declare -A M\nM[tp]=4\nM[pp]=2\ncmd ${M[tp]}\n", false},
        {"declare -A M=([tp]=4 [pp]=2)\ncmd ${M[tp]}\n", false},
        {"A=([0]=x [2]=y)\ncmd ${A[2]}\n", false},
        {"A[5]=x\ncmd ${#A[@]}\n", false},
        {"X=1,2,4\nIFS=,\ncmd $X\n", false},
        {"IFS=,\nA=(1 2)\ncmd \"${A[*]}\"\n", false},
        {"declare -i N\nN=2*4\ncmd $N\n", false},
        {"declare -l L=ABC\ncmd $L\n", false},
        {"X=abc\ncmd ${X@U}\n", false},
        {"A=(1 2 4)\ncmd ${A[-4]}\n", false},
        {"PFX_A=1\ncmd ${!PFX_@}\n", false},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.script);
        std::string why;
        const W ours = evaluator_words(c.script, &why);
        const W theirs = bash_words(c.script);
        bool unknown = false;
        for (const auto& w : ours) unknown = unknown || w == "?";
        if (c.known) {
            EXPECT_EQ(ours, theirs);
            continue;
        }
        EXPECT_TRUE(unknown) << "a construct not evaluated gave a value";
        EXPECT_NE(why.find("not evaluated"), std::string::npos) << why;
        if (ours.size() != theirs.size()) continue;
        for (size_t i = 0; i < ours.size(); ++i) {
            if (ours[i] == "?") continue;
            EXPECT_EQ(ours[i], theirs[i]);
        }
    }
}

// Work bounds: the size limits bound one value, these the work of a script.
std::string error_of(const std::string& script, const interop::ShellOptions& o = {}) {
    try {
        interop::evaluate_shell(script, "t.sh", o);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ShellBash, CopiesAreBounded) {
    // A 512 KiB value copied 10,000 times: before, over 60 s (X=$Y), 5.9 GB
    // (X[$i]=$Y) and 4.4 GB (A+=($Y)); a state of 512 KiB copied by every $( ).
    const std::string big = "Y=x\nfor i in $(seq 1 19); do Y=$Y$Y; done\n";
    for (const char* body : {"X=$Y", "X[$i]=$Y", "A+=($Y)", "Z=$(echo a)", "Z=${#Y}", "(true)"}) {
        const std::string e = error_of(big + "for i in $(seq 1 10000); do " + body + "; done\n");
        EXPECT_NE(e.find("copies more than 256 MiB"), std::string::npos) << body << ": " << e;
    }
    EXPECT_EQ(error_of(big + "for i in $(seq 1 100); do X=$Y; done\n"), "no error");
}

TEST(ShellBash, ParsedTextIsBounded) {
    const auto dir = std::filesystem::temp_directory_path() / ("lostflops-shell-parse-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ofstream big(dir / "big.sh");  // 1 MiB of comment lines: no command, only text to parse
        for (int i = 0; i < 16000; ++i) big << "#" << std::string(62, 'x') << "\n";
    }
    interop::ShellOptions o;
    o.script_path = (dir / "main.sh").string();
    // Before: killed at 60 s holding 2.1 GB (10,000 sources of 1 MB).
    const std::string e = error_of("for i in $(seq 1 10000); do source big.sh; done\n", o);
    EXPECT_NE(e.find("parses more than 16 MiB"), std::string::npos) << e;
    EXPECT_EQ(error_of("for i in $(seq 1 10); do source big.sh; done\n", o), "no error");
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lostflops::test
