// The op-agnostic driver of cpu_tbb: walks a range of a call's iteration space in runs,
// hands runs the vector kernels can read in place straight to them and converts the
// others block by block to float32 first; reductions sum fixed chunks.
#pragma once

#include <nnplug/plugin.h>

#include <cstdint>

#include "vector_run.h"

namespace nnplug::cpu {

// Reductions sum fixed chunks of the linear index (never thread-dependent), each into
// a double partial, then add the partials pairwise (common::finish_reduction).
constexpr int64_t kReduceChunk = 16384;

// Whether the call reduces to its one output element.
bool reduces(const VectorKernels& kernels, const nnplug_op_desc& desc);
int64_t reduce_chunks(const nnplug_op_desc& desc);

// Workspace of a call: the partials of a reduction with more than one chunk.
uint64_t workspace_bytes(const VectorKernels& kernels, const nnplug_op_desc& desc);

// The output of elements [begin, end) of a call that does not reduce.
void compute_range(const VectorKernels& kernels, const nnplug_op_desc& desc, int64_t begin, int64_t end);

// The op's values over chunk `chunk` of a reducing call, summed in double.
double sum_chunk(const VectorKernels& kernels, const nnplug_op_desc& desc, int64_t chunk);

}  // namespace nnplug::cpu
