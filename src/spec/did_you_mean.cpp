// Typo suggestion by optimal string alignment distance (Damerau 1964,
// Levenshtein 1966: insertions, deletions, substitutions and transpositions
// of adjacent characters each cost 1), case-insensitive. O(n*m) per word.
#include "spec/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace lostflops {

namespace {

size_t osa_distance(const std::string& a, const std::string& b) {
    const auto low = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
    const size_t n = a.size(), m = b.size();
    std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
    for (size_t j = 0; j <= m; ++j) prev[j] = j;
    for (size_t i = 1; i <= n; ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= m; ++j) {
            const size_t cost = low(a[i - 1]) == low(b[j - 1]) ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) && low(a[i - 2]) == low(b[j - 1]))
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
        }
        std::swap(prev2, prev);
        std::swap(prev, cur);
    }
    return prev[m];
}

}  // namespace

std::string did_you_mean(const std::string& given, const std::vector<std::string>& known) {
    const std::string* best = nullptr;
    size_t best_d = 0;
    for (const std::string& k : known) {
        const size_t d = osa_distance(given, k);
        if (!best || d < best_d) {
            best = &k;
            best_d = d;
        }
    }
    if (!best) return "";
    const size_t limit = std::max<size_t>(1, std::max(given.size(), best->size()) / 3);
    return best_d <= limit ? "; did you mean '" + *best + "'?" : "";
}

}  // namespace lostflops
