// torchtitan command lines (torchtitan_command.h). The launch script is
// evaluated (shell_eval.h) and its training command found
// (launch_command.h); its arguments are read as torchtitan's parser reads
// them: `--job.config_file FILE` (torchtitan/config/manager.py before
// 9810191b) or `--module M --config C` (after: "Both --module and --config
// are required"), then tyro's `--section.key value`, `--section.key=value`,
// `--section.flag` / `--section.no-flag` for booleans, several values for a
// list, '-' and '_' alike in names.
//
// The Python configurations lostflops knows, from
// torchtitan/models/llama3/config_registry.py at 9810191b (2026-02-23; the
// same settings at b5bcd76c, 2026-08, given as tokens per micro-batch):
// llama3_8b (8B, local batch 1, seq 8192, 1000 steps,
// selective AC per op), llama3_70b (70B, local batch 8, seq 8192, 1000 steps,
// tp 8, full AC), llama3_405b (405B, local batch 2, seq 8192, 3000 steps,
// tp 8 with async TP, full AC, compile, float8 with FSDP float8 all-gather).
#include "interop/torchtitan_command.h"

#include <cctype>
#include <filesystem>
#include <map>

#include "interop/launch_command.h"
#include "shell/shell_eval.h"
#include "lostflops/error.h"
#include "job/text_input.h"

namespace lostflops::interop {

namespace {

TomlValue str(const char* s) { return {std::string(s), 0}; }
TomlValue num(int64_t v) { return {v, 0}; }
TomlValue yes() { return {true, 0}; }

struct KnownConfig {
    const char* module;
    const char* config;
    std::vector<std::pair<const char*, TomlValue>> keys;
};

const std::vector<KnownConfig>& known_configs() {
    static const std::vector<KnownConfig> kConfigs = {
        {"llama3", "llama3_8b",
         {{"model.name", str("llama3")}, {"model.flavor", str("8B")}, {"training.local_batch_size", num(1)},
          {"training.seq_len", num(8192)}, {"training.steps", num(1000)},
          {"activation_checkpoint.mode", str("selective")}, {"activation_checkpoint.selective_ac_option", str("op")}}},
        {"llama3", "llama3_70b",
         {{"model.name", str("llama3")}, {"model.flavor", str("70B")}, {"training.local_batch_size", num(8)},
          {"training.seq_len", num(8192)}, {"training.steps", num(1000)},
          {"parallelism.tensor_parallel_degree", num(8)}, {"activation_checkpoint.mode", str("full")}}},
        {"llama3", "llama3_405b",
         {{"model.name", str("llama3")}, {"model.flavor", str("405B")}, {"training.local_batch_size", num(2)},
          {"training.seq_len", num(8192)}, {"training.steps", num(3000)},
          {"parallelism.tensor_parallel_degree", num(8)}, {"parallelism.enable_async_tensor_parallel", yes()},
          {"activation_checkpoint.mode", str("full")}, {"compile.enable", yes()},
          {"model.converters", {std::vector<TomlValue>{str("float8")}, 0}},
          {"float8.enable_fsdp_float8_all_gather", yes()}}},
    };
    return kConfigs;
}

std::string base_name(const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

// An override's text as TOML would type it.
TomlValue typed(const ShellField& f) {
    const std::string& t = f.text;
    if (t == "true" || t == "True") return {true, f.line};
    if (t == "false" || t == "False") return {false, f.line};
    try {
        size_t used = 0;
        const long long i = std::stoll(t, &used);
        if (used == t.size()) return {static_cast<int64_t>(i), f.line};
        const double d = std::stod(t, &used);
        if (used == t.size()) return {d, f.line};
    } catch (const std::exception&) {
    }
    return {t, f.line};
}

std::string key_of(std::string k) {
    for (auto& c : k)
        if (c == '-') c = '_';
    return k;
}

}  // namespace

bool looks_like_toml(const std::string& text) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        std::string l = text.substr(pos, nl - pos);
        pos = nl + 1;
        const auto first = l.find_first_not_of(" \t\r");
        if (first == std::string::npos || l[first] == '#') continue;
        const auto last = l.find_last_not_of(" \t\r");
        if (l[first] == '[' && l[last] == ']') return true;
    }
    return false;
}

TorchtitanCommand torchtitan_command(const std::string& text, const std::string& source, const ImportOptions& options,
                                     std::vector<ImportNote>& notes) {
    const ShellOptions so{options.script_path, options.env, options.vars, options.args};
    const ShellRun run = evaluate_shell(text, source, so);
    const auto launch = find_launch(run, source);
    if (!launch || (launch->program != "torchtitan.train" && base_name(launch->program) != "train.py"))
        throw InputError(source, "", "no torchtitan training command (torchrun ... -m torchtitan.train, or a TOML job config)");
    TorchtitanCommand cmd;
    cmd.num_gpus = launch->num_gpus;
    cmd.gpus_from = launch->gpus_from;
    const std::vector<ShellField>& a = launch->args;
    std::vector<std::pair<std::string, std::vector<ShellField>>> given;
    for (size_t i = 0; i < a.size(); ++i) {
        const std::string& w = a[i].text;
        if (w.size() < 3 || w.compare(0, 2, "--") != 0) {
            notes.push_back({NoteKind::unknown, w, "a word that is not an option nor an option's value"});
            continue;
        }
        const auto eq = w.find('=');
        std::vector<ShellField> values;
        if (eq != std::string::npos) values.push_back({w.substr(eq + 1), a[i].unknown, a[i].line});
        while (eq == std::string::npos && i + 1 < a.size() && a[i + 1].text.compare(0, 2, "--") != 0) values.push_back(a[++i]);
        given.emplace_back(key_of(w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)), std::move(values));
    }
    // The context length has two names since 2026: both given is ambiguous
    // (the TOML reader refuses the same, torchtitan_import.cpp).
    const auto given_value = [&](const char* key) -> const ShellField* {
        for (const auto& [k, v] : given)
            if (k == key && !v.empty()) return &v.back();
        return nullptr;
    };
    if (const ShellField* mcl = given_value("training.max_context_length"))
        if (const ShellField* seq = given_value("training.seq_len"))
            throw InputError(source, "--training.max_context_length",
                             "'" + mcl->text + "' and --training.seq_len '" + seq->text +
                                 "' are the same setting (the context length); give one");
    std::string module, config, file;
    for (const auto& [k, v] : given) {
        if (v.size() == 1 && v[0].known() && k == "module") module = v[0].text;
        if (v.size() == 1 && v[0].known() && k == "config") config = v[0].text;
        if (v.size() == 1 && v[0].known() && k == "job.config_file") file = v[0].text;
    }
    if (!file.empty()) {
        if (options.script_path.empty())
            throw InputError(source, "--job.config_file", "cannot read " + file + ": the script came from standard input");
        std::string error;
        const std::string path = file_inside(std::filesystem::absolute(options.script_path).parent_path().lexically_normal().string(),
                                             std::filesystem::absolute(options.script_path).parent_path().string(), file, error);
        if (path.empty()) throw InputError(source, "--job.config_file " + file, error);
        cmd.table = parse_toml_subset(read_text_file(path, kMaxJobBytes, "torchtitan config"), file);
        cmd.base = file;
    } else if (!config.empty()) {
        for (const auto& c : known_configs())
            if (config == c.config && (module.empty() || module == c.module)) {
                for (const auto& [k, v] : c.keys) cmd.table[k] = v;
                cmd.base = config + " (torchtitan config_registry.py)";
            }
        if (cmd.base.empty()) {
            for (const auto& c : known_configs())
                if (config == c.config)
                    throw InputError(source, "--module " + module,
                                     "--config " + config + " is a configuration of module " + c.module +
                                         " (torchtitan config_registry.py), not of " + module +
                                         ": give --module " + c.module + ", or write the job file");
            std::string known;
            for (const auto& c : known_configs()) known += (known.empty() ? "" : ", ") + std::string(c.config);
            throw InputError(source, "--config " + config,
                             "a Python configuration lostflops cannot read without running it; it knows " + known +
                                 " (torchtitan config_registry.py): write the job file, or give a TOML base with "
                                 "--job.config_file");
        }
        notes.push_back({NoteKind::assumed, "--config " + config,
                         "its settings from lostflops' table of torchtitan's configurations (src/interop/torchtitan_command.cpp)"});
    } else {
        throw InputError(source, "--module", "neither --module/--config nor --job.config_file: no base configuration");
    }
    // An override given twice: the last counts, as argparse (torchtitan's
    // config_manager.py; tyro since 2026 builds on it) takes it; said, as
    // import megatron says it (megatron_args.cpp).
    std::map<std::string, std::string> said;
    for (const auto& [k, v] : given) {
        if (k == "module" || k == "config" || k == "job.config_file") continue;
        for (const auto& f : v)
            if (!f.known()) throw InputError(source, "--" + k, "cannot evaluate: its value is " + f.unknown);
        std::string text;
        for (const auto& f : v) text += (text.empty() ? "" : " ") + f.text;
        if (const auto it = said.find(k); it != said.end() && it->second != text)
            notes.push_back({NoteKind::assumed, "--" + k,
                             "given twice ('" + it->second + "', then '" + text + "'): the last counts, as argparse takes it"});
        said[k] = text;
        std::string key = k;
        const auto dot = key.rfind('.');
        const bool negated = dot != std::string::npos && key.compare(dot + 1, 3, "no_") == 0;
        if (negated) key.erase(dot + 1, 3);
        TomlValue value;
        if (v.empty()) value = {!negated, v.empty() ? 0 : v[0].line};
        else if (v.size() == 1) value = typed(v[0]);
        else {
            std::vector<TomlValue> items;
            for (const auto& f : v) items.push_back(typed(f));
            value = {items, v[0].line};
        }
        // Since 2026 torchtitan counts tokens: an override of either form
        // replaces the base's setting of the other (torchtitan_import.cpp
        // converts them).
        if (key == "training.max_context_length") key = "training.seq_len";
        if (key == "training.num_tokens_per_microbatch_per_dp_rank") cmd.table.erase("training.local_batch_size");
        if (key == "training.local_batch_size") cmd.table.erase("training.num_tokens_per_microbatch_per_dp_rank");
        cmd.table[key] = value;
    }
    return cmd;
}

}  // namespace lostflops::interop
