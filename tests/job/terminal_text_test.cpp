// terminal_text (lostflops/terminal_text.h), the one function that makes text
// from the input safe for a terminal (issue 36 item 8): every control, C1
// control, line separator and byte that is not UTF-8 comes out as a visible
// escape; other text, multi-byte UTF-8 included, as it is.
#include <string>

#include <gtest/gtest.h>

#include "lostflops/terminal_text.h"

namespace lostflops {
namespace {

TEST(TerminalText, PlainAndUtf8TextIsUnchanged) {
    EXPECT_EQ(terminal_text("llama3-8b on 8 x h100"), "llama3-8b on 8 x h100");
    EXPECT_EQ(terminal_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
    EXPECT_EQ(terminal_text(""), "");
}

TEST(TerminalText, ControlsBecomeVisibleEscapes) {
    EXPECT_EQ(terminal_text("a\nb\rc\td"), "a\\nb\\rc\\td");
    EXPECT_EQ(terminal_text("x\x1b]0;pwned\ay"), "x\\x1b]0;pwned\\x07y");
    EXPECT_EQ(terminal_text(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7f");
    EXPECT_EQ(terminal_text("c1 \xc2\x9b" "31m nel \xc2\x85"), "c1 \\u009b31m nel \\u0085");
    EXPECT_EQ(terminal_text("ls\xe2\x80\xa8ps\xe2\x80\xa9"), "ls\\u2028ps\\u2029");
}

TEST(TerminalText, BytesThatAreNotUtf8BecomeEscapes) {
    EXPECT_EQ(terminal_text("bad\xff\xfe"), "bad\\xff\\xfe");
    EXPECT_EQ(terminal_text("cut \xc3"), "cut \\xc3");                     // a sequence cut short
    EXPECT_EQ(terminal_text("over \xc0\xaf"), "over \\xc0\\xaf");           // overlong '/'
    EXPECT_EQ(terminal_text("sur \xed\xa0\x80"), "sur \\xed\\xa0\\x80");    // a surrogate
}

TEST(TerminalText, ResultIsOneLineWithNoControlByte) {
    std::string all;
    for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
    const std::string out = terminal_text(all);
    for (unsigned char c : out) EXPECT_TRUE(c >= 0x20 && c != 0x7f) << int(c);
}

}  // namespace
}  // namespace lostflops
