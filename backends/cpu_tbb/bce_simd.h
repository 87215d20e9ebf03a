// The vector kernels of the CPU backend, written with Highway and dispatched at run
// time to the best instruction set of the CPU (AVX-512, AVX2, SSE4, ...).
#pragma once

#include <cstdint>

namespace nnplug::cpu {

// How a run reads an operand: not at all, one value for every element, or element by element.
enum class Feed : int32_t { kAbsent, kSplat, kContiguous };

// One inner run whose operands share a dtype: grad and weight may be absent, splat
// or contiguous; self and target are contiguous; out is contiguous (unused by sums).
struct UniformRun {
    int32_t dtype = 0;  // nnplug_dtype of every operand
    int64_t length = 0;
    const void* grad = nullptr;
    Feed grad_feed = Feed::kAbsent;
    const void* self = nullptr;
    const void* target = nullptr;
    const void* weight = nullptr;
    Feed weight_feed = Feed::kAbsent;
    void* out = nullptr;
    bool stream_out = false;  // non-temporal stores: out is larger than the caches
};

// out = the canonical float32 backward, bit for bit (scale is 1/N or 1).
void backward_run(const UniformRun& run, float scale);
// out = the elementwise forward loss.
void forward_run(const UniformRun& run);
// The forward loss of the run summed in double, in an order fixed by the run alone.
double forward_run_sum(const UniformRun& run);

// Contiguous conversions between a dtype and float32 (round to nearest even).
void convert_to_f32(int32_t dtype, const void* source, float* into, int64_t count);
void convert_from_f32(int32_t dtype, const float* source, void* into, int64_t count);

// Orders stores made non-temporal before later loads of other threads.
void finish_streaming();

// The instruction set the dispatch picked, e.g. "AVX3_DL".
const char* simd_target_name();

}  // namespace nnplug::cpu
