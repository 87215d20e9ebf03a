/*
 * The canonical float32 expressions of the soft margin loss and its gradient, in PyTorch
 * 1.13's order of operations (aten's soft_margin_loss and soft_margin_loss_backward). Build
 * with FMA contraction off. These use the C library's expf and log1pf; a vector backend
 * evaluates the same operations in the same order with its own exp and log1p, so its results
 * differ from these only through those functions.
 *
 * x = self, y = target (±1), g = gradOutput, scale = NNPLUG_ATTR_SCALE (1/N for mean, else 1).
 */
#ifndef NNPLUG_SOFT_MARGIN_LOSS_MATH_H
#define NNPLUG_SOFT_MARGIN_LOSS_MATH_H

#include <math.h>

#ifdef __cplusplus
namespace nnplug {

/* The largest float32 t whose expf(t) is finite (t = ln(FLT_MAX) rounded down); above it the
 * loss is +inf and the gradient NaN, as in PyTorch's float32 evaluation. */
static const float kSoftMarginExpLimit = 0x1.62e42ep6f;

/* l = log1p(exp((-x) * y)): log1p, not log(1 + e), so that a large margin x * y keeps the
 * loss's digits (log(1 + e) is 0 once 1 + e rounds to 1, beyond x * y = 16.6). */
inline float soft_margin_loss(float x, float y) {
    return log1pf(expf((-x) * y));
}

/* The gradient's factor from the descriptor's scale: -scale, rounded once from double. */
inline float soft_margin_loss_norm(double scale) {
    return static_cast<float>(-scale);
}

/* z = exp((-y) * x); r = (((y * z) * norm) / (z + 1)) * g, norm = -scale: NaN where z
 * overflows (inf / inf), as in PyTorch. */
inline float soft_margin_loss_backward(float g, float x, float y, float norm) {
    const float z = expf((-y) * x);
    return (((y * z) * norm) / (z + 1.0f)) * g;
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_SOFT_MARGIN_LOSS_MATH_H */
