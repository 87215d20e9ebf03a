// The logistic function over an array, vectorized.
#pragma once

#include <cstdint>

namespace train {

// p[i] = 1 / (1 + exp(-z[i])) for i in [0, count): Highway's exp on the widest instruction
// set this machine has, every element in a whole vector (a short tail is padded), so an
// element's value depends on nothing but itself. 0 where exp(-z) overflows, 1 where it
// underflows, NaN for NaN.
void sigmoid(const float* z, float* p, int64_t count);

}  // namespace train
