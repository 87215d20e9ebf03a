// The binary cross-entropy ops of the CPU backend: their operands and vector kernels
// (the math, in binary_cross_entropy_simd.cpp; everything else is the op-agnostic driver's).
#pragma once

#include "vector_run.h"

namespace nnplug::cpu {

// aclnnBinaryCrossEntropy: self, target, optional weight (also one value or broadcast
// along rows); out is elementwise or reduced.
inline constexpr OpOperands kBceForwardOperands = {
    3,
    {{{NNPLUG_BINARY_CROSS_ENTROPY_SELF, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_TARGET, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT, kAnyAccess}}},
    NNPLUG_BINARY_CROSS_ENTROPY_OUT,
};

// aclnnBinaryCrossEntropyBackward: gradOutput (one value after a reduction), self,
// target, optional weight.
inline constexpr OpOperands kBceBackwardOperands = {
    4,
    {{{NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT, kAnyAccess}}},
    NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT,
};

// map: the forward loss (scale unused: a reduction divides in double); sum: its sum.
const VectorKernels& bce_forward_kernels();
// map: the canonical float32 backward, bit for bit, times scale.
const VectorKernels& bce_backward_kernels();

}  // namespace nnplug::cpu
