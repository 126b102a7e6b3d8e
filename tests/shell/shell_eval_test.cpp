// The launch-script evaluator (src/shell/shell_eval.h), construct by
// construct, on scripts written for these tests: each expectation is what
// bash gives for the same script (checked by hand with bash 5.2), and nothing
// is ever run.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "shell/shell_eval.h"
#include "lostflops/error.h"

namespace lostflops::test {
namespace {

using interop::ShellOptions;
using interop::ShellRun;

ShellRun eval(const std::string& script, ShellOptions o = {}) { return interop::evaluate_shell(script, "t.sh", o); }

// The words of the last command named `name`, unknown words as "?".
std::vector<std::string> words_of(const ShellRun& r, const std::string& name = "cmd") {
    for (auto it = r.commands.rbegin(); it != r.commands.rend(); ++it) {
        if (it->words.empty() || it->words[0].text != name) continue;
        std::vector<std::string> out;
        for (size_t i = 1; i < it->words.size(); ++i) out.push_back(it->words[i].known() ? it->words[i].text : "?");
        return out;
    }
    return {"(no " + name + ")"};
}

using W = std::vector<std::string>;

TEST(ShellEval, AssignmentsAndParameterExpansion) {
    const auto r = eval(
        "A=1\nB=\"x y\"\nE=\ncmd $A ${A} \"$B\" $B ${U:-d} ${E:-e} ${E-f} ${A:+set} ${U:+no} ${#B}\n"
        "cmd ${C:=c} $C\n"
        "P=dir/sub/file.tar.gz\ncmd ${P#*/} ${P##*/} ${P%.*} ${P%%.*} ${P/sub/SUB} ${P//[.]/_} ${P:4:3} ${P^^}\n");
    ASSERT_EQ(r.commands.size(), 3u);
    EXPECT_EQ(r.commands[1].words[1].text, "c");
    EXPECT_EQ(r.commands[1].words[2].text, "c");
    std::vector<std::string> first;
    for (size_t i = 1; i < r.commands[0].words.size(); ++i) first.push_back(r.commands[0].words[i].text);
    EXPECT_EQ(first, (W{"1", "1", "x y", "x", "y", "d", "e", "set", "3"}));
    std::vector<std::string> third;
    for (size_t i = 1; i < r.commands[2].words.size(); ++i) third.push_back(r.commands[2].words[i].text);
    EXPECT_EQ(third, (W{"sub/file.tar.gz", "file.tar.gz", "dir/sub/file.tar", "dir/sub/file", "dir/SUB/file.tar.gz",
                        "dir/sub/file_tar_gz", "sub", "DIR/SUB/FILE.TAR.GZ"}));
}

TEST(ShellEval, QuotingContinuationsAndComments) {
    const auto r = eval(
        "# a comment cmd --not\n"
        "cmd 'single $A' \"double \\\"q\\\" \\$A\" a\\ b $'t\\tab' \\\n"
        "    --next \\\n"
        "    \"multi\n"
        "line\" x#notcomment # comment\n");
    EXPECT_EQ(words_of(r), (W{"single $A", "double \"q\" $A", "a b", "t\tab", "--next", "multi\nline", "x#notcomment"}));
    EXPECT_THROW(eval("cmd 'open\n"), InputError);
    try {
        eval("A=1\n\ncmd \"open\n");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "line 3");
    }
}

TEST(ShellEval, ArraysAppendAndExpand) {
    const auto r = eval(
        "ARGS=(\n  --a 1  # why\n  \"--b two words\"\n)\nARGS+=(--c)\nEXTRA=()\n"
        "cmd ${ARGS[@]} \"${ARGS[@]}\" \"${EXTRA[@]}\" ${#ARGS[@]} ${ARGS[1]} ${ARGS} \"${ARGS[*]}\"\n");
    EXPECT_EQ(words_of(r), (W{"--a", "1", "--b", "two", "words", "--c", "--a", "1", "--b two words", "--c", "4", "1",
                              "--a", "--a 1 --b two words --c"}));
    const auto idx = eval("A[0]=x\nA[1]=y\nA[1]+=z\ncmd \"${A[@]}\" ${#A[@]}\n");
    EXPECT_EQ(words_of(idx), (W{"x", "yz", "2"}));
}

TEST(ShellEval, ArithmeticExpansion) {
    const auto r = eval("N=4\nG=8\ncmd $((N*G)) $(( (N+2) % 4 )) $((1<<4)) $((N>2 ? 7 : 9)) $((2**10)) $((-7/2)) $((x+1))\n"
                        "let 'M = N * 3'\ncmd $M $((0x10)) $((8#17))\n");
    EXPECT_EQ(r.commands[0].words.size(), 8u);
    std::vector<std::string> first;
    for (size_t i = 1; i < r.commands[0].words.size(); ++i) first.push_back(r.commands[0].words[i].text);
    EXPECT_EQ(first, (W{"32", "2", "16", "7", "1024", "-3", "1"}));
    EXPECT_EQ(words_of(r), (W{"12", "16", "15"}));
    EXPECT_THROW(eval("cmd $((1/0))\n"), InputError);
    // A base too large for an int (fuzz_toml, seed 1: std::stoi threw out_of_range, exit 3).
    EXPECT_THROW(eval("cmd $((99999999999999999999#1))\n"), InputError);
    EXPECT_THROW(eval("let 'x = 99999999999999999999sss#1'\n"), InputError);
    EXPECT_THROW(eval("cmd $((65#1))\n"), InputError);
}

TEST(ShellEval, EnvironmentFixedValuesAndArguments) {
    ShellOptions o;
    o.env = {{"NODES", "4"}, {"TP", "2"}};
    o.fixed = {{"SIZE", "big"}};
    o.args = {"first"};
    const auto r = eval("TP=8\nSIZE=small\ncmd $NODES $TP $SIZE $1 ${2:-two} $# \"$@\"\ncmd $2\n", o);
    EXPECT_EQ(r.commands[0].words[1].text, "4");
    EXPECT_EQ(r.commands[0].words[2].text, "8");      // the script's assignment wins over the environment
    EXPECT_EQ(r.commands[0].words[3].text, "big");    // --var: the script's own assignment skipped
    EXPECT_EQ(r.commands[0].words[4].text, "first");
    EXPECT_EQ(r.commands[0].words[5].text, "two");
    EXPECT_EQ(r.commands[0].words[6].text, "1");
    EXPECT_EQ(words_of(r), (W{"?"}));                 // an argument not given: unknown as a value
    EXPECT_NE(r.commands[1].words[1].unknown.find("argument 2"), std::string::npos);
    const auto unset = eval("cmd $NOPE\n");
    EXPECT_EQ(unset.unset_read, (W{"NOPE"}));
}

TEST(ShellEval, ConditionsOnKnownValuesAreDecided) {
    const auto r = eval(
        "SIZE=7B\nif [ \"$SIZE\" == \"1B\" ]; then L=1; elif [[ $SIZE == *B && -n $SIZE ]]; then L=2; else L=3; fi\n"
        "case \"$SIZE\" in\n  1B|2B) C=small ;;\n  [0-9]B) C=digit ;;\n  *) C=other ;;\nesac\n"
        "if [ $# -gt 0 ] || [ -z \"$1\" ]; then A=noargs; fi\n"
        "[[ $UNSET -eq 0 ]] && Z=zero\n"
        "cmd $L $C $A $Z\n");
    EXPECT_EQ(words_of(r), (W{"2", "digit", "noargs", "zero"}));
    for (const auto& c : r.commands) EXPECT_TRUE(c.uncertain.empty());
}

TEST(ShellEval, UndecidableConditionsMakeWhatTheySetUnknown) {
    const auto r = eval(
        "if [ -f /etc/some/file ]; then X=a; Y=same; else X=b; Y=same; fi\n"
        "if [ -d /data ]; then echo missing; exit 1; fi\n"
        "cmd $X $Y\n"
        "if [ -f marker ]; then cmd2 inside; fi\n");
    EXPECT_EQ(words_of(r), (W{"?", "same"}));
    EXPECT_NE(r.commands[0].words[1].unknown.find("file test"), std::string::npos);
    ASSERT_EQ(r.commands.size(), 2u);  // echo is a builtin: cmd, and cmd2 under its condition
    EXPECT_NE(r.commands.back().uncertain.find("line 4"), std::string::npos);
    EXPECT_EQ(r.exit_line, 0);  // the branch that exits is not taken for granted
}

TEST(ShellEval, LoopsFunctionsAndLocals) {
    const auto r = eval(
        "S=\nfor x in a b c; do S=\"$S$x\"; [ $x = b ] && continue; done\n"
        "i=0\nwhile [ $i -lt 5 ]; do i=$((i+1)); if [ $i -eq 3 ]; then break; fi; done\n"
        "f() { local v=$1; G=\"$v-$#\"; return 0; }\nv=outer\nf in x\n"
        "function g { echo hi; }\n"
        "cmd $S $i $G $v\n");
    EXPECT_EQ(words_of(r), (W{"abc", "3", "in-2", "outer"}));
    EXPECT_THROW(eval("while true; do :; done\n"), InputError);  // bounded, not hung
}

TEST(ShellEval, CommandSubstitutionIsPureOrUnknown) {
    ShellOptions o;
    o.script_path = "/nonexistent/dir/run.sh";  // $0 and the working directory; nothing is read
    const auto r = eval(
        "HERE=$(dirname \"$(readlink -f \"$0\")\")\nB=`basename $0 .sh`\nN=$(echo 3 4)\nS=$(seq 2 4)\n"
        "cd sub && P=$(pwd)\nD=$(date +%s)\nH=$(hostname | tr a-z A-Z)\n"
        "cmd $HERE $B $N $S $P $D $H\n",
        o);
    EXPECT_EQ(words_of(r), (W{"/nonexistent/dir", "run", "3", "4", "2", "3", "4", "/nonexistent/dir/sub", "?", "?"}));
    EXPECT_NE(r.commands.back().words[9].unknown.find("`date` at line 6 is not run"), std::string::npos);
}

TEST(ShellEval, NothingIsEverRun) {
    const auto marker = std::filesystem::temp_directory_path() / "lostflops-shell-eval-marker";
    std::filesystem::remove(marker);
    const std::string m = marker.string();
    const auto r = eval("touch " + m + "\nX=$(touch " + m + ")\necho hi > " + m + "\neval \"touch " + m +
                        "\"\nsh -c \"touch " + m + "\"\n");
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_EQ(r.commands.size(), 4u);  // touch, touch inside eval, sh and touch inside it: recorded only
}

TEST(ShellEval, ShellCommandStringsSeeExportedVariables) {
    const auto r = eval("export E=exported\nL=local\nCMD=\"cmd \\$E \\$L $L\"\nsrun -N 2 bash -x -c \"$CMD\"\n");
    EXPECT_EQ(words_of(r), (W{"exported", "local"}));  // $L is not exported: empty in the new shell
    const auto& c = r.commands.back();
    ASSERT_EQ(c.wrappers.size(), 1u);
    EXPECT_EQ(c.wrappers[0][0].text, "srun");
}

TEST(ShellEval, BatchScriptsFromHereDocumentsWithDirectives) {
    const auto r = eval(
        "GBS=64\nsbatch --nodes=2 <<EOF\n#!/bin/bash\n#SBATCH --ntasks-per-node=8\n#SBATCH -t 1:00:00\n"
        "srun python train.py --global-batch-size $GBS --log \\$LOGDIR\nEOF\n");
    const auto& c = r.commands.back();
    EXPECT_EQ(c.words[0].text, "srun");
    EXPECT_EQ(c.words[4].text, "64");
    ASSERT_EQ(c.wrappers.size(), 2u);
    EXPECT_EQ(c.wrappers[0][1].text, "--nodes=2");
    EXPECT_EQ(c.wrappers[1][0].text, "#SBATCH");
    EXPECT_EQ(c.wrappers[1][1].text, "--ntasks-per-node=8");
}

TEST(ShellEval, TemplatePlaceholdersAreUnknown) {
    const auto r = eval("DATA=<path to the data>\ncmd --data $DATA --n 1\n");
    EXPECT_EQ(words_of(r), (W{"--data", "?", "--n", "1"}));
    EXPECT_NE(r.commands[0].words[2].unknown.find("placeholder `<path to the data>`"), std::string::npos);
}

TEST(ShellEval, ExitEndsTheScript) {
    const auto r = eval("cmd one\nif [ 1 = 1 ]; then exit 3; fi\ncmd two\n");
    EXPECT_EQ(words_of(r), (W{"one"}));
    EXPECT_EQ(r.exit_line, 2);
}

TEST(ShellEval, WhatTheScriptPrintsBeforeItExitsIsKept) {
    // echo and printf to the terminal: the last text whose words are all known.
    const auto r = eval("echo starting\nif [[ -z $WORKSPACE ]]; then\n  echo \"Please set WORKSPACE.\"\n  exit 1\nfi\n");
    EXPECT_EQ(r.exit_line, 4);
    EXPECT_EQ(r.last_said, "Please set WORKSPACE.");
    // printf with its format, an unset variable empty; $1 not given decides the test.
    const auto p = eval("if [ -z $1 ]; then\n  printf \"${ERR}%s must be given\\n\" \"The model\"\n  exit 1\nfi\n");
    EXPECT_EQ(p.exit_line, 3);
    EXPECT_EQ(p.last_said, "The model must be given\n");
    // A word the evaluator cannot know is not remembered; captured output is not said.
    EXPECT_EQ(eval("echo said\necho $(date)\n").last_said, "said");
    EXPECT_EQ(eval("X=$(echo inner)\n").last_said, "");
}

TEST(ShellEval, PathologicalScriptsEndWithAnAnswerOrAnInputError) {
    std::string deep;
    for (int i = 0; i < 5000; ++i) deep += "$(";
    EXPECT_THROW(eval("cmd " + deep + "\n"), InputError);  // unbalanced: an error
    std::string nested = "x";
    for (int i = 0; i < 500; ++i) nested = "\"$(echo " + nested + ")\"";
    EXPECT_THROW(eval("cmd " + nested + "\n"), InputError);  // nested too deep: an error, not a crashed stack
    EXPECT_THROW(eval("for i in $(seq 1 10000); do for j in $(seq 1 10000); do :; done; done\n"), InputError);
    EXPECT_THROW(eval("A=x\nwhile :; do A=\"$A$A\"; done\n"), InputError);  // a value past 1 MiB
    std::string parens(3000, '(');
    EXPECT_THROW(eval("cmd $((" + parens + "1" + std::string(3000, ')') + "))\n"), InputError);
    const auto long_value = eval("A=$(seq 1 5000)\ncmd ${A//1/one}\n");
    EXPECT_EQ(words_of(long_value), (W{"?"}));  // not evaluated: said, not guessed
}

class ShellSource : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("lostflops-shell-source-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_ / "conf");
        write("conf/model.sh", "LAYERS=${LAYERS:-12}\nsource \"$(dirname \"${BASH_SOURCE[0]}\")/deeper.sh\"\n");
        write("conf/deeper.sh", "HIDDEN=768\n");
        write("loop.sh", ". ./loop.sh\n");
        write("escape.sh", "source ../outside.sh\n");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
    ShellRun run(const std::string& script) {
        ShellOptions o;
        o.script_path = (dir_ / "main.sh").string();
        return interop::evaluate_shell(script, "main.sh", o);
    }
    std::filesystem::path dir_;
};

TEST_F(ShellSource, SourcedFilesBesideTheScript) {
    const auto r = run("source conf/model.sh\ncmd $LAYERS $HIDDEN\n");
    EXPECT_EQ(words_of(r), (W{"12", "768"}));
    try {
        run("source ./loop.sh\n");
        FAIL() << "no bound on nested sources";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("more than 8 deep"), std::string::npos) << e.what();
    }
    try {
        run("source escape.sh\n");
        FAIL() << "read a file outside the script's folder";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("outside"), std::string::npos) << e.what();
    }
    EXPECT_THROW(run("source /etc/hostname\n"), InputError);
    EXPECT_THROW(run("source missing.sh\n"), InputError);
    EXPECT_THROW(interop::evaluate_shell("source conf/model.sh\n", "<stdin>", {}), InputError);  // no folder
}

}  // namespace
}  // namespace lostflops::test
