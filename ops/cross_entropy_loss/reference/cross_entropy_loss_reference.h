// The float64 reference of aclnnCrossEntropyLoss and its gradient, for tests, the conformance
// kit and plugin authors (installed as nnplug/reference/cross_entropy_loss_reference.h): the
// formulas of docs/ops/cross_entropy_loss.md over dense row-major (N, C) data. An empty weight
// means 1 for every class; ignore_index < 0 ignores nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace nnplug::reference {

struct CrossEntropyResult {
    std::vector<double> loss;      // per row (none), or one value
    std::vector<double> log_prob;  // (N, C)
};

inline bool cross_entropy_counted(int64_t target, int64_t ignore_index) {
    return ignore_index < 0 || target != ignore_index;
}

inline double class_weight(const std::vector<double>& weight, int64_t c) {
    return weight.empty() ? 1.0 : weight[static_cast<size_t>(c)];
}

// reduction 0 none, 1 mean (over the counted rows' weights), 2 sum.
inline CrossEntropyResult cross_entropy_loss(const std::vector<double>& input,
                                             const std::vector<int64_t>& target,
                                             const std::vector<double>& weight, int64_t classes,
                                             int64_t reduction, int64_t ignore_index, double smoothing) {
    CrossEntropyResult result;
    const int64_t rows = static_cast<int64_t>(target.size());
    double sum = 0, total = 0;
    for (int64_t n = 0; n < rows; ++n) {
        const double* x = &input[static_cast<size_t>(n * classes)];
        const double max = *std::max_element(x, x + classes);
        double s = 0;
        for (int64_t c = 0; c < classes; ++c) s += std::exp(x[c] - max);
        const double lse = max + std::log(s);
        double smooth = 0;
        for (int64_t c = 0; c < classes; ++c) {
            result.log_prob.push_back(x[c] - lse);
            smooth -= class_weight(weight, c) * (x[c] - lse);
        }
        const int64_t t = target[static_cast<size_t>(n)];
        double l = 0;
        if (cross_entropy_counted(t, ignore_index)) {
            const double w = class_weight(weight, t);
            l = (1 - smoothing) * -w * (x[t] - lse) + smoothing / static_cast<double>(classes) * smooth;
            total += w;
        }
        sum += l;
        if (reduction == 0) result.loss.push_back(l);
    }
    if (reduction != 0) result.loss.push_back(reduction == 1 ? sum / total : sum);
    return result;
}

// The gradient with respect to the input from log_prob (N, C); grad per row (none) or one value.
inline std::vector<double> cross_entropy_loss_grad(const std::vector<double>& grad,
                                                   const std::vector<double>& log_prob,
                                                   const std::vector<int64_t>& target,
                                                   const std::vector<double>& weight, int64_t classes,
                                                   int64_t reduction, int64_t ignore_index,
                                                   double smoothing) {
    const int64_t rows = static_cast<int64_t>(target.size());
    double total = 0, all = 0;
    for (int64_t n = 0; n < rows; ++n)
        if (cross_entropy_counted(target[static_cast<size_t>(n)], ignore_index))
            total += class_weight(weight, target[static_cast<size_t>(n)]);
    for (int64_t c = 0; c < classes; ++c) all += class_weight(weight, c);
    std::vector<double> out(static_cast<size_t>(rows * classes), 0.0);
    for (int64_t n = 0; n < rows; ++n) {
        const int64_t t = target[static_cast<size_t>(n)];
        if (!cross_entropy_counted(t, ignore_index)) continue;
        double g = reduction == 0 ? grad[static_cast<size_t>(n)] : grad[0];
        if (reduction == 1) g /= total;
        // g · (1 − ε) · w[t] first, as the kernels and PyTorch's autograd take it: a mean over
        // counted rows that all weigh 0 makes g infinite and the row NaN.
        const double nll = g * (1 - smoothing) * class_weight(weight, t);
        for (int64_t c = 0; c < classes; ++c) {
            const double p = std::exp(log_prob[static_cast<size_t>(n * classes + c)]);
            const double smooth = p * all - class_weight(weight, c);
            out[static_cast<size_t>(n * classes + c)] =
                nll * (p - (c == t ? 1.0 : 0.0)) + g * smoothing / static_cast<double>(classes) * smooth;
        }
    }
    return out;
}

}  // namespace nnplug::reference
