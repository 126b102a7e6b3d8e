// The shared file intake (job/text_input.h): what each kind of path is
// called, the size bound, the byte-order mark, empty and binary text.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "job/text_input.h"

namespace lostflops {
namespace {

namespace fs = std::filesystem;

class TextInput : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("lostflops-text-" + std::to_string(getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    std::string write(const std::string& name, const std::string& bytes) const {
        const fs::path p = dir_ / name;
        std::ofstream(p, std::ios::binary) << bytes;
        return p.string();
    }
    // The message of reading `path`, or "" when it was read.
    static std::string error_of(const std::string& path, std::size_t max_bytes = kMaxJobBytes) {
        try {
            read_text_file(path, max_bytes, "job file");
        } catch (const InputError& e) {
            EXPECT_EQ(e.file(), path);
            return e.message();
        }
        return "";
    }
    fs::path dir_;
};

TEST_F(TextInput, EachKindOfPathIsNamed) {
    EXPECT_NE(error_of(dir_.string()).find("is a directory"), std::string::npos);
    EXPECT_NE(error_of("/dev/zero").find("is a character device"), std::string::npos);
    const std::string fifo = (dir_ / "pipe").string();
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_NE(error_of(fifo).find("named pipe"), std::string::npos);
    const fs::path a = dir_ / "a", b = dir_ / "b";
    fs::create_symlink(b, a);
    EXPECT_NE(error_of(a.string()).find("dangling symbolic link"), std::string::npos);
    fs::create_symlink(a, b);
    EXPECT_NE(error_of(a.string()).find("symbolic link loop"), std::string::npos);
    EXPECT_NE(error_of((dir_ / "missing.yaml").string()).find("no such file"), std::string::npos);
    const std::string file = write("f.yaml", "a: 1\n");
    EXPECT_NE(error_of(file + "/x").find("not a directory"), std::string::npos);
    // Every message says what was expected.
    EXPECT_NE(error_of(dir_.string()).find("job file"), std::string::npos);
}

// Issue 20 item 13: a 4 MB one-line string given to Python as a job is a
// path; the error names its start and length instead of echoing it whole.
TEST_F(TextInput, OverlongFileNameIsNamedByItsStart) {
    const std::string name = "x: [" + std::string(4'000'000, '1') + "]";
    try {
        read_text_file(name, kMaxJobBytes, "job file");
        ADD_FAILURE() << "read";
    } catch (const InputError& e) {
        EXPECT_LT(std::string(e.what()).size(), 300u);
        EXPECT_EQ(e.file().substr(0, 6), "x: [11");
        EXPECT_NE(e.message().find("4000005 bytes, longer than PATH_MAX"), std::string::npos) << e.message();
    }
}

TEST_F(TextInput, SizeBoundHoldsWhateverTheFileReports) {
    const std::string ten = write("ten.yaml", "a: 123456\n");
    EXPECT_EQ(error_of(ten, 10), "");
    EXPECT_NE(error_of(ten, 9).find("more than 9 bytes"), std::string::npos);
    // A sparse file larger than the bound is refused without reading it all.
    const std::string big = write("big.yaml", "");
    fs::resize_file(big, std::uintmax_t{8} << 30);
    EXPECT_NE(error_of(big).find("more than"), std::string::npos);
}

TEST_F(TextInput, ByteOrderMarkIsDroppedEmptyAndBinaryAreNamed) {
    EXPECT_EQ(read_text_file(write("bom.yaml", "\xEF\xBB\xBFname: x\n")), "name: x\n");
    EXPECT_EQ(error_of(write("empty.yaml", "")), "file is empty");
    EXPECT_EQ(error_of(write("blank.yaml", " \n\t\n")), "file holds only white space");
    EXPECT_NE(error_of(write("nul.yaml", std::string("a: 1\n\0", 6))).find("control byte 0x00"),
              std::string::npos);
    EXPECT_NE(error_of(write("latin1.yaml", "name: caf\xE9\n")).find("invalid UTF-8"), std::string::npos);
    EXPECT_EQ(input_name("-"), kStdinName);
}

// Only well-formed UTF-8 (Unicode 15, Table 3-7): the JSON writer refused
// the overlong, surrogate and beyond-U+10FFFF forms the lead-byte check let
// through, an internal error (exit 3) for `estimate --format json`.
TEST_F(TextInput, OnlyWellFormedUtf8IsText) {
    for (const char* bad : {"\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF0\x80\x80\x80",
                            "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xE2\x82", "\xBF"})
        EXPECT_NE(error_of(write("bad.yaml", std::string("name: x") + bad + "\n")).find("invalid UTF-8"),
                  std::string::npos)
            << "accepted: " << testing::PrintToString(std::string(bad));
    // The edges of each range: U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
    for (const char* good : {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
                             "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"})
        EXPECT_EQ(error_of(write("good.yaml", std::string("name: x") + good + "\n")), "")
            << "refused: " << testing::PrintToString(std::string(good));
}

}  // namespace
}  // namespace lostflops
