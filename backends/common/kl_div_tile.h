// The Kullback-Leibler divergence loss and its two gradients over contiguous float32 arrays,
// dispatched at run time to the best instruction set of the CPU: the vector math of
// kl_div-inl.h, the same the CPU backend's kernels evaluate, so the backends that use these
// tiles agree with it bit for bit. out may alias none of the inputs.
#pragma once

#include <cstdint>

namespace nnplug::simd {

// out = the loss (kl_div).
void kl_div_forward_tile(const float* self, const float* target, bool log_target, float* out, int64_t count);
// out = the gradient w.r.t. self times scale (kl_div_backward).
void kl_div_backward_tile(const float* grad, const float* target, bool log_target, float scale, float* out,
                          int64_t count);
// out = the gradient w.r.t. target times scale (kl_div_target_backward).
void kl_div_target_backward_tile(const float* grad, const float* self, const float* target, bool log_target,
                                 float scale, float* out, int64_t count);

}  // namespace nnplug::simd
