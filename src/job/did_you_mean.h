// "did you mean" for a mistyped word: the known word nearest by edit
// distance, when it is near enough to be a typo.
#pragma once

#include <string>
#include <vector>

namespace lostflops {

// "; did you mean `x`?" naming the candidate nearest `key` (optimal string
// alignment distance after folding case and '-' to '_', at most 1 for keys of
// up to 3 characters, 2 up to 8, else 3; one a prefix of the other, both of
// 4 or more characters, counts as 1; ties: the longer common prefix), or ""
// when none is that near.
std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates);

}  // namespace lostflops
