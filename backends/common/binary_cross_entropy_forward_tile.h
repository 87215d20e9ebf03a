// The forward loss over contiguous float32 arrays, dispatched at run time to the
// best instruction set of the CPU (the same vector math as the CPU backend).
#pragma once

#include <cstdint>

namespace nnplug::simd {

// out[i] = -w[i] (t[i] max(ln s[i], -100) + (1 - t[i]) max(ln(1 - s[i]), -100));
// weight may be null (every w is 1). out may alias none of the inputs.
void forward_tile(const float* self, const float* target, const float* weight, float* out, int64_t count);

}  // namespace nnplug::simd
