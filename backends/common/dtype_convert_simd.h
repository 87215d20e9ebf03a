// Contiguous conversions between float16 / bfloat16 / float32 memory and float32
// arrays, with round to nearest even, dispatched at run time to the best instruction
// set of the CPU. The one set of 16-bit conversions every backend uses.
#pragma once

#include <cstdint>

namespace nnplug::simd {

void convert_to_f32(int32_t dtype, const void* source, float* into, int64_t count);
void convert_from_f32(int32_t dtype, const float* source, void* into, int64_t count);
// values rounded to dtype (nearest even) and widened back, in place: the float32 image of
// a cast to dtype. float32 leaves them as they are.
void round_to_dtype(int32_t dtype, float* values, int64_t count);

// The instruction set the dispatch picked, e.g. "AVX3_DL".
const char* target_name();

}  // namespace nnplug::simd
