// lostflops: thin front end. Parses the command line, runs one subcommand and
// ends with its exit code; an error ends it with a message on stderr (and, when
// the subcommand was asked for --format json, a JSON error object on stdout)
// and exit code 2 (bad input) or 3 (internal error). Codes: cli/error_report.h.
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/error_report.h"
#include "cli/progress.h"
#include "cli/version.h"
#include "lostflops/terminal_text.h"
#include "job/did_you_mean.h"

namespace {

// Every subcommand's --help names the codes too.
void add_footers(CLI::App& app) {
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        sub->footer("Exit codes: 0 success, 1 does not fit (estimate, goodput; search: no plan fits), 2 bad input, 3 internal error "
                    "(lostflops --help).\n");
        add_footers(*sub);
    }
}

// The word standing where a subcommand is required that names none ("lostflops
// estimat"), with the nearest command: CLI11 says only "A subcommand is
// required". Empty when the command line names its subcommands.
std::string unknown_subcommand(CLI::App& app, int argc, char** argv) {
    CLI::App* at = &app;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word.empty() || word[0] == '-') continue;  // the root's and groups' flags take no value
        const auto subs = at->get_subcommands([](CLI::App*) { return true; });
        std::vector<std::string> names;
        CLI::App* next = nullptr;
        for (CLI::App* sub : subs) {
            names.push_back(sub->get_name());
            if (sub->get_name() == word) next = sub;
        }
        if (next != nullptr) {
            at = next;
            continue;
        }
        if (at->get_require_subcommand_min() == 0 || names.empty()) return "";
        std::string known;
        for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
        const std::string where = at == &app ? std::string("lostflops") : "lostflops " + at->get_name();
        return "'" + word + "' is not a command of " + where + lostflops::did_you_mean(word, names) + " (commands: " +
               known + ")";
    }
    return "";
}

// A global flag given after the command ("lostflops estimate --strict"),
// which CLI11 answers "The following argument was not expected: --strict":
// where it goes. Empty when the command line has none there.
std::string misplaced_global_flag(int argc, char** argv) {
    std::string command;  // the first word that is not an option: the command
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (command.empty() && !word.empty() && word[0] != '-') command = word;
        if (!command.empty() && (word == "--strict" || word == "--quiet"))
            return word + " is an option of lostflops itself: give it before the command (lostflops " + word + " " +
                   command + " ...)";
    }
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"lostflops: where the compute of large-model training goes"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("lostflops ") + LOSTFLOPS_VERSION + " (git " +
                                          LOSTFLOPS_GIT_REVISION + ")",
                         "print the version and the build's git revision and exit");
    app.footer(lostflops::cli::exit_codes_help());
    // CLI11's message names what the user typed: escaped for the terminal
    // (lostflops/terminal_text.h), as every error of the library is.
    app.failure_message([](const CLI::App* a, const CLI::Error& e) {
        const std::string what = e.what();
        return lostflops::terminal_text(what) + CLI::FailureMessage::simple(a, e).substr(what.size());
    });
    app.add_flag("--strict", lostflops::cli::g_strict,
                 "a model key that changes the cost but is not modelled, and for estimate a plan its framework "
                 "cannot launch (lostflops/framework_rules.h), are errors (warnings otherwise)");
    app.add_flag("--quiet", lostflops::cli::g_quiet,
                 "no progress lines on standard error (they appear after a second on a terminal, every 5 s "
                 "otherwise, for the advice of a plan that does not fit and report --gpus)");
    int exit_code = 0;
    lostflops::cli::add_estimate_command(app, exit_code);
    lostflops::cli::add_validate_command(app, exit_code);
    lostflops::cli::add_trace_command(app, exit_code);
    lostflops::cli::add_calibrate_command(app, exit_code);
    lostflops::cli::add_search_command(app, exit_code);
    lostflops::cli::add_explain_command(app, exit_code);
    lostflops::cli::add_report_command(app, exit_code);
    lostflops::cli::add_goodput_command(app, exit_code);
    lostflops::cli::add_import_command(app, exit_code);
    lostflops::cli::add_export_command(app, exit_code);
    lostflops::cli::add_list_command(app, exit_code);
    add_footers(app);
    lostflops::cli::ErrorReport failure;
    try {
        app.parse(argc, argv);
        return lostflops::cli::finish_stdout(exit_code);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return lostflops::cli::finish_stdout(app.exit(e));  // --help, --version
        failure = lostflops::cli::describe_error(std::current_exception());
        if (const std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty()) {
            failure.message = unknown;
            failure.line = "lostflops: error: " + lostflops::terminal_text(unknown);
            std::fprintf(stderr, "%s\n", failure.line.c_str());
        } else if (const std::string global = misplaced_global_flag(argc, argv);
                   !global.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
            failure.message = global;
            failure.line = "lostflops: error: " + lostflops::terminal_text(global);
            std::fprintf(stderr, "%s\n", failure.line.c_str());
        } else {
            app.exit(e);  // the message and "Run with --help" on stderr
        }
    } catch (...) {
        failure = lostflops::cli::describe_error(std::current_exception());
        std::fprintf(stderr, "%s\n", failure.line.c_str());
    }
    if (lostflops::cli::requested_format(app) == lostflops::cli::Format::json)
        std::printf("%s\n", lostflops::cli::error_json(failure).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return lostflops::cli::finish_stdout(static_cast<int>(failure.code));
}
