// The float64 scalar reference of both ops, for tests, the conformance kit and plugin authors
// (installed as nnplug/reference/smooth_l1_loss_reference.h): the formulas of
// docs/ops/smooth_l1_loss.md, evaluated in double.
#pragma once

#include <cmath>

namespace nnplug::reference {

// z = |self - target|: 0.5 z^2 / beta for z < beta, else z - 0.5 beta (beta 0: z)
inline double smooth_l1_loss(double self, double target, double beta) {
    const double z = std::fabs(self - target);
    return z < beta ? 0.5 * z * z / beta : z - 0.5 * beta;
}

// x = self - target: sign(x) * grad for |x| >= beta (-grad at x == 0), else x / beta * grad;
// times scale (1/numel for mean, else 1)
inline double smooth_l1_loss_backward(double grad, double self, double target, double beta, double scale) {
    const double x = self - target;
    const double o = std::fabs(x) >= beta ? (x > 0 ? 1.0 : -1.0) : x / beta;
    return scale * o * grad;
}

}  // namespace nnplug::reference
