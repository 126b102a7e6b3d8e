// The CSV reader of every table (run tables, component tables, the residual
// table): the line each row starts on, and what a number cell may be. Before
// (2026-12-06): errors named a row's index, not its line, so a table with a
// blank line or a quoted note over two lines sent the reader to the wrong
// line; and strtod read "0x2448" as 9288 and " 12" as 12.
#include <gtest/gtest.h>

#include "lostflops/validate.h"

namespace lostflops::test {
namespace {

TEST(TableCsv, EachRowKnowsTheLineItStartsOn) {
    std::vector<std::size_t> lines;
    const std::string text = "\nname,note\r\na,\"two\nlines\"\n\n\nb,x\nc,y";
    const auto rows = parse_csv(text, "t.csv", &lines);
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[1][1], "two\nlines");
    // header after one blank line; a on 3 (its note runs to 4); two blank
    // lines; b on 7; c on 8, with no final newline.
    EXPECT_EQ(lines, (std::vector<std::size_t>{2, 3, 7, 8}));
    // Without the out-parameter the rows are the same.
    EXPECT_EQ(parse_csv(text, "t.csv"), rows);
}

TEST(TableCsv, ANumberCellIsADecimalAndNothingElse) {
    EXPECT_EQ(parse_table_number("1297"), 1297.0);
    EXPECT_EQ(parse_table_number("-4.5"), -4.5);
    EXPECT_EQ(parse_table_number("2.5e3"), 2500.0);
    EXPECT_EQ(parse_table_number("0.25"), 0.25);
    for (const char* bad : {"", "0x2448", " 12", "12 ", "+12", "12abc", "inf", "nan", "1e999", "1,000"})
        EXPECT_FALSE(parse_table_number(bad).has_value()) << "'" << bad << "'";
}

}  // namespace
}  // namespace lostflops::test
