// "Did you mean" suggestions for misspelled keys and names.
#pragma once

#include <string>
#include <vector>

namespace nnplug {

// The candidate closest to word by edit distance, or "" when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace nnplug
