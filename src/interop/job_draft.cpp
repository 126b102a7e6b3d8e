// Rendering an importer's JobDraft as YAML text: one `key: value  # comment`
// line per entry, sections in the order of README "Job file" (model, cluster,
// training, parallel). Plain text assembly; the job loader validates it.
#include "interop/job_draft.h"

#include <charconv>
#include <cstdint>

#include "lostflops/error.h"

namespace lostflops::interop {

void add(std::vector<DraftEntry>& section, std::string key, std::string value, std::string comment) {
    section.push_back({std::move(key), std::move(value), std::move(comment)});
}

std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

int positive_int(const std::string& text, const std::string& source, const std::string& key) {
    int64_t v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || ptr != end)
        throw InputError(source, key, "expected a positive integer, got '" + text + "'");
    if (v < 1 || v > INT32_MAX)
        throw InputError(source, key, "expected a positive integer below 2^31, got " + text);
    return static_cast<int>(v);
}

void refuse_unmodelled(const std::vector<ImportNote>& notes, const std::string& source) {
    for (const auto& n : notes)
        if (n.kind == NoteKind::not_modelled || n.kind == NoteKind::unknown)
            throw InputError(source, n.setting,
                             std::string(n.kind == NoteKind::unknown ? "unknown" : "not modelled") + " (--strict): " +
                                 n.message);
}

namespace {

void render_section(std::string& out, const char* title, const std::vector<DraftEntry>& entries) {
    out += title;
    out += ":\n";
    for (const auto& e : entries) {
        if (e.value.empty()) {
            out += "  # " + e.comment + "\n";
            continue;
        }
        out += "  " + e.key + ": " + e.value;
        if (!e.comment.empty()) out += "  # " + e.comment;
        out += "\n";
    }
}

}  // namespace

std::string render_yaml(const JobDraft& draft) {
    std::string out;
    for (const auto& line : draft.header) out += "# " + line + "\n";
    out += "name: " + quoted(draft.name) + "\n";
    out += "source: " + quoted(draft.source) + "\n";
    render_section(out, "model", draft.model);
    render_section(out, "cluster", draft.cluster);
    render_section(out, "training", draft.training);
    render_section(out, "parallel", draft.parallel);
    return out;
}

}  // namespace lostflops::interop
