// The binary cross-entropy kernels of the CPU backend.
#pragma once

#include <nnplug/plugin.h>

#include <cstdint>

namespace nnplug::cpu {

// Forward reductions sum fixed chunks of the linear index (never thread-dependent),
// each into a double partial in the workspace, then add the partials pairwise.
constexpr int64_t kReduceChunk = 16384;

uint64_t bce_workspace_bytes(const nnplug_op_desc& desc);

// Elementwise work on [begin, end) of the iteration space.
void bce_backward_range(const nnplug_op_desc& desc, int64_t begin, int64_t end);
void bce_forward_range(const nnplug_op_desc& desc, int64_t begin, int64_t end);

// The forward loss summed over chunk c, in double.
double bce_forward_chunk_sum(const nnplug_op_desc& desc, int64_t chunk);

// Sum of partials[0..count) in a fixed pairwise order; writes the reduced result to out.
void bce_forward_finish(const nnplug_op_desc& desc, const double* partials, int64_t count);

}  // namespace nnplug::cpu
