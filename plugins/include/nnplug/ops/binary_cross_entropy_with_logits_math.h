/*
 * The canonical float32 expressions of the binary cross-entropy loss on logits and of
 * its gradients w.r.t. self and target, in PyTorch 1.13's order of operations. Build
 * with FMA contraction off. These use the C library's expf, logf and log1pf; a vector
 * backend evaluates the same operations in the same order with its own exp and log, so
 * its results differ from these only through those functions.
 *
 * x = self (logits), y = target, w = weight (1 when absent), p = posWeight,
 * g = gradOutput, scale = NNPLUG_ATTR_SCALE (1/N for mean, else 1).
 */
#ifndef NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_MATH_H
#define NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_MATH_H

#include <math.h>
#include <nnplug/ops/binary_cross_entropy_math.h>

#ifdef __cplusplus
namespace nnplug {

/* log(1 + exp(-|x|)) + max(-x, 0) = -log(sigmoid(x)), as its two parts. log(1 + e), not
 * log1p(e): PyTorch and CANN agree on it. */
struct SoftplusParts {
    float m;  /* max(-x, 0), NaN passing */
    float sp; /* log(1 + exp(-|x|)) */
};

inline SoftplusParts softplus_parts(float x) {
    const float e = expf(-fabsf(x));
    return SoftplusParts{clamp_below(-x, 0.0f), logf(1.0f + e)};
}

/* Each expression below also comes as a _given function that takes the value of its
 * transcendental part (sp, the sigmoid s, or log1p(exp(-|x|))) instead of computing it:
 * every operation but that one is fixed, and the conformance kit checks a backend's
 * results against these with the backend's own values. */

/* Without posWeight: l = (((1 - y) * x + m) + sp) * w */
inline float bce_with_logits_forward_given(float x, float y, float w, float sp) {
    return (((1.0f - y) * x + clamp_below(-x, 0.0f)) + sp) * w;
}
inline float bce_with_logits_forward(float x, float y, float w) {
    return bce_with_logits_forward_given(x, y, w, softplus_parts(x).sp);
}

/* With posWeight: l = ((1 - y) * x + ((p - 1) * y + 1) * (sp + m)) * w */
inline float bce_with_logits_forward_pos_given(float x, float y, float w, float p, float sp) {
    return ((1.0f - y) * x + ((p - 1.0f) * y + 1.0f) * (sp + clamp_below(-x, 0.0f))) * w;
}
inline float bce_with_logits_forward_pos(float x, float y, float w, float p) {
    return bce_with_logits_forward_pos_given(x, y, w, p, softplus_parts(x).sp);
}

/* sigmoid(x) = 1 / (1 + exp(-x)): 0 for x below about -88 (exp overflows), 1 above 17. */
inline float bce_sigmoid(float x) {
    return 1.0f / (1.0f + expf(-x));
}

/* Gradient w.r.t. self without posWeight: ((s - y) * g) * w * scale */
inline float bce_with_logits_backward_given(float g, float y, float w, float scale, float s) {
    return (s - y) * g * w * scale;
}
inline float bce_with_logits_backward(float g, float x, float y, float w, float scale) {
    return bce_with_logits_backward_given(g, y, w, scale, bce_sigmoid(x));
}

/* With posWeight: t = p * y; (((t + 1) - y) * s - t) * g * w * scale */
inline float bce_with_logits_backward_pos_given(float g, float y, float w, float p, float scale, float s) {
    const float t = p * y;
    return (((t + 1.0f) - y) * s - t) * g * w * scale;
}
inline float bce_with_logits_backward_pos(float g, float x, float y, float w, float p, float scale) {
    return bce_with_logits_backward_pos_given(g, y, w, p, scale, bce_sigmoid(x));
}

/* log(sigmoid(z)) = min(z, 0) - log1p(exp(-|z|)), NaN passing; lp = log1p(exp(-|z|)) */
inline float bce_log_sigmoid_given(float z, float lp) {
    const float low = z > 0.0f ? 0.0f : z;
    return low - lp;
}
inline float bce_log_sigmoid(float z) {
    return bce_log_sigmoid_given(z, log1pf(expf(-fabsf(z))));
}

/* Gradient w.r.t. target without posWeight: (-x) * g * w * scale, exactly as PyTorch
 * (log(sigmoid(-x)) - log(sigmoid(x)) equals -x but loses its digits near 0). */
inline float bce_with_logits_target_backward(float g, float x, float w, float scale) {
    return (-x) * g * w * scale;
}

/* With posWeight: (log(sigmoid(-x)) - p * log(sigmoid(x))) * g * w * scale */
inline float bce_with_logits_target_backward_pos_given(float g, float x, float w, float p, float scale,
                                                       float lp) {
    return (bce_log_sigmoid_given(-x, lp) - p * bce_log_sigmoid_given(x, lp)) * g * w * scale;
}
inline float bce_with_logits_target_backward_pos(float g, float x, float w, float p, float scale) {
    return bce_with_logits_target_backward_pos_given(g, x, w, p, scale, log1pf(expf(-fabsf(x))));
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_MATH_H */
