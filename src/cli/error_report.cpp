// Exit codes of the executable and the report of an error that ends it
// (stderr line, JSON object for --format json). See error_report.h.
#include "cli/error_report.h"

#include <new>

#include <CLI/CLI.hpp>

#include "lostflops/error.h"
#include "lostflops/report.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

std::string exit_codes_help() {
    return "Exit codes:\n"
           "  0  success\n"
           "  1  estimate: the plan does not fit in GPU memory (the estimate is still printed); search: no plan fits;\n"
           "     a job that leaves its plan to the search (no parallel section, --best): no plan fits\n"
           "  2  bad input: a job, table, trace, profile or command line that cannot be used,\n"
           "     or an output that cannot be written (standard output included)\n"
           "     (message on stderr; with --format json also {\"error\": ...} on stdout)\n"
           "  3  internal error: a bug, or out of memory\n"
           "  130 search: stopped by Ctrl-C (the best plans so far are printed)\n";
}

ErrorReport describe_error(const std::exception_ptr& error) {
    ErrorReport r;
    try {
        std::rethrow_exception(error);
    } catch (const NoPlanFits& e) {
        r = {ExitCode::does_not_fit, "does_not_fit", e.file(), e.key(), e.message(),
             "lostflops: error: " + terminal_text(e.what())};
    } catch (const InputError& e) {
        r = {ExitCode::bad_input, "bad_input", e.file(), e.key(), e.message(),
             "lostflops: error: " + terminal_text(e.what())};
    } catch (const CLI::ParseError& e) {
        r = {ExitCode::bad_input, "bad_input", "", "", e.what(), "lostflops: error: " + terminal_text(e.what())};
    } catch (const std::bad_alloc&) {
        r.kind = "internal_error";
        r.message = "out of memory (std::bad_alloc)";
    } catch (const std::exception& e) {
        r.kind = "internal_error";
        r.message = e.what();
    } catch (...) {
        r.kind = "internal_error";
        r.message = "unknown exception";
    }
    if (r.code == ExitCode::internal_error) r.line = "lostflops: internal error: " + terminal_text(r.message);
    return r;
}

nlohmann::json error_json(const ErrorReport& r) {
    return {{"schema_version", kJsonSchemaVersion},
            {"error",
             {{"kind", r.kind},
              {"file", r.file},
              {"key", r.key},
              {"message", r.message},
              {"exit_code", static_cast<int>(r.code)}}}};
}

}  // namespace lostflops::cli
