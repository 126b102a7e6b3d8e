// Running the built executable from a test: exit code, standard output and
// standard error apart (a JSON document on stdout must parse on its own).
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace lostflops::test {

struct CliRun {
    int code = -1;
    std::string out;  // standard output
    std::string err;  // standard error
    std::string all() const { return out + err; }
};

inline CliRun run_cli(const std::string& args) {
    CliRun r;
    char err_path[] = "/tmp/lostflops-cli-stderr-XXXXXX";
    const int fd = mkstemp(err_path);
    if (fd < 0) return r;
    close(fd);
    const std::string cmd = std::string(LOSTFLOPS_BINARY) + " " + args + " 2>" + err_path;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        std::array<char, 4096> buf{};
        size_t n;
        while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
        const int status = pclose(p);
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::ifstream in(err_path, std::ios::binary);
    r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::remove(err_path);
    return r;
}

// Standard output of a shell command (not the executable), e.g. git.
inline std::string shell_output(const std::string& cmd, int* code = nullptr) {
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        std::array<char, 4096> buf{};
        size_t n;
        while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
        const int status = pclose(p);
        if (code) *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    return out;
}

// A folder of its own under the temporary folder (with runs/, for
// validate's tables), removed with what it holds at the end of the test.
class CliScratch : public ::testing::Test {
public:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               (std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) + "-" +
                std::to_string(getpid()));
        std::filesystem::create_directories(dir_ / "runs");
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    // Writes `text` to the folder's `name` (its folders made) and returns the path.
    std::string write(const std::string& name, const std::string& text) {
        const std::filesystem::path p = dir_ / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    }
    std::string slurp(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    std::filesystem::path dir_;
};

}  // namespace lostflops::test
