// The float64 scalar reference of the three with-logits ops, for tests, the conformance kit
// and plugin authors (installed as nnplug/reference/binary_cross_entropy_with_logits_reference.h): the
// definitions of docs/ops/binary_cross_entropy_with_logits.md (the forward loss, its
// gradient w.r.t. self and w.r.t. target), evaluated in double in numerically stable
// forms (no exp that overflows, no log(1 + tiny) that loses the tiny), not in the float32
// canonical order.
//
// x = self (logits), y = target, w = weight (1 when absent), p = posWeight: an absent
// posWeight is p = 1 (kNoPosWeight), which is the same loss mathematically.
#pragma once

#include <cmath>

namespace nnplug::reference {

constexpr double kNoPosWeight = 1.0;

// softplus(z) = log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)); NaN passes, +inf gives
// +inf, -inf gives 0.
inline double softplus(double z) {
    if (std::isnan(z)) return z;
    return (z > 0.0 ? z : 0.0) + std::log1p(std::exp(-std::fabs(z)));
}

// log(sigmoid(z)) = -softplus(-z)
inline double log_sigmoid(double z) {
    return -softplus(-z);
}

// sigmoid(z) without overflow: 1 / (1 + exp(-z)) for z >= 0, exp(z) / (1 + exp(z)) below.
inline double sigmoid(double z) {
    if (z >= 0.0) return 1.0 / (1.0 + std::exp(-z));
    const double e = std::exp(z);  // NaN stays NaN
    return e / (1.0 + e);
}

// l = w * [(1 - y) * x + (1 + (p - 1) * y) * softplus(-x)]
//   = w * [(1 - y) * x - (1 + (p - 1) * y) * log(sigmoid(x))]
// x = -inf gives NaN for every y (inf - inf, or 0 * inf), x = +inf with y = 1 gives NaN.
inline double bce_with_logits_forward(double weight, double pos_weight, double self, double target) {
    return weight * ((1.0 - target) * self + (1.0 + (pos_weight - 1.0) * target) * softplus(-self));
}

// dl/dx * gradOutput * scale = g * w * [(1 + (p - 1) * y) * sigmoid(x) - p * y] * scale
inline double bce_with_logits_backward(double grad, double weight, double pos_weight, double self,
                                       double target, double scale) {
    return grad * weight * ((1.0 + (pos_weight - 1.0) * target) * sigmoid(self) - pos_weight * target) *
           scale;
}

// dl/dy * gradOutput * scale = g * w * [-x - (p - 1) * log(sigmoid(x))] * scale, as
//   x > 0:  -x + (p - 1) * log1p(exp(-x))
//   x <= 0: -p * x + (p - 1) * log1p(exp(x))     (softplus(-x) = -x + log1p(exp(x)))
// so that neither branch subtracts infinities: x = -inf gives +inf for p > 0, x = +inf
// gives -inf. Without posWeight (p = 1) that is exactly g * w * (-x) * scale.
inline double bce_with_logits_target_backward(double grad, double weight, double pos_weight, double self,
                                              double scale) {
    const double p_minus_one = pos_weight - 1.0;
    double derivative;
    if (p_minus_one == 0.0 || std::isnan(self)) {
        derivative = -self;
    } else if (self > 0.0) {
        derivative = -self + p_minus_one * std::log1p(std::exp(-self));
    } else {
        derivative = -pos_weight * self + p_minus_one * std::log1p(std::exp(self));
    }
    return grad * weight * derivative * scale;
}

}  // namespace nnplug::reference
