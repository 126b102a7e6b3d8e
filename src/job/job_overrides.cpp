// `--set` overrides (job_overrides.h): parsing "dotted.key=value", applying it
// to the job's YAML tree, and finding which override an error is about, so the
// message names the command line rather than a file that never said it.
#include "job/job_overrides.h"

#include <sstream>

#include "job/text_input.h"
#include "job/validate.h"
#include "job/yaml_document.h"
#include "lostflops/terminal_text.h"

namespace lostflops {

namespace {

bool under(const std::string& key, const std::string& path) {
    if (key.size() < path.size() || key.compare(0, path.size(), path) != 0) return false;
    return key.size() == path.size() || key[path.size()] == '.' || key[path.size()] == '[';
}

// The keys an override decides: its own path, or for a preset (model.preset,
// cluster.preset) or a model's hf_config file the whole section they fill.
std::string what_it_sets(const std::string& path) {
    const auto dot = path.rfind('.');
    if (dot == std::string::npos) return path;
    const std::string leaf = path.substr(dot + 1);
    return leaf == "preset" || leaf == "hf_config" ? path.substr(0, dot) : path;
}

AppliedOverride apply_one(YAML::Node& root, const std::string& expr) {
    AppliedOverride o;
    o.expr = expr;
    // Its bytes are text, as a file's are, before any message quotes it (the
    // JSON writer refuses ill-formed UTF-8): named by its key while that is
    // UTF-8 (a control byte in it is escaped where the error is shown).
    const std::string key = expr.substr(0, expr.find('='));
    bool utf8 = true;
    for (std::size_t i = 0, n = 1; utf8 && i < key.size(); i += n) {
        n = utf8_length(reinterpret_cast<const unsigned char*>(key.data()) + i, key.size() - i);
        utf8 = n > 0;
    }
    check_text_bytes(expr, utf8 ? "--set " + key : std::string("--set"));
    const std::string src = o.source();
    const auto eq = expr.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError(src, "", "expected section.key=value");
    o.path = expr.substr(0, eq);
    const std::string value = expr.substr(eq + 1);
    std::vector<std::string> parts;
    std::stringstream ss(o.path);
    for (std::string p; std::getline(ss, p, '.');) {
        if (p.empty()) throw InputError(src, o.path, "empty key component; expected section.key=value");
        parts.push_back(p);
    }
    if (parts.empty() || o.path.back() == '.')
        throw InputError(src, o.path, "empty key component; expected section.key=value");
    // An empty value would parse as YAML null, which reads as "key absent":
    // the key would silently fall back to its default. So would a value that
    // is all comment ("parallel.tp=#4": YAML's '#' after a blank starts one).
    const size_t first = value.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        throw InputError(src, o.path,
                         "expected a value after '='; to fall back to the key's default, write " + o.path + "=null");
    if (value[first] == '#')
        throw InputError(src, o.path,
                         "expected a value after '=': '" + value.substr(first) +
                             "' is a YAML comment, which would leave the key at its default; a text that starts "
                             "with '#' goes in YAML quotes (\"" + value.substr(first) + "\")");
    YAML::Node parsed = load_yaml_document(value, src, o.path);
    // Anything else YAML reads as null ("--- #4", a comment after a line
    // break) falls back the same way: only a null written as one does.
    const size_t last = value.find_last_not_of(" \t\r\n");
    const std::string written = value.substr(first, last - first + 1);
    if ((!parsed || parsed.IsNull()) && written != "null" && written != "Null" && written != "NULL" && written != "~")
        throw InputError(src, o.path,
                         "expected a value after '=': '" + written +
                             "' reads as YAML null, which would leave the key at its default; to mean that, write " +
                             o.path + "=null");
    std::vector<YAML::Node> chain{root};
    std::string at;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        at += (at.empty() ? "" : ".") + parts[i];
        YAML::Node next = chain.back()[parts[i]];
        if (!next || next.IsNull()) {
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
            o.created.push_back(at);
        }
        if (!next.IsMap()) throw InputError(src, o.path, at + " is not a section (a mapping of keys)");
        chain.push_back(next);
    }
    chain.back()[parts.back()] = parsed;
    return o;
}

}  // namespace

std::vector<AppliedOverride> apply_overrides(YAML::Node& root, const std::vector<std::string>& exprs) {
    std::vector<AppliedOverride> out;
    for (const auto& e : exprs) out.push_back(apply_one(root, e));
    return out;
}

const AppliedOverride* override_for(const InputError& e, const std::string& source,
                                    const std::vector<AppliedOverride>& applied, bool* by_related) {
    if (by_related) *by_related = false;
    if (e.file() != source || e.key().empty()) return nullptr;
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
        if (under(e.key(), what_it_sets(it->path))) return &*it;
        for (const auto& c : it->created)
            if (under(e.key(), c)) return &*it;
    }
    if (by_related) *by_related = true;
    if (const auto* plan = dynamic_cast<const PlanError*>(&e))
        for (auto it = applied.rbegin(); it != applied.rend(); ++it)
            for (const auto& key : plan->related()) {
                // A related section ("model") covers every override inside it.
                const std::string sets = what_it_sets(it->path);
                if (under(key, sets) || under(sets, key)) return &*it;
            }
    // An error about a whole section ("parallel: tp*pp*cp = 64 is more than
    // num_gpus 8") that an override wrote into.
    for (auto it = applied.rbegin(); it != applied.rend(); ++it)
        if (under(it->path, e.key())) return &*it;
    return nullptr;
}

}  // namespace lostflops
