// The float64 scalar reference of the three ops, for tests, the conformance kit and plugin
// authors (installed as nnplug/reference/kl_div_reference.h): the formulas of
// docs/ops/kl_div.md, evaluated in double.
#pragma once

#include <cmath>

namespace nnplug::reference {

// logTarget false: t * (log t - x), 0 where t == 0 (xlogy), NaN where t < 0;
// logTarget true: exp(t) * (t - x)
inline double kl_div(double self, double target, bool log_target) {
    if (log_target) return std::exp(target) * (target - self);
    if (target == 0.0) return std::isnan(self) ? self : 0.0 * -self;
    return target * (std::log(target) - self);
}

// -t * g * scale, or -exp(t) * g * scale when logTarget
inline double kl_div_backward(double grad, double target, bool log_target, double scale) {
    return -(log_target ? std::exp(target) : target) * grad * scale;
}

// g * scale * (log t - x + 1), or g * scale * exp(t) * (t - x + 1) when logTarget
inline double kl_div_target_backward(double grad, double self, double target, bool log_target, double scale) {
    if (log_target) return grad * scale * std::exp(target) * (target - self + 1.0);
    return grad * scale * (std::log(target) - self + 1.0) * (target / target);
}

}  // namespace nnplug::reference
