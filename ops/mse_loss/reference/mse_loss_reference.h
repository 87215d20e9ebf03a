// The float64 scalar reference of both ops, for tests, the conformance kit and plugin authors
// (installed as nnplug/reference/mse_loss_reference.h): the formulas of docs/ops/mse_loss.md,
// evaluated in double.
#pragma once

namespace nnplug::reference {

// (self - target)^2
inline double mse_loss(double self, double target) {
    const double d = self - target;
    return d * d;
}

// gradOutput * 2 * (self - target) * scale, scale 1/numel(self) for mean and 1 otherwise
inline double mse_loss_backward(double grad, double self, double target, double scale) {
    return grad * 2.0 * (self - target) * scale;
}

}  // namespace nnplug::reference
