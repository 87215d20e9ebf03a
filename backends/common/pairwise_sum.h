// Pairwise summation of partial sums, in a fixed order: the last step of the
// backends' deterministic reductions, accurate to O(log n) roundings.
#pragma once

#include <cstdint>

namespace nnplug {

inline double pairwise_sum(const double* values, int64_t count) {
    if (count <= 8) {
        double sum = 0;
        for (int64_t i = 0; i < count; ++i) sum += values[i];
        return sum;
    }
    const int64_t half = count / 2;
    return pairwise_sum(values, half) + pairwise_sum(values + half, count - half);
}

}  // namespace nnplug
