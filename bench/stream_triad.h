// The STREAM triad a[i] = b[i] + s * c[i] with the same SIMD dispatch as the kernels:
// the memory-bandwidth limit the kernels are measured against.
#pragma once

#include <cstdint>

namespace nnplug::bench {

// One thread's part of the triad, [begin, end).
void triad_range(float* a, const float* b, const float* c, float s, int64_t begin, int64_t end);

// Bytes the triad moves per element, counted as STREAM counts them (two reads, one write).
constexpr int64_t kTriadBytesPerElement = int64_t{3} * 4;

}  // namespace nnplug::bench
