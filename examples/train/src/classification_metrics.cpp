#include "classification_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace train {

void ConfusionMatrix::add(const float* scores, const float* labels, int64_t count) {
    for (int64_t i = 0; i < count; ++i) ++counts[labels[i] == 1.0f][scores[i] >= 0.5f];
}

int64_t ConfusionMatrix::total() const {
    return counts[0][0] + counts[0][1] + counts[1][0] + counts[1][1];
}

double ConfusionMatrix::accuracy() const {
    const int64_t all = total();
    return all ? static_cast<double>(counts[0][0] + counts[1][1]) / static_cast<double>(all) : 0.0;
}

double roc_auc(const float* scores, const float* labels, int64_t count) {
    std::vector<int64_t> order(static_cast<size_t>(count));
    std::iota(order.begin(), order.end(), 0);
    // NaN scores (a diverged model) sort after every number and tie with each other:
    // std::sort needs a strict weak order, which a plain < is not with NaN, and without
    // one it may read past the array.
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const bool a_nan = std::isnan(scores[a]), b_nan = std::isnan(scores[b]);
        return a_nan || b_nan ? !a_nan && b_nan : scores[a] < scores[b];
    });
    // Sum of the (1-based, tie-averaged) ranks of the positives.
    double positive_rank_sum = 0;
    int64_t positives = 0;
    for (int64_t start = 0; start < count;) {
        int64_t end = start;
        const float score = scores[order[start]];
        while (end < count &&
               (scores[order[end]] == score || (std::isnan(score) && std::isnan(scores[order[end]]))))
            ++end;
        const double average_rank = 0.5 * static_cast<double>(start + 1 + end);
        for (int64_t i = start; i < end; ++i)
            if (labels[order[i]] == 1.0f) {
                positive_rank_sum += average_rank;
                ++positives;
            }
        start = end;
    }
    const int64_t negatives = count - positives;
    if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
    const double p = static_cast<double>(positives);
    return (positive_rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

void ClassConfusion::add(const int32_t* predicted, const float* labels, int64_t count) {
    for (int64_t i = 0; i < count; ++i)
        ++counts[static_cast<size_t>(static_cast<int64_t>(labels[i]) * classes + predicted[i])];
}

int64_t ClassConfusion::total() const {
    return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

int64_t ClassConfusion::correct() const {
    int64_t sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += at(c, c);
    return sum;
}

double ClassConfusion::accuracy() const {
    const int64_t all = total();
    return all ? static_cast<double>(correct()) / static_cast<double>(all) : 0.0;
}

RegressionErrors regression_errors(const float* predicted, const float* actual, int64_t count) {
    double squares = 0, absolutes = 0;
    for (int64_t i = 0; i < count; ++i) {
        const double error = static_cast<double>(predicted[i]) - static_cast<double>(actual[i]);
        squares += error * error;
        absolutes += std::abs(error);
    }
    const double n = static_cast<double>(count);
    return count ? RegressionErrors{std::sqrt(squares / n), absolutes / n} : RegressionErrors{};
}

}  // namespace train
