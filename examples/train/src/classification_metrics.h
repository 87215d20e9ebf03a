// Metrics of a binary classifier from its scores (probabilities of label 1), of a
// classifier of C classes from its predicted classes, and of a regression.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

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

// C classes: counts of (actual, predicted), row-major.
struct ClassConfusion {
    int64_t classes = 0;
    std::vector<int64_t> counts;  // classes x classes: counts[actual * classes + predicted]

    ClassConfusion() = default;
    explicit ClassConfusion(int64_t class_count)
        : classes(class_count), counts(static_cast<size_t>(class_count * class_count), 0) {}
    // Rows whose actual class is labels[i] (a class index) and predicted one predicted[i].
    void add(const int32_t* predicted, const float* labels, int64_t count);
    int64_t at(int64_t actual, int64_t predicted) const {
        return counts[static_cast<size_t>(actual * classes + predicted)];
    }
    int64_t total() const;
    int64_t correct() const;  // the diagonal
    double accuracy() const;
};

// A regression's errors in the target's units, summed in double.
struct RegressionErrors {
    double rmse = 0;  // sqrt(mean((predicted - actual)^2))
    double mae = 0;   // mean(|predicted - actual|)
};
RegressionErrors regression_errors(const float* predicted, const float* actual, int64_t count);

}  // namespace train
