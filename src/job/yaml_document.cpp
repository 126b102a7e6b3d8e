// Whole-document YAML intake (yaml_document.h): yaml-cpp's parser, its
// exceptions turned into InputErrors that say what is wrong (its recursion
// guard reports only "bad file"), then one walk over the tree for duplicate
// keys and nesting depth. Aliases share their anchor's node in yaml-cpp
// (NodeBuilder::OnAlias), so collections are visited once by their position in
// the text: a "billion laughs" document costs one visit per written node.
#include "job/yaml_document.h"

#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

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

// The pre-scan (yaml_document.h prescan_yaml): YAML 1.2.2 chapter 6-8 token
// boundaries, enough to count items and flow depth without building anything.
class Prescan {
public:
    Prescan(const std::string& text, const std::string& source, std::size_t max_items)
        : t_(text), source_(source), max_(max_items) {}

    void run() {
        while (i_ < t_.size()) {
            if (line_start_) {
                start_line();
                continue;
            }
            const char c = t_[i_];
            if (c == '\n') {
                new_line();
                continue;
            }
            if (plain_ && !plain_ends()) {
                ++i_;
                continue;
            }
            plain_ = false;
            token(c);
        }
    }

private:
    bool space_at(std::size_t k) const {
        return k >= t_.size() || t_[k] == ' ' || t_[k] == '\t' || t_[k] == '\n' || t_[k] == '\r';
    }
    bool flow_indicator(char c) const { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'; }
    // ':' ends a key when whitespace (or, in a flow collection, a flow indicator) follows.
    bool value_indicator_at(std::size_t k) const {
        return t_[k] == ':' && (space_at(k + 1) || (flow_ > 0 && flow_indicator(t_[k + 1])));
    }
    void count() {
        if (++items_ > max_)
            throw InputError(source_, fmt::format("line {}", line_),
                             fmt::format("more than {} YAML items (scalars, keys, list entries); a job, config.json "
                                         "or calibration profile holds far fewer — is this the right file?",
                                         max_));
    }
    void new_line() {
        ++i_;
        ++line_;
        line_start_ = true;
        plain_ = false;
    }
    void skip_to_line_end() {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
    }
    void start_line() {
        std::size_t j = i_;
        while (j < t_.size() && t_[j] == ' ') ++j;
        const int indent = static_cast<int>(j - i_);
        const bool blank = j >= t_.size() || t_[j] == '\n' || t_[j] == '\r';
        if (block_indent_ >= 0 && (blank || indent > block_indent_)) {  // a block scalar's content
            i_ = j;
            skip_to_line_end();
            if (i_ < t_.size()) new_line();
            return;
        }
        block_indent_ = -1;
        indent_ = indent;
        i_ = j;
        line_start_ = false;
        if (flow_ == 0) value_ = true;
    }
    // Inside a plain scalar: does it end here (the character is then read as a token)?
    bool plain_ends() const {
        const char c = t_[i_];
        if ((c == ' ' || c == '\t') && i_ + 1 < t_.size() && t_[i_ + 1] == '#') return true;
        if (value_indicator_at(i_)) return true;
        return flow_ > 0 && flow_indicator(c);
    }
    void quoted(char q) {
        count();
        const std::size_t open_line = line_;
        for (++i_; i_ < t_.size(); ++i_) {
            const char c = t_[i_];
            if (c == '\n') ++line_;
            if (q == '"' && c == '\\') {
                if (i_ + 1 < t_.size() && t_[i_ + 1] == '\n') ++line_;
                ++i_;
                continue;
            }
            if (c != q) continue;
            if (q == '\'' && i_ + 1 < t_.size() && t_[i_ + 1] == '\'') {  // '' is a quote inside
                ++i_;
                continue;
            }
            ++i_;
            value_ = false;
            return;
        }
        // Unterminated. yaml-cpp took the rest of the file for the string: a
        // job whose name lost its closing quote said "model: missing section".
        throw InputError(source_, fmt::format("line {}", open_line),
                         fmt::format("the {}-quoted string opened here is never closed (the rest of the file would "
                                     "be its text)",
                                     q == '"' ? "double" : "single"));
    }
    void token(char c) {
        if (c == ' ' || c == '\t' || c == '\r') {
            ++i_;
            return;
        }
        if (c == '#') {
            skip_to_line_end();
            return;
        }
        if ((c == '\'' || c == '"') && (value_ || flow_ > 0)) return quoted(c);
        if ((c == '[' || c == '{') && (value_ || flow_ > 0)) {
            count();
            if (++flow_ > kMaxYamlDepth) {
                YAML::Mark at;
                at.line = static_cast<int>(line_ - 1);
                too_deep(source_, at);
            }
            ++i_;
            value_ = true;
            return;
        }
        if (flow_ > 0 && (c == ']' || c == '}' || c == ',')) {
            count();
            if (c != ',') --flow_;
            ++i_;
            value_ = c == ',';
            return;
        }
        if ((c == '-' || c == '?') && space_at(i_ + 1) && (value_ || flow_ > 0)) {
            count();
            ++i_;
            value_ = true;
            return;
        }
        if (value_indicator_at(i_)) {
            count();
            ++i_;
            value_ = true;
            return;
        }
        if ((c == '|' || c == '>') && value_ && flow_ == 0) {  // block scalar: header, then indented lines
            count();
            block_indent_ = indent_;
            skip_to_line_end();
            return;
        }
        if ((c == '&' || c == '*' || c == '!') && value_) {  // anchor, alias, tag: one word
            count();
            while (!space_at(i_) && !(flow_ > 0 && flow_indicator(t_[i_]))) ++i_;
            value_ = c != '*';
            return;
        }
        count();  // a plain scalar starts
        plain_ = true;
        value_ = false;
        ++i_;
    }

    const std::string& t_;
    const std::string& source_;
    std::size_t max_;
    std::size_t i_ = 0, items_ = 0, line_ = 1;
    int flow_ = 0, indent_ = 0, block_indent_ = -1;
    bool line_start_ = true, value_ = true, plain_ = false;
};

}  // namespace

void prescan_yaml(const std::string& text, const std::string& source, std::size_t max_items) {
    Prescan(text, source, max_items).run();
}

namespace {

// Where a document's first event is, and whether it is an empty one (a lone
// null: "---" with nothing after it).
class DocumentProbe : public YAML::EventHandler {
public:
    YAML::Mark first = YAML::Mark::null_mark();
    int events = 0;
    bool only_null = true;

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t) override { see(m, true); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { see(m, false); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
        see(m, false);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        see(m, false);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        see(m, false);
    }
    void OnMapEnd() override {}

private:
    void see(const YAML::Mark& m, bool null) {
        if (events++ == 0) first = m;
        only_null = only_null && null;
    }
};

// yaml-cpp's Load builds the first document and drops the rest of the text
// without a word: a second document after '---', a JSON object with text
// after it. Walks the documents after the first, without building them:
// one that holds anything is refused at its first line; empty ones ("---"
// at the end) drop nothing. yaml-cpp 0.7 hands out empty documents forever,
// at one place, on text it cannot read after the first document's end
// (found by JobFuzz: LoadAll then grows without bound), so a document that
// does not move past the last one's place is refused as such, and so is a
// stream of more documents than characters.
void refuse_further_documents(const std::string& text, const std::string& source) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProbe skip;
    if (!parser.HandleNextDocument(skip)) return;
    int last_pos = -1;
    // Each document after the first takes at least its "---": no more of
    // them than characters.
    for (std::size_t n = 0; n <= text.size(); ++n) {
        DocumentProbe doc;
        if (!parser.HandleNextDocument(doc)) return;
        if (doc.events == 0) continue;
        if (!doc.only_null || doc.events > 1)
            throw InputError(source, line_key(doc.first),
                             "a second YAML document starts here (after '---', or text after the first "
                             "document's end); only one document is read: give one");
        if (doc.first.pos <= last_pos)
            throw InputError(source, line_key(doc.first),
                             "text after the first document's end that is not a YAML document; only one "
                             "document is read: give one");
        last_pos = doc.first.pos;
    }
    throw InputError(source, "", "text after the first document's end that is not a YAML document; only one "
                                 "document is read: give one");
}

}  // namespace

void check_yaml_document(const YAML::Node& root, const std::string& source, const std::string& prefix,
                         Duplicates duplicates) {
    Walker(source, duplicates).walk(root, prefix, 1);
}

YAML::Node load_yaml_document(const std::string& text, const std::string& source, const std::string& prefix,
                              Duplicates duplicates, std::size_t max_items) {
    prescan_yaml(text, source, max_items);
    YAML::Node root;
    try {
        root = YAML::Load(text);
        refuse_further_documents(text, source);
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
