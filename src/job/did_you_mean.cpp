// Typo suggestion by optimal string alignment distance (Damerau 1964,
// Levenshtein 1966: insertions, deletions, substitutions and transpositions
// of adjacent characters each cost 1) after folding case and '-' to '_'.
// O(n*m) per word, words cut at 64 characters.
#include "job/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace lostflops {

namespace {

std::string fold(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Optimal string alignment distance (Damerau 1964; Levenshtein 1966 with
// adjacent transpositions), O(|a| |b|); keys are short, and longer text is
// cut at 64 characters.
size_t osa_distance(const std::string& a, const std::string& b) {
    const size_t n = std::min<size_t>(a.size(), 64), m = std::min<size_t>(b.size(), 64);
    std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
    for (size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (size_t i = 1; i <= n; ++i)
        for (size_t j = 1; j <= m; ++j) {
            const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

}  // namespace

std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates) {
    const std::string k = fold(key);
    const size_t limit = k.size() <= 3 ? 1 : k.size() <= 8 ? 2 : 3;
    const std::string* best = nullptr;
    size_t best_d = limit + 1, best_prefix = 0;
    for (const auto& c : candidates) {
        if (c == key) continue;
        const std::string f = fold(c);
        // One a prefix of the other ("latency" for "latency_us") counts as near.
        const bool extends = std::min(k.size(), f.size()) >= 4 &&
                             (f.compare(0, k.size(), k) == 0 || k.compare(0, f.size(), f) == 0);
        const size_t d = extends ? std::min<size_t>(1, osa_distance(k, f)) : osa_distance(k, f);
        size_t prefix = 0;  // ties go to the longer common prefix ("tpp": tp, not pp)
        while (prefix < k.size() && prefix < f.size() && k[prefix] == f[prefix]) ++prefix;
        if (d < best_d || (d == best_d && best && prefix > best_prefix)) best_d = d, best = &c, best_prefix = prefix;
    }
    return best ? "; did you mean `" + *best + "`?" : "";
}

}  // namespace lostflops
