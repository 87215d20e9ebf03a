// The float64 scalar reference of both ops, for tests, the conformance kit and plugin authors
// (installed as nnplug/reference/soft_margin_loss_reference.h): the formulas of
// docs/ops/soft_margin_loss.md, evaluated in double.
#pragma once

#include <cmath>

namespace nnplug::reference {

// log(1 + exp(-target * self))
inline double soft_margin_loss(double self, double target) {
    return std::log1p(std::exp(-target * self));
}

// -target * z / (1 + z) * gradOutput * scale, z = exp(-target * self); scale 1/N for mean
// (N the broadcast element count) and 1 otherwise
inline double soft_margin_loss_backward(double grad, double self, double target, double scale) {
    const double z = std::exp(-target * self);
    return -target * z / (1.0 + z) * grad * scale;
}

}  // namespace nnplug::reference
