// lostflops: thin front end. Parses the command line, runs one subcommand,
// turns InputError into a message on stderr and exit code 2.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "lostflops/error.h"

int main(int argc, char** argv) {
    CLI::App app{"lostflops: where the compute of large-model training goes"};
    app.require_subcommand(1);
    int exit_code = 0;
    lostflops::cli::add_estimate_command(app, exit_code);
    lostflops::cli::add_validate_command(app, exit_code);
    lostflops::cli::add_trace_command(app, exit_code);
    lostflops::cli::add_calibrate_command(app, exit_code);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    } catch (const lostflops::InputError& e) {
        std::fprintf(stderr, "lostflops: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lostflops: internal error: %s\n", e.what());
        return 1;
    }
    return exit_code;
}
