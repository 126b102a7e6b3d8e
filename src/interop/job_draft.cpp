// Rendering an importer's JobDraft as YAML text: one `key: value  # comment`
// line per entry, sections in the order of docs/job-file.md (model, cluster,
// training, parallel). Plain text assembly; the job loader validates it.
#include "interop/job_draft.h"

#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/terminal_text.h"
#include "job/hardware_bounds.h"

namespace lostflops::interop {

void add(std::vector<DraftEntry>& section, std::string key, std::string value, std::string comment) {
    section.push_back({std::move(key), std::move(value), std::move(comment)});
}

std::string quoted(const std::string& text) {
    // YAML 1.2.2 section 5.7 escapes: a raw line break would be folded, and
    // YAML text is printable UTF-8 (section 5.1): C1 controls and bytes that
    // are not UTF-8 as \xNN (the latter become the code point U+00NN), the
    // line and paragraph separators as \L and \P.
    return "\"" + escape_text(text, "\"\\", [](Unsafe kind, std::string_view b) -> std::string {
               const auto u = [&](std::size_t i) { return static_cast<unsigned char>(b[i]); };
               switch (kind) {
                   case Unsafe::listed: return "\\" + std::string(b);
                   case Unsafe::control:
                       return b[0] == '\n' ? "\\n" : b[0] == '\t' ? "\\t" : fmt::format("\\x{:02x}", u(0));
                   case Unsafe::c1: return fmt::format("\\x{:02x}", u(1));
                   case Unsafe::separator: return u(2) == 0xA8 ? "\\L" : "\\P";
                   default: return fmt::format("\\x{:02x}", u(0));
               }
           }) +
           "\"";
}

std::string comment_text(const std::string& text) { return terminal_text(text); }

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

int64_t positive_int64(const std::string& text, const std::string& source, const std::string& key, int64_t max) {
    int64_t v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || (ec != std::errc() && ec != std::errc::result_out_of_range) || ptr != end)
        throw InputError(source, key, "expected a positive integer, got '" + text + "'");
    if (ec == std::errc::result_out_of_range || v < 1 || v > max)
        throw InputError(source, key, fmt::format("expected a positive integer up to {}, got {}", max, text));
    return v;
}

double number_in(const std::string& text, const std::string& source, const std::string& key, double lo, double hi) {
    double v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || ptr != end || !(v >= lo && v <= hi))
        throw InputError(source, key, fmt::format("expected a number from {} to {}, got '{}'", lo, hi, text));
    return v;
}

int64_t gpu_count(std::initializer_list<int64_t> factors, const std::string& source, const std::string& key,
                  const std::string& what) {
    int64_t n = 1;
    for (const int64_t f : factors) {
        n *= f;  // each factor is below 2^31 and n at most kMaxGpus: no overflow
        if (n > bounds::kMaxGpus)
            throw InputError(source, key,
                             fmt::format("{} is more than {} GPUs (the job file's num_gpus range)", what,
                                         bounds::kMaxGpus));
    }
    return n;
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
        // Comments carry the input's words (a tokenizer name, a flag): escaped.
        if (e.value.empty()) {
            out += "  # " + comment_text(e.comment) + "\n";
            continue;
        }
        out += "  " + e.key + ": " + e.value;
        if (!e.comment.empty()) out += "  # " + comment_text(e.comment);
        out += "\n";
    }
}

}  // namespace

std::string render_yaml(const JobDraft& draft) {
    std::string out;
    for (const auto& line : draft.header) out += "# " + comment_text(line) + "\n";
    out += "name: " + quoted(draft.name) + "\n";
    out += "source: " + quoted(draft.source) + "\n";
    render_section(out, "model", draft.model);
    render_section(out, "cluster", draft.cluster);
    render_section(out, "training", draft.training);
    render_section(out, "parallel", draft.parallel);
    return out;
}

}  // namespace lostflops::interop
