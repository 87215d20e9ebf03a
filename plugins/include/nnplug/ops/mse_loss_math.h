/*
 * The canonical float32 expressions of the mean squared error loss and its gradient.
 * Every backend evaluates exactly these operations in this order (no FMA contraction), so
 * backends agree bit for bit; the gradient's order is aten's mse_loss_backward's.
 */
#ifndef NNPLUG_MSE_LOSS_MATH_H
#define NNPLUG_MSE_LOSS_MATH_H

#ifdef __cplusplus
namespace nnplug {

/* (self - target)^2 */
inline float mse_loss(float self, float target) {
    const float d = self - target;
    return d * d;
}

/* ((self - target) * norm) * grad, norm = (float)(2 * scale): 2, or 2/numel(self) for mean */
inline float mse_loss_backward(float grad, float self, float target, float norm) {
    return ((self - target) * norm) * grad;
}

/* The gradient's factor from the descriptor's scale, rounded once from double. */
inline float mse_loss_norm(double scale) {
    return static_cast<float>(2.0 * scale);
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_MSE_LOSS_MATH_H */
