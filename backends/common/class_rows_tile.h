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

// A row's log-sum-exp is computed over blocks of this many elements, in order, and a long
// row's over segments of kLseSegment elements merged in order: the same bits whether one
// thread walks the row or several take its segments.
constexpr int64_t kLseBlock = 1024;
constexpr int64_t kLseSegment = 16 * kLseBlock;

// The running maximum of a row and the sum of exp(x - max) so far.
struct LseState {
    float max = -std::numeric_limits<float>::infinity();
    double sum = 0;
    // log(sum(exp(x))) of what was added (-inf for nothing, NaN when a NaN was seen).
    float value() const;
    // Adds what `later` holds, as if its elements had come after this state's.
    void merge(const LseState& later);
};

// Adds x[0..count) (an nnplug_dtype) to state; count a multiple of kLseBlock unless these
// are the row's last elements.
void lse_update(const void* x, int32_t dtype, int64_t count, LseState& state);

// out[c] = x[c] - lse rounded to dtype, for c in [0, count); returns the sum of
// weights[c] * (x[c] - lse) (weights null: of x[c] - lse) when want_sum, else 0.
double log_softmax_row(const void* x, int32_t dtype, int64_t count, float lse, void* out,
                       const float* weights, bool want_sum);

// out[c] = a * exp(lp[c]) - b * weights[c] (weights null: b) rounded to dtype; the caller
// corrects the target's element.
void cross_entropy_grad_row(const void* lp, int32_t dtype, int64_t count, float a, float b,
                            const float* weights, void* out);

// Rows of `classes` contiguous elements, one after another at a fixed stride (in elements).
struct RowBlock {
    const void* in;
    int64_t in_stride;
    void* out;
    int64_t out_stride;
    int32_t dtype;  // of both
    int64_t rows, classes;
};

// The log-sum-exp state of a row by segments (kLseSegment), merged in order.
LseState row_lse(const void* x, int32_t dtype, int64_t count);

// log_softmax_row over each row of rows (in: logits, out: logProb), its log-sum-exp into
// lse[r] and its sum into sums[r]. A short row is held in vector lanes; the values are those
// of the per-row functions within their rounding.
void log_softmax_rows(const RowBlock& rows, const float* weights, bool want_sum, float* lse, double* sums);

// Per row of a gradient block: out[c] = a * exp(lp[c]) - b * w[c], less nll at the target's
// class; a target of -1 (an ignored row) gives a row of zeros.
struct GradRows {
    const float* a;
    const float* b;
    const float* nll;
    const int64_t* target;
};

// The gradient of each row of rows (in: logProb, out: the gradient).
void cross_entropy_grad_rows(const RowBlock& rows, const GradRows& g, const float* weights);

}  // namespace nnplug::simd
