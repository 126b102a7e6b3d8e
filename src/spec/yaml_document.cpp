// Whole-document YAML intake (yaml_document.h): yaml-cpp's parser, its
// exceptions turned into InputErrors that say what is wrong (its recursion
// guard reports only "bad file"), then one walk over the tree for duplicate
// keys and nesting depth. Aliases share their anchor's node in yaml-cpp
// (NodeBuilder::OnAlias), so collections are visited once by their position in
// the text: a "billion laughs" document costs one visit per written node.
#include "spec/yaml_document.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include "lostflops/error.h"

namespace lostflops {

namespace {

std::string join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
}

std::string line_key(const YAML::Mark& m) {
    return m.is_null() || m.line < 0 ? std::string() : fmt::format("line {}", m.line + 1);
}

[[noreturn]] void too_deep(const std::string& source, const YAML::Mark& m) {
    throw InputError(source, line_key(m),
                     fmt::format("nesting deeper than {} levels of mappings and lists; a job, "
                                 "config.json or calibration profile needs at most 4",
                                 kMaxYamlDepth));
}

class Walker {
public:
    Walker(std::string source, Duplicates duplicates) : source_(std::move(source)), duplicates_(duplicates) {}

    void walk(const YAML::Node& node, const std::string& path, int depth) {
        if (!node.IsMap() && !node.IsSequence()) return;
        if (depth > kMaxYamlDepth) too_deep(source_, node.Mark());
        const int pos = node.Mark().pos;
        if (pos >= 0 && !seen_.insert(pos).second) return;  // an alias of a node already checked
        if (node.IsSequence()) {
            std::size_t i = 0;
            for (const auto& item : node) walk(item, fmt::format("{}[{}]", path, i++), depth + 1);
            return;
        }
        std::map<std::string, std::pair<int, YAML::Node>> lines;  // key -> 1-based line of its first occurrence, value
        for (const auto& kv : node) {
            if (kv.first.IsScalar()) {
                const std::string& k = kv.first.Scalar();
                const int line = kv.first.Mark().line + 1;
                const auto [it, fresh] = lines.emplace(k, std::make_pair(line, kv.second));
                if (!fresh && duplicates_ == Duplicates::same_ok && YAML::Dump(it->second.second) == YAML::Dump(kv.second))
                    continue;
                if (!fresh)
                    throw InputError(source_, join(path, k),
                                     fmt::format("duplicate key: given at line {} and again at line {}; "
                                                 "YAML keys must be unique (keep one)",
                                                 it->second.first, line));
                walk(kv.second, join(path, k), depth + 1);
            } else {
                walk(kv.first, path, depth + 1);  // a complex key: the readers reject it by name
                walk(kv.second, path, depth + 1);
            }
        }
    }

private:
    std::string source_;
    Duplicates duplicates_;
    std::set<int> seen_;
};

}  // namespace

void check_yaml_document(const YAML::Node& root, const std::string& source, const std::string& prefix,
                         Duplicates duplicates) {
    Walker(source, duplicates).walk(root, prefix, 1);
}

YAML::Node load_yaml_document(const std::string& text, const std::string& source, const std::string& prefix,
                              Duplicates duplicates) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::DeepRecursion&) {
        // Its mark is where the scanner had read ahead to, not the deep node.
        too_deep(source, YAML::Mark::null_mark());
    } catch (const YAML::Exception& e) {
        throw InputError(source, line_key(e.mark), "not valid YAML or JSON: " + e.msg);
    }
    check_yaml_document(root, source, prefix, duplicates);
    return root;
}

}  // namespace lostflops
