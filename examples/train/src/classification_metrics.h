// Metrics of a binary classifier from its scores (probabilities of label 1).
#pragma once

#include <array>
#include <cstdint>

namespace train {

// counts[actual][predicted], prediction = score >= 0.5.
struct ConfusionMatrix {
    std::array<std::array<int64_t, 2>, 2> counts{};

    void add(const float* scores, const float* labels, int64_t count);
    int64_t total() const;
    double accuracy() const;
};

// Area under the ROC curve: the probability that a random positive scores above a
// random negative, ties counting one half (Mann-Whitney U). NaN with one class only.
double roc_auc(const float* scores, const float* labels, int64_t count);

}  // namespace train
