// The binary cross-entropy on logits and its two gradients over contiguous float32
// arrays, dispatched at run time to the best instruction set of the CPU: the vector
// math of binary_cross_entropy_with_logits-inl.h, the same the CPU backend's kernels evaluate, so the
// backends that use these tiles agree with it bit for bit. Optional inputs may be null
// (weight: every w is 1, not multiplied; posWeight: the formula without it). out may
// alias none of the inputs.
#pragma once

#include <cstdint>

namespace nnplug::simd {

// out = the loss (bce_with_logits_forward / _forward_pos).
void logits_forward_tile(const float* self, const float* target, const float* weight, const float* pos_weight,
                         float* out, int64_t count);
// out = the gradient w.r.t. self times scale (bce_with_logits_backward / _backward_pos).
void logits_backward_tile(const float* grad, const float* self, const float* target, const float* weight,
                          const float* pos_weight, float scale, float* out, int64_t count);
// out = the gradient w.r.t. target times scale (bce_with_logits_target_backward / _pos).
void logits_target_backward_tile(const float* grad, const float* self, const float* weight,
                                 const float* pos_weight, float scale, float* out, int64_t count);

// The vector functions the ops are built from, for tests: exp(x); log(1 + exp(-|x|));
// log1p(exp(-|x|)); 1 / (1 + exp(-x)); and the loss's own exp(-|x|) and ln(u) for u in
// [1, 2] (log(1 + exp(-|x|)) is the second applied to 1 plus the first).
void exp_tile(const float* x, float* out, int64_t count);
void softplus_part_tile(const float* x, float* out, int64_t count);
void exp_minus_abs_tile(const float* x, float* out, int64_t count);
void log_one_to_two_tile(const float* u, float* out, int64_t count);
void log1p_exp_tile(const float* x, float* out, int64_t count);
void sigmoid_tile(const float* x, float* out, int64_t count);

}  // namespace nnplug::simd
