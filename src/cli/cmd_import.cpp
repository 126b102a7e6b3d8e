// `lostflops import {megatron,torchtitan,maxtext} FILE|-`: another framework's launch
// settings -> our job file on standard output; what could not be carried over
// on standard error, one line per setting ("lostflops: warning: not modelled:
// --flag: why", "lostflops: ignored: --lr: why"). Launch scripts are
// evaluated, never run: --env, --var and --arg give what the script would get
// from its environment and command line. The library does the work
// (interop.h); this file reads and prints.
#include <cstdio>

#include "cli/commands.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/terminal_text.h"
#include "job/hardware_bounds.h"
#include "job/text_input.h"

namespace lostflops::cli {

namespace {

struct ImportArgs {
    std::string path;
    std::vector<std::string> env, vars;
    ImportOptions options;
};

std::vector<std::pair<std::string, std::string>> assignments(const std::vector<std::string>& given, const char* flag) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& g : given) {
        const auto eq = g.find('=');
        if (eq == std::string::npos || eq == 0)
            throw InputError(std::string(flag) + " " + g, "", "expected NAME=VALUE");
        out.emplace_back(g.substr(0, eq), g.substr(eq + 1));
    }
    return out;
}

void print_note(const ImportNote& n) {
    const bool warning = n.kind == NoteKind::not_modelled || n.kind == NoteKind::unknown;
    std::fprintf(stderr, "lostflops: %s%s: %s: %s\n", warning ? "warning: " : "", to_string(n.kind),
                 terminal_text(n.setting).c_str(), terminal_text(n.message).c_str());
}

void add_import_kind(CLI::App* parent, const char* kind, const char* what, const char* file_help, const char* content,
                     ImportResult (*run)(const std::string&, const std::string&, const ImportOptions&)) {
    auto a = std::make_shared<ImportArgs>();
    auto* cmd = parent->add_subcommand(kind, what);
    cmd->add_option("file", a->path, file_help)->required();
    // The job file's ranges (job/job_sections.cpp): 1 to 1,000,000 GPUs, 1 to 1,024 a node.
    cmd->add_option("--num-gpus", a->options.num_gpus, "GPUs of the run, when the input does not say")
        ->check(whole_number())->check(CLI::Range(1, static_cast<int>(bounds::kMaxGpus)));
    cmd->add_option("--gpus-per-node", a->options.gpus_per_node, "GPUs per node, when the input does not say")
        ->check(whole_number())->check(CLI::Range(1, 1024));
    cmd->add_option("--env", a->env, "NAME=VALUE in the script's environment (its own assignments win; repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--var", a->vars, "NAME=VALUE fixed: the script's own assignments to NAME are skipped (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--arg", a->options.args, "the script's next positional argument: $1, $2, ... (repeatable)")
        ->allow_extra_args(false);
    cmd->add_flag("--strict", a->options.strict, "a setting lostflops does not model or know is an error");
    cmd->callback([a, run, content] {
        check_input_path(a->path, content);
        const std::string text = read_text_file(a->path, kMaxJobBytes, content);
        ImportOptions o = a->options;
        o.env = assignments(a->env, "--env");
        o.vars = assignments(a->vars, "--var");
        if (a->path != "-") o.script_path = a->path;
        const ImportResult r = run(text, input_name(a->path), o);
        for (const auto& n : r.notes) print_note(n);
        std::fwrite(r.job_yaml.data(), 1, r.job_yaml.size(), stdout);
    });
}

// MaxText: a config and the TPUs it runs on (the config does not name them).
void add_maxtext_kind(CLI::App* parent) {
    auto a = std::make_shared<ImportArgs>();
    auto* cmd = parent->add_subcommand("maxtext", "MaxText config (base.yml-style keys) on Cloud TPU slices (docs/tpu.md)");
    cmd->add_option("file", a->path, "MaxText .yml config (- for standard input)")->required();
    cmd->add_option("--tpu", a->options.tpu, "the slice type: v4-N, v5p-N (TensorCores), v5e-N, v6e-N (chips)")->required();
    cmd->add_option("--slices", a->options.slices, "slices joined by the data-centre network (default: num_slices, else 1)")
        ->check(whole_number())->check(CLI::Range(1, 65536));
    cmd->add_option("--set", a->options.overrides, "KEY=VALUE over the config, as train.py takes them (repeatable)")
        ->allow_extra_args(false);
    cmd->add_flag("--strict", a->options.strict, "a setting lostflops does not model is an error");
    cmd->callback([a] {
        check_input_path(a->path, "MaxText config");
        const std::string text = read_text_file(a->path, kMaxJobBytes, "MaxText config");
        const ImportResult r = import_maxtext(text, input_name(a->path), a->options);
        for (const auto& n : r.notes) print_note(n);
        std::fwrite(r.job_yaml.data(), 1, r.job_yaml.size(), stdout);
    });
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
    (void)exit_code;  // 0 unless an error is thrown
    auto* cmd = app.add_subcommand("import", "another framework's launch settings -> a job file (YAML) on standard output");
    cmd->require_subcommand(1);
    add_import_kind(cmd, "megatron",
                    "Megatron-LM / Megatron-Core launch script (evaluated, never run), argument list, or CI model_config.yaml",
                    "launch script, argument list or model_config.yaml (- for standard input)", "Megatron launch script",
                    import_megatron);
    add_import_kind(cmd, "torchtitan", "torchtitan job config (TOML) or launch command", "torchtitan .toml or launch script (- for standard input)",
                    "torchtitan config", import_torchtitan);
    add_maxtext_kind(cmd);
}

}  // namespace lostflops::cli
