// "did you mean" for a mistyped word: the known word nearest by edit
// distance, when it is near enough to be a typo.
#pragma once

#include <string>
#include <vector>

namespace lostflops {

// "; did you mean 'WORD'?" for the known word at the smallest
// Damerau-Levenshtein (optimal string alignment) distance from `given`,
// compared without case, when that distance is at most max(1, size/3) of the
// longer word; "" otherwise. Ties: the first in `known`.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& known);

}  // namespace lostflops
