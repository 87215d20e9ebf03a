// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "row_kernels.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>

#include <cstring>

#include "row_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace train::HWY_NAMESPACE {

// Sixteen, eight and four floats as one vector (GCC and Clang vector extensions): they add
// and multiply lane by lane as floats do, on any target. Loads and stores go through
// memcpy (rows need not be aligned), and no vector crosses a function call, where targets
// would pass it differently.
typedef float Lanes16 __attribute__((vector_size(64)));
typedef float Lanes8 __attribute__((vector_size(32)));
typedef float Lanes4 __attribute__((vector_size(16)));
constexpr int64_t kLanes = 16;

// Accumulator vectors that backward keeps in registers across a chunk of rows: eight of
// the target's registers.
constexpr int kBlockVectors = HWY_MAX_BYTES >= 64 ? 8 : HWY_MAX_BYTES >= 32 ? 4 : 2;

// x . w over n floats: sixteen running sums (of the columns j = l mod 16), then sums l and
// l + 8, then l and l + 4, then (0 + 2) + (1 + 3), then the tail in order. With kCopy, x is
// also copied to `copy` in the same pass.
template <bool kCopy>
HWY_INLINE float Dot(const float* x, const float* w, int64_t n, float* copy) {
    const int64_t whole = n / kLanes * kLanes;
    Lanes16 total = {};
    for (int64_t k = 0; k < whole; k += kLanes) {
        Lanes16 value, weight;
        std::memcpy(&value, x + k, sizeof value);
        if (kCopy) std::memcpy(copy + k, &value, sizeof value);
        std::memcpy(&weight, w + k, sizeof weight);
        total += value * weight;
    }
    const Lanes8 half = __builtin_shufflevector(total, total, 0, 1, 2, 3, 4, 5, 6, 7) +
                        __builtin_shufflevector(total, total, 8, 9, 10, 11, 12, 13, 14, 15);
    const Lanes4 quarter =
        __builtin_shufflevector(half, half, 0, 1, 2, 3) + __builtin_shufflevector(half, half, 4, 5, 6, 7);
    float sum = (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
    for (int64_t k = whole; k < n; ++k) {
        if (kCopy) copy[k] = x[k];
        sum += x[k] * w[k];
    }
    return sum;
}

// kWidth: the row width when known at compile time (the compiler then lays a row's loops
// out in full, and a shuffled read keeps more rows in flight), else 0.
template <int64_t kWidth>
HWY_NOINLINE void LogitsOfRows(const BatchRows& rows, int64_t begin, int64_t end, int64_t columns,
                               const float* weight, float bias, float* logits, float* gathered) {
    const int64_t n = kWidth ? kWidth : columns;
    const BatchRows local = rows;  // in registers: the stores below might alias `rows`
    for (int64_t k = begin; k < end; ++k) {
        if (local.index) prefetch_row(local, k + kPrefetchRows, end, n);
        const float* row = local.row(k, n);
        const float dot =
            gathered ? Dot<true>(row, weight, n, gathered + k * n) : Dot<false>(row, weight, n, nullptr);
        logits[k] = dot + bias;
    }
}

void RowLogits(const BatchRows& rows, int64_t begin, int64_t end, int64_t columns, const float* weight,
               float bias, float* logits, float* gathered) {
    switch (columns) {
        case 16:
            return LogitsOfRows<16>(rows, begin, end, columns, weight, bias, logits, gathered);
        case 32:
            return LogitsOfRows<32>(rows, begin, end, columns, weight, bias, logits, gathered);
        case 64:
            return LogitsOfRows<64>(rows, begin, end, columns, weight, bias, logits, gathered);
        case 128:
            return LogitsOfRows<128>(rows, begin, end, columns, weight, bias, logits, gathered);
        default:
            return LogitsOfRows<0>(rows, begin, end, columns, weight, bias, logits, gathered);
    }
}

// sum[c] += delta[i] * x[i][column + c] for c in [0, 16 * kVectors), i = 0, 1, ..., count - 1
// in turn, the sums held in registers across the rows.
template <int kVectors>
HWY_INLINE void AddScaledRows(float* sum, const float* delta, const float* const* x, int64_t column,
                              int64_t count) {
    Lanes16 total[kVectors];
    std::memcpy(total, sum, sizeof total);
    for (int64_t i = 0; i < count; ++i) {
        const float scale = delta[i];
        const float* row = x[i] + column;
        for (int v = 0; v < kVectors; ++v) {
            Lanes16 value;
            std::memcpy(&value, row + kLanes * v, sizeof value);
            total[v] += scale * value;
        }
    }
    std::memcpy(sum, total, sizeof total);
}

// The whole vectors of columns [column, n): blocks of kBlockVectors, then the rest in one
// pass over the rows.
HWY_INLINE int64_t AddScaledVectors(float* sum, const float* delta, const float* const* x, int64_t column,
                                    int64_t n, int64_t count) {
    for (; column + kLanes * kBlockVectors <= n; column += kLanes * kBlockVectors)
        AddScaledRows<kBlockVectors>(sum + column, delta, x, column, count);
    switch ((n - column) / kLanes) {
        case 0:
            return column;
        case 1:
            AddScaledRows<1>(sum + column, delta, x, column, count);
            return column + kLanes;
        case 2:
            AddScaledRows<2>(sum + column, delta, x, column, count);
            return column + 2 * kLanes;
        case 3:
            AddScaledRows<3>(sum + column, delta, x, column, count);
            return column + 3 * kLanes;
        case 4:
            AddScaledRows<4>(sum + column, delta, x, column, count);
            return column + 4 * kLanes;
        case 5:
            AddScaledRows<5>(sum + column, delta, x, column, count);
            return column + 5 * kLanes;
        case 6:
            AddScaledRows<6>(sum + column, delta, x, column, count);
            return column + 6 * kLanes;
        default:
            AddScaledRows<7>(sum + column, delta, x, column, count);
            return column + 7 * kLanes;
    }
}

template <int64_t kWidth>
HWY_NOINLINE void AddProductsOfRows(float* sum, const float* delta, const float* const* x, int64_t count,
                                    int64_t columns) {
    const int64_t n = kWidth ? kWidth : columns;
    const int64_t vectors_end = AddScaledVectors(sum, delta, x, 0, n, count);
    if constexpr (kWidth % kLanes == 0 && kWidth != 0) return;  // no columns left
    for (int64_t j = vectors_end; j < n; ++j) {
        float total = sum[j];
        for (int64_t i = 0; i < count; ++i) total += delta[i] * x[i][j];
        sum[j] = total;
    }
}

void AddRowProducts(float* sum, const float* delta, const float* const* x, int64_t count, int64_t columns) {
    switch (columns) {
        case 16:
            return AddProductsOfRows<16>(sum, delta, x, count, columns);
        case 32:
            return AddProductsOfRows<32>(sum, delta, x, count, columns);
        case 64:
            return AddProductsOfRows<64>(sum, delta, x, count, columns);
        case 128:
            return AddProductsOfRows<128>(sum, delta, x, count, columns);
        default:
            return AddProductsOfRows<0>(sum, delta, x, count, columns);
    }
}

}  // namespace train::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace train {

HWY_EXPORT(RowLogits);
HWY_EXPORT(AddRowProducts);

void row_logits(const BatchRows& rows, int64_t begin, int64_t end, int64_t columns, const float* weight,
                float bias, float* logits, float* gathered) {
    if (begin < end)
        HWY_DYNAMIC_DISPATCH(RowLogits)(rows, begin, end, columns, weight, bias, logits, gathered);
}

void add_row_products(float* sum, const float* delta, const float* const* x, int64_t count, int64_t columns) {
    if (count > 0) HWY_DYNAMIC_DISPATCH(AddRowProducts)(sum, delta, x, count, columns);
}

}  // namespace train
#endif
