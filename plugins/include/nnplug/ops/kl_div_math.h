/*
 * The canonical float32 expressions of the Kullback-Leibler divergence loss and its gradients
 * w.r.t. self and target, in the order of CANN's kernels (ops-math kl_div_v2, ops-nn
 * kl_div_loss_grad and kl_div_target_loss_grad). Build with FMA contraction off. These use the
 * C library's logf and expf; a vector backend evaluates the same operations in the same order
 * with its own log and exp, so its results differ from these only through those functions.
 *
 * x = self (log-probabilities), t = target (probabilities, or log-probabilities when
 * logTarget), g = gradOutput, scale = NNPLUG_ATTR_SCALE (1/N for mean, 1/self.size(0) for
 * batchmean, else 1).
 */
#ifndef NNPLUG_KL_DIV_MATH_H
#define NNPLUG_KL_DIV_MATH_H

#include <math.h>

#ifdef __cplusplus
namespace nnplug {

/* logTarget false: t * (log(t') - x), t' = t where t != 0 and 1 where t == 0, so a zero
 * target contributes 0 (PyTorch's xlogy) and a negative one NaN.
 * logTarget true: exp(t) * (t - x). */
inline float kl_div(float x, float t, bool log_target) {
    if (log_target) return expf(t) * (t - x);
    return t * (logf(t != 0.0f ? t : 1.0f) - x);
}

/* The gradient w.r.t. self: (-(t * g)) * scale, or (-(exp(t) * g)) * scale when logTarget. */
inline float kl_div_backward(float g, float t, bool log_target, float scale) {
    const float w = log_target ? expf(t) : t;
    return (-(w * g)) * scale;
}

/* The gradient w.r.t. target, gs = g * scale first:
 * logTarget false: ((gs * log(t)) - (gs * x)) + ((gs * t) / t)   (NaN at t = 0, as PyTorch)
 * logTarget true:  e = exp(t); ((gs * (t - x)) * e) + (gs * e) */
inline float kl_div_target_backward(float g, float x, float t, bool log_target, float scale) {
    const float gs = g * scale;
    if (log_target) {
        const float e = expf(t);
        return ((gs * (t - x)) * e) + (gs * e);
    }
    return ((gs * logf(t)) - (gs * x)) + ((gs * t) / t);
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_KL_DIV_MATH_H */
