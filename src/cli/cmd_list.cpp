// `lostflops list KIND`: what the built-in catalogs hold, one subcommand per
// kind of the library's table (lostflops/command_reports.h catalog_kinds,
// src/report/catalog_list.cpp renders them).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "lostflops/command_reports.h"

namespace lostflops::cli {

void add_list_command(CLI::App& app, int& exit_code) {
    (void)exit_code;
    auto* cmd = app.add_subcommand("list", "what the built-in catalogs hold");
    cmd->require_subcommand(1);
    for (const CatalogKind& k : catalog_kinds()) {
        auto format = std::make_shared<Format>(Format::table);
        auto* sub = cmd->add_subcommand(k.name, k.help);
        add_format_option(sub, *format);
        sub->callback([format, name = std::string(k.name)] {
            const std::string text = catalog_list(name, *format == Format::json);
            // JSON ends without a newline (puts added it); the tables end with one.
            std::fputs(text.c_str(), stdout);
            if (*format == Format::json) std::fputc('\n', stdout);
        });
    }
}

}  // namespace lostflops::cli
