// main()'s classification of what ends the executable (src/cli/error_report.cpp):
// an internal error has its own exit code, never "does not fit".
#include <new>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "cli/error_report.h"
#include "lostflops/error.h"

namespace lostflops::cli {
namespace {

template <typename E>
ErrorReport report_of(const E& e) {
    return describe_error(std::make_exception_ptr(e));
}

TEST(ErrorReport, InternalErrorsHaveTheirOwnCode) {
    EXPECT_NE(static_cast<int>(ExitCode::internal_error), static_cast<int>(ExitCode::does_not_fit));
    EXPECT_NE(static_cast<int>(ExitCode::internal_error), static_cast<int>(ExitCode::bad_input));
    const ErrorReport oom = report_of(std::bad_alloc());
    EXPECT_EQ(oom.code, ExitCode::internal_error);
    EXPECT_NE(oom.line.find("internal error"), std::string::npos) << oom.line;
    EXPECT_NE(oom.line.find("out of memory"), std::string::npos) << oom.line;
    const ErrorReport bug = report_of(std::logic_error("index 7 out of range"));
    EXPECT_EQ(bug.code, ExitCode::internal_error);
    EXPECT_NE(bug.line.find("index 7 out of range"), std::string::npos) << bug.line;
    EXPECT_EQ(describe_error(std::make_exception_ptr(42)).code, ExitCode::internal_error);
}

TEST(ErrorReport, BadInputIsTwoWithFileAndKey) {
    const ErrorReport in = report_of(InputError("job.yaml", "parallel.tp", "3 does not divide 64 heads"));
    EXPECT_EQ(static_cast<int>(in.code), 2);
    EXPECT_EQ(in.file, "job.yaml");
    EXPECT_EQ(in.key, "parallel.tp");
    EXPECT_EQ(in.message, "3 does not divide 64 heads");
    EXPECT_EQ(in.line, "lostflops: error: job.yaml: parallel.tp: 3 does not divide 64 heads");
    const auto j = error_json(in);
    EXPECT_EQ(j["error"]["exit_code"], 2);
    EXPECT_EQ(j["error"]["key"], "parallel.tp");
    EXPECT_TRUE(j["schema_version"].is_number_integer());
    EXPECT_EQ(report_of(CLI::ExtrasError({"--bogus"})).code, ExitCode::bad_input);
}

}  // namespace
}  // namespace lostflops::cli
