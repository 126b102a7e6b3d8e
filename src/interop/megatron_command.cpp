// The Megatron training command of an input (megatron_command.h). A CI
// model_config.yaml becomes words as Megatron's CI turns it into a command
// line (tests/functional_tests/shell_test_utils/_run_training.sh: `true`
// gives the flag alone, an empty value drops the key, a list gives its
// elements); a launch script is evaluated (shell_eval.h) and its training
// command found (launch_command.h).
#include "interop/megatron_command.h"

#include <yaml-cpp/yaml.h>

#include "interop/launch_command.h"
#include "job/yaml_document.h"
#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

std::string base_name(const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

ShellField ci_value(const YAML::Node& v, const std::string& key) {
    const std::string s = v.Scalar();
    if (s.find('$') != std::string::npos)
        return {"", "the CI variable in '" + s + "' (" + key + ")", v.Mark().line + 1};
    return {s, "", v.Mark().line + 1};
}

MegatronCommand ci_words(const YAML::Node& root, const std::string& source, std::vector<ImportNote>& notes);

MegatronCommand ci_command(const std::string& text, const std::string& source, std::vector<ImportNote>& notes) {
    // yaml-cpp throws on a subscript of a scalar or an iteration of a node it
    // cannot give (a first document that is not a mapping, "a\n---\nMODEL_ARGS:"):
    // every such exception is the input's fault, not ours.
    // load_yaml_document: a key given twice with two values is an error
    // (yaml-cpp keeps both and MODEL_ARGS' walk read both,
    // `--sequence-parallel: true` then `false` as true; Megatron's CI,
    // PyYAML, keeps the last), as in a job; twice with one value says nothing.
    try {
        const YAML::Node root = load_yaml_document(text, source, "", Duplicates::same_ok);
        if (!root.IsMap())
            throw InputError(source, "line 1", "a Megatron CI configuration: expected a mapping with MODEL_ARGS in the first YAML document");
        return ci_words(root, source, notes);
    } catch (const YAML::Exception& e) {
        throw InputError(source, "line " + std::to_string(e.mark.line + 1), "not YAML: " + e.msg);
    }
}

MegatronCommand ci_words(const YAML::Node& root, const std::string& source, std::vector<ImportNote>& notes) {
    const YAML::Node args = root["MODEL_ARGS"];
    if (!args.IsMap()) throw InputError(source, "MODEL_ARGS", "expected a mapping of Megatron flags to values");
    MegatronCommand cmd;
    for (const auto& kv : args) {
        const std::string key = kv.first.as<std::string>("");
        const YAML::Node& v = kv.second;
        const int line = kv.first.Mark().line + 1;
        if (v.IsNull() || (v.IsScalar() && v.Scalar().empty())) continue;  // the CI drops empty values
        if (v.IsScalar() && v.Scalar() == "false") {
            notes.push_back({NoteKind::ignored, key, "false: not passed"});
            continue;
        }
        cmd.words.push_back({key, "", line});
        if (v.IsScalar() && v.Scalar() == "true") continue;
        if (v.IsSequence()) {
            for (const auto& e : v)
                if (e.IsScalar()) cmd.words.push_back(ci_value(e, key));
            continue;
        }
        if (!v.IsScalar()) throw InputError(source, "MODEL_ARGS." + key, "expected a value, true, or a list");
        cmd.words.push_back(ci_value(v, key));
    }
    for (const auto& kv : root) {
        const std::string k = kv.first.as<std::string>("");
        if (k.rfind("MODEL_ARGS_", 0) == 0)
            notes.push_back({NoteKind::ignored, k, "the arguments of a second run (checkpoint resume); MODEL_ARGS read"});
    }
    cmd.gpus_unknown = "a CI configuration does not say how many GPUs run it (its test name does: ..._1N8G is 8)";
    notes.push_back({NoteKind::assumed, "program", "a CI configuration: pretrain_gpt.py's flags assumed"});
    return cmd;
}

void check_program(const LaunchCommand& l, const std::string& source, std::vector<ImportNote>& notes) {
    const std::string b = base_name(l.program);
    const std::string where = "line " + std::to_string(l.line);
    if (l.module) {
        if (l.program.rfind("torchtitan", 0) == 0)
            throw InputError(source, where, "python -m " + l.program + " is a torchtitan launch: use `lostflops import torchtitan`");
        notes.push_back({NoteKind::assumed, "python -m " + l.program, "taken as a GPT-style training program (pretrain_gpt.py's flags)"});
        return;
    }
    if (b == "pretrain_bert.py") {
        notes.push_back({NoteKind::not_modelled, l.program,
                         "BERT: costed as its transformer layers with bidirectional attention (all attention FLOPs, as "
                         "lostflops counts them by default); the pooler, the next-sentence head and the MLM head's "
                         "transform are not costed"});
        return;
    }
    if (b == "pretrain_t5.py")
        throw InputError(source, where, "pretrain_t5.py trains T5, an encoder-decoder; lostflops models decoder-only language models");
    if (b == "pretrain_retro.py" || b == "pretrain_ict.py" || b.rfind("pretrain_vision", 0) == 0)
        throw InputError(source, where, b + " does not train a decoder-only language model, which lostflops models");
    if (l.program.find("multimodal/") != std::string::npos || l.program.find("mimo/") != std::string::npos ||
        b.rfind("pretrain_vlm", 0) == 0) {
        notes.push_back({NoteKind::not_modelled, l.program,
                         "a multimodal model: its vision encoder and projection are not costed, only the language "
                         "model"});
        return;
    }
    if (b == "pretrain_gpt.py" || b == "pretrain_mamba.py" || b == "pretrain_hybrid.py" || b.rfind("finetune", 0) == 0)
        return;
    notes.push_back({NoteKind::assumed, l.program, "taken as a GPT-style training program (pretrain_gpt.py's flags)"});
}

}  // namespace

bool is_megatron_ci_config(const std::string& text) {
    size_t pos = 0;
    while (pos < text.size()) {
        if (text.compare(pos, 11, "MODEL_ARGS:") == 0) return true;
        pos = text.find('\n', pos);
        if (pos == std::string::npos) break;
        ++pos;
    }
    return false;
}

MegatronCommand megatron_command(const std::string& text, const std::string& source, const ImportOptions& options,
                                 std::vector<ImportNote>& notes) {
    if (is_megatron_ci_config(text)) return ci_command(text, source, notes);
    const ShellOptions so{options.script_path, options.env, options.vars, options.args};
    const ShellRun run = evaluate_shell(text, source, so);
    for (const auto& [what, message] : run.notes) notes.push_back({NoteKind::assumed, what, message});
    if (!run.unset_read.empty()) {
        std::string names;
        for (const auto& n : run.unset_read) names += (names.empty() ? "" : ", ") + n;
        notes.push_back({NoteKind::assumed, "environment",
                         "the script reads " + names + ", not given: taken as unset (give --env NAME=VALUE)"});
    }
    MegatronCommand cmd;
    if (const auto launch = find_launch(run, source)) {
        check_program(*launch, source, notes);
        for (const auto& [what, message] : launch->notes) notes.push_back({NoteKind::assumed, what, message});
        cmd.words = launch->args;
        cmd.program = launch->program;
        cmd.num_gpus = launch->num_gpus;
        cmd.gpus_per_node = launch->gpus_per_node;
        cmd.gpus_from = launch->gpus_from;
        cmd.gpus_unknown = launch->gpus_unknown;
        return cmd;
    }
    // A bare argument list: every command made of flags, in order.
    for (const auto& c : run.commands)
        if (!c.words.empty() && c.words[0].text.size() > 1 && c.words[0].text[0] == '-')
            cmd.words.insert(cmd.words.end(), c.words.begin(), c.words.end());
    if (!cmd.words.empty()) {
        cmd.gpus_unknown = "a bare argument list has no launcher";
        return cmd;
    }
    std::string why;
    for (const auto& [what, message] : run.notes)
        if (message.rfind("cannot evaluate", 0) == 0) why += "; " + message;
    if (run.exit_line > 0) {
        std::string unset;
        for (const auto& n : run.unset_read) unset += (unset.empty() ? "" : ", ") + n;
        if (!unset.empty()) why += "; it reads " + unset + ", not given (give --env NAME=VALUE)";
        for (const auto& a : run.args_tested) why += "; it tests " + a;
        // What the script itself says before it exits, on one line.
        std::string said;
        for (char c : run.last_said) {
            if (c == '\n' || c == '\r' || c == '\t') c = ' ';
            if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) said += c;
        }
        while (!said.empty() && said.back() == ' ') said.pop_back();
        while (!said.empty() && said.front() == ' ') said.erase(said.begin());
        if (said.size() > 200) said = said.substr(0, 200) + "...";
        if (!said.empty()) why += "; it says \"" + said + "\"";
        throw InputError(run.exit_file.empty() ? source : run.exit_file, "line " + std::to_string(run.exit_line),
                         "the script exits here before running a training command" + why);
    }
    throw InputError(source, "",
                     "no training command found (torchrun, python -m torch.distributed.run, python X.py, deepspeed, "
                     "srun ... python) and no Megatron flags" + why);
}

}  // namespace lostflops::interop
