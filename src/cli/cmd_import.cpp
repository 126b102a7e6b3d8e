// `lostflops import {megatron,torchtitan} FILE|-`: another framework's launch
// settings -> our job file on standard output; what could not be carried over
// on standard error, one line per setting ("lostflops: not modelled: --flag:
// why"). The library does the work (interop.h); this file reads and prints.
#include <cstdio>

#include "cli/commands.h"
#include "lostflops/interop.h"
#include "spec/hardware_bounds.h"
#include "spec/text_input.h"

namespace lostflops::cli {

namespace {

struct ImportArgs {
    std::string path;
    ImportOptions options;
};

void add_import_kind(CLI::App* parent, const char* kind, const char* what, const char* file_help, const char* content,
                     ImportResult (*run)(const std::string&, const std::string&, const ImportOptions&)) {
    auto a = std::make_shared<ImportArgs>();
    auto* cmd = parent->add_subcommand(kind, what);
    cmd->add_option("file", a->path, file_help)->required();
    // The job file's ranges (spec/job_sections.cpp): 1 to 1,000,000 GPUs, 1 to 1,024 a node.
    cmd->add_option("--num-gpus", a->options.num_gpus, "GPUs of the run, when the input does not say")
        ->check(CLI::Range(1, static_cast<int>(bounds::kMaxGpus)));
    cmd->add_option("--gpus-per-node", a->options.gpus_per_node, "GPUs per node, when the input does not say")
        ->check(CLI::Range(1, 1024));
    cmd->callback([a, run, content] {
        check_input_path(a->path, content);
        const std::string text = read_text_file(a->path, kMaxJobBytes, content);
        const ImportResult r = run(text, input_name(a->path), a->options);
        for (const auto& n : r.notes)
            std::fprintf(stderr, "lostflops: %s: %s: %s\n", to_string(n.kind), n.setting.c_str(), n.message.c_str());
        std::fwrite(r.job_yaml.data(), 1, r.job_yaml.size(), stdout);
    });
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
    (void)exit_code;  // 0 unless an error is thrown
    auto* cmd = app.add_subcommand("import", "another framework's launch settings -> a job file (YAML) on standard output");
    cmd->require_subcommand(1);
    add_import_kind(cmd, "megatron", "Megatron-LM / Megatron-Core launch command or flags",
                    "launch script or argument list (- for standard input)", "Megatron launch script", import_megatron);
    add_import_kind(cmd, "torchtitan", "torchtitan job config (TOML)", "torchtitan .toml (- for standard input)",
                    "torchtitan config", import_torchtitan);
}

}  // namespace lostflops::cli
