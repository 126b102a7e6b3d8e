// Megatron's argparse semantics over the words of a training command
// (megatron_args.h), after Python's argparse (Lib/argparse.py: a word
// starting with '-' is an option unless it looks like a negative number
// and the parser has no such options, which Megatron's has not; the last
// occurrence of an option wins; nargs='+' takes the following non-option
// words) and Megatron's allow_abbrev=False.
#include "interop/megatron_args.h"

#include <cctype>

#include "interop/job_draft.h"
#include "interop/megatron_flags.h"
#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

// argparse's _negative_number_matcher: '^-\d+$|^-\d*\.\d+$' (and Megatron
// passes values such as -1e-3 too: accepted as numbers).
bool negative_number(const std::string& w) {
    if (w.size() < 2 || w[0] != '-') return false;
    bool digit = false;
    for (size_t i = 1; i < w.size(); ++i) {
        const char c = w[i];
        if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
        else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+') return false;
    }
    return digit;
}

bool is_option(const ShellField& w) { return w.text.size() > 1 && w.text[0] == '-' && !negative_number(w.text); }

std::string value_text(const std::vector<ShellField>& v) {
    std::string s;
    for (const auto& f : v) s += (s.empty() ? "" : " ") + (f.known() ? f.text : "<unknown>");
    return s;
}

}  // namespace

MegatronArgs::MegatronArgs(const std::vector<ShellField>& words, std::string source, std::vector<ImportNote>& notes)
    : source_(std::move(source)) {
    std::map<std::string, std::string> first_value;  // for "given twice" notes
    for (size_t i = 0; i < words.size(); ++i) {
        const ShellField& w = words[i];
        if (!is_option(w)) {
            notes.push_back({NoteKind::unknown, w.known() ? w.text : "<" + w.unknown + ">",
                             "line " + std::to_string(w.line) + ": a word that is not a flag nor a flag's value"});
            continue;
        }
        const auto eq = w.text.find('=');
        const bool long_form = w.text.compare(0, 2, "--") == 0;
        const std::string name = w.text.substr(long_form ? 2 : 1, eq == std::string::npos ? std::string::npos : eq - (long_form ? 2 : 1));
        const std::string shown = w.text.substr(0, eq);
        std::vector<ShellField> values;
        if (eq != std::string::npos) values.push_back({w.text.substr(eq + 1), w.unknown, w.line});
        const MegatronFlag* f = long_form ? find_megatron_flag(name) : nullptr;
        const auto take_values = [&](bool all) {
            while (i + 1 < words.size() && !is_option(words[i + 1])) {
                values.push_back(words[++i]);
                if (!all) break;
            }
        };
        if (f == nullptr) {
            if (values.empty()) take_values(true);
            const std::string near = long_form ? nearest_megatron_flag(name) : "";
            notes.push_back({NoteKind::unknown, shown + (values.empty() ? "" : " " + value_text(values)),
                             "not a Megatron flag lostflops knows; not used" +
                                 (near.empty() ? std::string() : " (did you mean --" + near + "?)")});
            continue;
        }
        if (f->arity == FlagArity::none && !values.empty())
            throw InputError(source_, shown, "takes no value, got '" + values[0].text + "'");
        if (f->arity != FlagArity::none && values.empty()) take_values(f->arity == FlagArity::many);
        if (f->arity != FlagArity::none && values.empty()) {
            if (f->role == FlagRole::read)
                throw InputError(source_, shown, "expects a value (line " + std::to_string(w.line) + ")");
            notes.push_back({f->role == FlagRole::ignored ? NoteKind::ignored : NoteKind::not_modelled, shown,
                             std::string(f->why) + " (given without a value)"});
            continue;
        }
        const std::string text = value_text(values);
        if (const auto it = first_value.find(name); it != first_value.end() && it->second != text)
            notes.push_back({NoteKind::assumed, shown,
                             "given twice ('" + it->second + "', then '" + text + "'): the last counts, as argparse takes it"});
        first_value[name] = text;
        given_.insert(name);
        switch (f->role) {
            case FlagRole::ignored: notes.push_back({NoteKind::ignored, shown, f->why}); break;
            case FlagRole::not_modelled: notes.push_back({NoteKind::not_modelled, shown, f->why}); break;
            case FlagRole::layer_stack:
                notes.push_back({NoteKind::not_modelled, shown,
                                 "not modelled yet: " + std::string(f->why) +
                                     " (lostflops' layer-stack model does not have it yet, issue 18); costed without it"});
                break;
            case FlagRole::read: read_[name] = Given{std::move(values), w.line}; break;
        }
    }
}

std::optional<std::string> MegatronArgs::str(const char* name) const {
    const auto it = read_.find(name);
    if (it == read_.end() || it->second.values.empty()) return std::nullopt;
    const ShellField& v = it->second.values.back();
    if (!v.known())
        throw InputError(source_, std::string("--") + name,
                         "cannot evaluate: its value (line " + std::to_string(it->second.line) + ") is " + v.unknown);
    return v.text;
}

std::optional<std::string> MegatronArgs::known_str(const char* name) const {
    const auto it = read_.find(name);
    if (it == read_.end() || it->second.values.empty() || !it->second.values.back().known()) return std::nullopt;
    return it->second.values.back().text;
}

std::vector<std::string> MegatronArgs::strs(const char* name) const {
    std::vector<std::string> out;
    const auto it = read_.find(name);
    if (it == read_.end()) return out;
    for (const ShellField& v : it->second.values) {
        if (!v.known())
            throw InputError(source_, std::string("--") + name,
                             "cannot evaluate: its value (line " + std::to_string(it->second.line) + ") is " + v.unknown);
        out.push_back(v.text);
    }
    return out;
}

std::optional<int> MegatronArgs::num(const char* name) const {
    const auto v = str(name);
    if (!v) return std::nullopt;
    return positive_int(*v, source_, std::string("--") + name);
}

int MegatronArgs::required(const char* name) const {
    const auto v = num(name);
    if (!v) throw InputError(source_, std::string("--") + name, "missing: the job needs it");
    return *v;
}

std::string MegatronArgs::choice(const char* name, std::initializer_list<const char*> allowed) const {
    const std::string v = str(name).value_or("");
    std::string list;
    for (const char* a : allowed) {
        if (v == a) return v;
        list += (list.empty() ? "" : ", ") + std::string(a);
    }
    throw InputError(source_, std::string("--") + name, "expected one of " + list + ", got '" + v + "'");
}

int MegatronArgs::line(const char* name) const {
    const auto it = read_.find(name);
    return it == read_.end() ? 0 : it->second.line;
}

}  // namespace lostflops::interop
