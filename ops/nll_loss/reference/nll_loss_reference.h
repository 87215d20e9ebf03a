// The float64 reference of the NLLLoss ops, for tests, the conformance kit and plugin authors
// (installed as nnplug/reference/nll_loss_reference.h): the formulas of docs/ops/nll_loss.md
// over dense row-major data. self is (outer, C, inner) and target (outer, inner), flattened;
// a row is one (outer, inner) position, numbered row = o * inner + i.
#pragma once

#include <cstdint>
#include <vector>

namespace nnplug::reference {

struct NllLossResult {
    std::vector<double> loss;  // per row (reduction none), or one value
    double total_weight = 0;   // the sum of weight[target] over the rows not ignored
};

// reduction 0 none, 1 mean (the sum over total_weight), 2 sum.
inline NllLossResult nll_loss(const std::vector<double>& self, const std::vector<int64_t>& target,
                              const std::vector<double>& weight, int64_t classes, int64_t inner,
                              int64_t reduction, int64_t ignore_index) {
    NllLossResult result;
    const int64_t rows = static_cast<int64_t>(target.size());
    double sum = 0;
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t t = target[static_cast<size_t>(row)];
        double l = 0;
        if (t != ignore_index) {
            const int64_t o = row / inner, i = row % inner;
            const double w = weight[static_cast<size_t>(t)];
            l = -w * self[static_cast<size_t>((o * classes + t) * inner + i)];
            result.total_weight += w;
        }
        sum += l;
        if (reduction == 0) result.loss.push_back(l);
    }
    if (reduction != 0) result.loss.push_back(reduction == 1 ? sum / result.total_weight : sum);
    return result;
}

// The gradient with respect to self, dense (outer, C, inner): grad holds one value per row
// (none) or one value (mean, sum); mean divides by total_weight as given.
inline std::vector<double> nll_loss_backward(const std::vector<double>& grad,
                                             const std::vector<int64_t>& target,
                                             const std::vector<double>& weight, int64_t classes,
                                             int64_t inner, int64_t reduction, int64_t ignore_index,
                                             double total_weight) {
    const int64_t rows = static_cast<int64_t>(target.size());
    std::vector<double> out(static_cast<size_t>(rows * classes), 0.0);
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t t = target[static_cast<size_t>(row)];
        if (t == ignore_index) continue;
        double g = reduction == 0 ? grad[static_cast<size_t>(row)] : grad[0];
        if (reduction == 1) g /= total_weight;
        const int64_t o = row / inner, i = row % inner;
        out[static_cast<size_t>((o * classes + t) * inner + i)] = -weight[static_cast<size_t>(t)] * g;
    }
    return out;
}

}  // namespace nnplug::reference
