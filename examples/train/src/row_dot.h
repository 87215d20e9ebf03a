// The dot product of a row of features with the weights, in a fixed order of additions:
// the training example's logistic model and the shuffled-read benchmark use the same one.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace train {

// Four floats as one vector (GCC and Clang): the lanes add and multiply as four floats do.
typedef float Lanes __attribute__((vector_size(16)));
constexpr int64_t kBlockLanes = 4;

inline Lanes load_lanes(const float* p) {
    Lanes v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// x . w over n floats in one fixed order, the same for every row wherever it sits in
// memory: sixteen lanes in four vectors (independent sums, so the adds overlap), the
// vectors pairwise, their lanes pairwise, then the tail. With kCopy, x is also copied to
// `copy` in the same pass.
template <bool kCopy>
inline float dot(const float* x, const float* w, int64_t n, float* copy = nullptr) {
    constexpr int64_t kStep = 4 * kBlockLanes;
    const int64_t whole = n / kStep * kStep;
    Lanes total[4] = {};
    for (int64_t k = 0; k < whole; k += kStep)
        for (int v = 0; v < 4; ++v) {
            const Lanes value = load_lanes(x + k + kBlockLanes * v);
            if (kCopy) std::memcpy(copy + k + kBlockLanes * v, &value, sizeof value);
            total[v] += value * load_lanes(w + k + kBlockLanes * v);
        }
    const Lanes pairs = (total[0] + total[2]) + (total[1] + total[3]);
    float sum = (pairs[0] + pairs[2]) + (pairs[1] + pairs[3]);
    for (int64_t k = whole; k < n; ++k) {
        if (kCopy) copy[k] = x[k];
        sum += x[k] * w[k];
    }
    return sum;
}

// Calls body(std::integral_constant<int64_t, n>{}) with n = columns when it is one of
// the common row widths below, so that the compiler lays a row's loops out in full (a
// shuffled read keeps more rows in flight with fewer instructions each), else with n = 0
// for a width known at run time only. The arithmetic is the same either way.
template <typename Body>
inline void with_row_width(int64_t columns, Body&& body) {
    switch (columns) {
        case 16: body(std::integral_constant<int64_t, 16>{}); return;
        case 32: body(std::integral_constant<int64_t, 32>{}); return;
        case 64: body(std::integral_constant<int64_t, 64>{}); return;
        case 128: body(std::integral_constant<int64_t, 128>{}); return;
        default: body(std::integral_constant<int64_t, 0>{}); return;
    }
}

}  // namespace train
