/*
 * The canonical float32 expressions of the L1 (mean absolute error) loss and its gradient.
 * Every backend evaluates exactly these operations in this order (no FMA contraction), so
 * backends agree bit for bit. The loss is PyTorch's (sub, then abs); the gradient is CANN's
 * L1LossGrad kernel: a sign from two comparisons (0 where self == target, and where either
 * is NaN), times gradOutput multiplied by the mean's factor.
 */
#ifndef NNPLUG_L1_LOSS_MATH_H
#define NNPLUG_L1_LOSS_MATH_H

#ifdef __cplusplus
#include <cmath>

namespace nnplug {

/* |self - target| (fabs: a NaN's sign bit is cleared, as PyTorch's abs does) */
inline float l1_loss(float self, float target) {
    return std::fabs(self - target);
}

/* The gradient's sign: 1 for self > target, -1 for self < target, else 0. */
inline float l1_loss_sign(float self, float target) {
    return self > target ? 1.0f : self < target ? -1.0f : 0.0f;
}

/* sign * (grad * norm), norm = (float)scale: 1, or 1/numel for mean */
inline float l1_loss_backward(float grad, float self, float target, float norm) {
    return l1_loss_sign(self, target) * (grad * norm);
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_L1_LOSS_MATH_H */
