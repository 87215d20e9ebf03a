/*
 * The canonical float32 expressions of the smooth L1 loss and its gradient: PyTorch 1.13's
 * float32 operations in its order (the vectorized loops of aten's smooth_l1 and
 * smooth_l1_backward kernels, whose results CANN's golden data is). Every backend evaluates
 * exactly these operations in this order (no FMA contraction), so backends agree bit for bit.
 * At |self - target| == beta both take the linear branch: the loss's quadratic branch is
 * z < beta, the gradient's is |x| < beta (so beta 0 gives the L1 loss, and the gradient
 * -grad at x == 0, where x > 0 is false).
 */
#ifndef NNPLUG_SMOOTH_L1_LOSS_MATH_H
#define NNPLUG_SMOOTH_L1_LOSS_MATH_H

#ifdef __cplusplus
#include <cmath>

namespace nnplug {

/* z = |self - target|; z < beta ? ((0.5 * z) * z) / beta : z - 0.5 * beta */
inline float smooth_l1_loss(float self, float target, float beta) {
    const float z = std::fabs(self - target);
    return z < beta ? 0.5f * z * z / beta : z - 0.5f * beta;
}

/* x = self - target; o = |x| >= beta ? (x > 0 ? 1 : -1) : x / beta; (norm * o) * grad,
 * norm = (float)scale: 1, or 1/numel for mean */
inline float smooth_l1_loss_backward(float grad, float self, float target, float beta, float norm) {
    const float x = self - target;
    const float o = std::fabs(x) >= beta ? (x > 0.0f ? 1.0f : -1.0f) : x / beta;
    return norm * o * grad;
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_SMOOTH_L1_LOSS_MATH_H */
