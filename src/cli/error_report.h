// How the executable ends: its exit codes, and an error turned into the line
// printed on stderr and, with --format json, a JSON object on stdout.
#pragma once

#include <exception>
#include <string>

#include <nlohmann/json.hpp>

namespace lostflops::cli {

// Listed in `lostflops --help` and docs/commands.md ("Exit codes").
enum class ExitCode : int {
    ok = 0,
    does_not_fit = 1,    // estimate: the plan does not fit in GPU memory (the estimate is still printed)
    bad_input = 2,       // InputError (job, table, trace, profile) or a command-line error
    internal_error = 3,  // anything else: a bug, or out of memory
};

// The footer of `lostflops --help`.
std::string exit_codes_help();

struct ErrorReport {
    ExitCode code = ExitCode::internal_error;
    std::string kind;     // "bad_input" or "internal_error"
    std::string file;     // InputError::file(); empty otherwise
    std::string key;      // InputError::key(); empty otherwise
    std::string message;  // what was wrong, without file and key
    std::string line;     // the whole line for stderr, "lostflops: ..." without the newline
};

// Classifies an exception: InputError and CLI::ParseError are bad input (2),
// std::bad_alloc and any other exception an internal error (3).
ErrorReport describe_error(const std::exception_ptr& error);

// {"schema_version": N, "error": {"kind", "file", "key", "message", "exit_code"}}
nlohmann::json error_json(const ErrorReport& r);

}  // namespace lostflops::cli
