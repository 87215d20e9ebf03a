// The float64 scalar reference of both ops, for tests, the conformance kit and plugin authors
// (installed as nnplug/reference/l1_loss_reference.h): the formulas of docs/ops/l1_loss.md,
// evaluated in double.
#pragma once

#include <cmath>

namespace nnplug::reference {

// |self - target|
inline double l1_loss(double self, double target) {
    return std::fabs(self - target);
}

// sign(self - target) * gradOutput * scale: sign 1, -1, or 0 where self == target (and where
// either is NaN, as CANN's two comparisons give); scale 1/numel for mean and 1 otherwise
inline double l1_loss_backward(double grad, double self, double target, double scale) {
    const double sign = self > target ? 1.0 : self < target ? -1.0 : 0.0;
    return sign * (grad * scale);
}

}  // namespace nnplug::reference
