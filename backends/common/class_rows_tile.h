// The vector row kernels of the cross-entropy ops over contiguous rows of float32, float16
// or bfloat16, dispatched at run time to the best instruction set of the CPU: the
// log-sum-exp in one pass over a row (a running max and sum over fixed blocks), log_softmax
// with the sums the loss needs, and the gradient from logProb. cpu_tbb runs them on whole
// rows, atlas_emu on the tiles its Unified Buffer holds; a tile of whole blocks gives the
// same bits as the whole row.
#pragma once

#include <cstdint>
#include <limits>

namespace nnplug::simd {

// A row's log-sum-exp is computed over blocks of this many elements, in order.
constexpr int64_t kLseBlock = 1024;

// The running maximum of a row and the sum of exp(x - max) so far.
struct LseState {
    float max = -std::numeric_limits<float>::infinity();
    double sum = 0;
    // log(sum(exp(x))) of what was added (-inf for nothing, NaN when a NaN was seen).
    float value() const;
};

// Adds x[0..count) (an nnplug_dtype) to state; count a multiple of kLseBlock unless these
// are the row's last elements.
void lse_update(const void* x, int32_t dtype, int64_t count, LseState& state);

// out[c] = x[c] - lse rounded to dtype, for c in [0, count); returns the sum of
// weights[c] * (x[c] - lse) (weights null: of x[c] - lse) when want_sum, else 0.
double log_softmax_row(const void* x, int32_t dtype, int64_t count, float lse, void* out, const float* weights,
                       bool want_sum);

// out[c] = a * exp(lp[c]) - b * weights[c] (weights null: b) rounded to dtype; the caller
// corrects the target's element.
void cross_entropy_grad_row(const void* lp, int32_t dtype, int64_t count, float a, float b, const float* weights,
                            void* out);

}  // namespace nnplug::simd
