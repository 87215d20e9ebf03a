/*
 * The canonical float32 expressions of the binary cross-entropy loss and its
 * gradient. Every backend evaluates exactly these operations in this order
 * (and builds with FMA contraction off), so backends agree bit for bit.
 */
#ifndef NNPLUG_BINARY_CROSS_ENTROPY_MATH_H
#define NNPLUG_BINARY_CROSS_ENTROPY_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
namespace nnplug {

constexpr float kBceEpsilon = 1e-12f;
constexpr float kBceLogClamp = -100.0f;

/* max(x, floor) that lets NaN through, as PyTorch's clamp_min does. */
inline float clamp_below(float x, float floor) {
    return x < floor ? floor : x;
}

/* The mean's factor 1/N, rounded once from double so that every backend uses the same float. */
inline float bce_mean_scale(int64_t n) {
    return static_cast<float>(1.0 / static_cast<double>(n));
}

/* gradOutput * weight * (self - target) / max(self * (1 - self), eps) * scale */
inline float bce_backward(float grad, float weight, float self, float target, float scale) {
    const float numerator = grad * weight * (self - target);
    const float denominator = clamp_below(self * (1.0f - self), kBceEpsilon);
    return numerator / denominator * scale;
}

/* -weight * (target * max(ln(self), -100) + (1 - target) * max(ln(1 - self), -100))
 * ln(1 - self) is evaluated as log1p(-self): the same value, without the digits that
 * float32's 1 - self loses for small self (19% relative error at self = 1e-7). */
inline float bce_forward(float weight, float self, float target) {
    const float log_self = clamp_below(logf(self), kBceLogClamp);
    const float log_rest = clamp_below(log1pf(-self), kBceLogClamp);
    return -weight * (target * log_self + (1.0f - target) * log_rest);
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_BINARY_CROSS_ENTROPY_MATH_H */
