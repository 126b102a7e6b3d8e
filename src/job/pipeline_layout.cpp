// Megatron-LM pipeline layout strings (pipeline_layout.h): expand the
// repetitions as Megatron's two regular expressions do (groups first, then
// single characters), bounding the expanded size before building it, then
// split into stages and count each stage's layers.
#include "job/pipeline_layout.h"

#include <cctype>

#include <fmt/format.h>

#include "lostflops/error.h"

namespace lostflops {

namespace {

constexpr size_t kMaxExpanded = 1'000'000;

struct Expander {
    const std::string& file;
    const std::string& key;

    [[noreturn]] void fail(const std::string& msg) const { throw InputError(file, key, msg); }

    // The count after '*' at text[at] (at points at '*'); advances `at` past it.
    size_t count_after(const std::string& text, size_t& at) const {
        if (at >= text.size() || text[at] != '*') fail("expected *N after a group or character");
        ++at;
        size_t n = 0, digits = 0;
        while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
            n = n * 10 + static_cast<size_t>(text[at] - '0');
            if (n > kMaxExpanded) fail(fmt::format("a repetition beyond {}", kMaxExpanded));
            ++at, ++digits;
        }
        if (digits == 0) fail("expected a count after *");
        return n;
    }

    void append(std::string& out, const std::string& piece, size_t times) const {
        if (piece.size() * times > kMaxExpanded - std::min(kMaxExpanded, out.size()))
            fail(fmt::format("more than {} characters once expanded", kMaxExpanded));
        for (size_t i = 0; i < times; ++i) out += piece;
    }

    // (X)*n -> X repeated; the rest as it is.
    std::string groups(const std::string& text) const {
        std::string out;
        for (size_t at = 0; at < text.size();) {
            if (text[at] == ')') fail("')' without '('");
            if (text[at] != '(') {
                append(out, std::string(1, text[at++]), 1);
                continue;
            }
            const size_t close = text.find(')', at + 1);
            if (close == std::string::npos) fail("'(' without ')'");
            const std::string inside = text.substr(at + 1, close - at - 1);
            if (inside.empty() || inside.find('(') != std::string::npos) fail("empty or nested group");
            at = close + 1;
            append(out, inside, count_after(text, at));
        }
        return out;
    }

    // x*n -> x repeated.
    std::string chars(const std::string& text) const {
        std::string out;
        for (size_t at = 0; at < text.size();) {
            const char c = text[at++];
            if (c == '*') fail("'*' without a character before it");
            if (at < text.size() && text[at] == '*') {
                append(out, std::string(1, c), count_after(text, at));
            } else {
                append(out, std::string(1, c), 1);
            }
        }
        return out;
    }
};

}  // namespace

std::shared_ptr<const PipelineLayout> parse_pipeline_layout(const std::string& text, const std::string& file,
                                                            const std::string& key) {
    const Expander e{file, key};
    std::string plain;
    for (char c : text)
        if (c != ',' && c != ' ') plain += c;
    const std::string expanded = e.chars(e.groups(plain));
    auto layout = std::make_shared<PipelineLayout>();
    layout->text = text;
    layout->stages.emplace_back();
    int embeddings = 0, losses = 0;
    bool loss_seen = false;
    for (size_t i = 0; i < expanded.size(); ++i) {
        const char c = expanded[i];
        PipelineLayout::Stage& st = layout->stages.back();
        if (c != '|' && loss_seen) e.fail("the loss (L) must be the last element");
        switch (c) {
            case '|': layout->stages.emplace_back(); break;
            case 't': ++st.layers; break;
            case 'm': ++st.mtp; break;
            case 'E':
                if (i != 0) e.fail("the embedding (E) must be the first element");
                st.embedding = true;
                ++embeddings;
                break;
            case 'L':
                st.loss = true;
                loss_seen = true;
                ++losses;
                break;
            default:
                e.fail(fmt::format("'{}' is not a layer; expected E (embedding), t (decoder layer), m (MTP), L (loss), "
                                   "| between stages, (...)*N or x*N",
                                   c));
        }
    }
    int first = 0;
    for (auto& st : layout->stages) {
        st.first = first;
        first += st.layers;
        layout->mtp_given |= st.mtp > 0;
    }
    if (embeddings != 1) e.fail("the embedding (E) must be given once, first");
    if (losses != 1) e.fail("the loss (L) must be given once, last");
    return layout;
}

}  // namespace lostflops
