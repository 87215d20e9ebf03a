// The float64 scalar reference of both ops, for tests, the conformance kit and plugin authors
// (installed as nnplug/reference/binary_cross_entropy_reference.h): the formulas of
// docs/ops/binary_cross_entropy.md, evaluated in double with the same clamps.
#pragma once

#include <cmath>
#include <cstdint>

namespace nnplug::reference {

constexpr double kEpsilon = 1e-12;
constexpr double kLogClamp = -100.0;

inline double clamp_below(double x, double floor) {
    return x < floor ? floor : x;
}

// gradOutput * weight * (self - target) / max(self * (1 - self), eps) * scale
inline double bce_backward(double grad, double weight, double self, double target, double scale) {
    return grad * weight * (self - target) / clamp_below(self * (1.0 - self), kEpsilon) * scale;
}

// -weight * (target * max(ln(self), -100) + (1 - target) * max(ln(1 - self), -100))
inline double bce_forward(double weight, double self, double target) {
    return -weight * (target * clamp_below(std::log(self), kLogClamp) +
                      (1.0 - target) * clamp_below(std::log1p(-self), kLogClamp));
}

}  // namespace nnplug::reference
