// The binary cross-entropy ops on logits of the CPU backend: their operands and vector
// kernels (the math, in binary_cross_entropy_with_logits_simd.cpp; everything else is the op-agnostic
// driver's).
#pragma once

#include "vector_run.h"

namespace nnplug::cpu {

// aclnnBinaryCrossEntropyWithLogits: self, target, optional weight and posWeight (also one
// value, or a row repeated along the last dimension as a [C] posWeight against [N, C]);
// out is elementwise or reduced. weight and posWeight are rounded to the promoted dtype
// of self and target first.
inline constexpr OpOperands kBceWithLogitsOperands = {
    4,
    {{{NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT, kAnyAccess},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT, kAnyAccess}}},
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT,
    slot_bit(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT) |
        slot_bit(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT),
};

// aclnnBinaryCrossEntropyWithLogitsBackward: gradOutput (one value after a reduction),
// self, target, optional weight and posWeight.
inline constexpr OpOperands kBceWithLogitsBackwardOperands = {
    5,
    {{{NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT, kAnyAccess},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT, kAnyAccess}}},
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OUT,
};

// aclnnBinaryCrossEntropyWithLogitsTargetBackward: the backward's slots, gradTarget in
// out's; the gradient does not depend on target, which is not read.
inline constexpr OpOperands kBceWithLogitsTargetBackwardOperands = {
    4,
    {{{NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF, kContiguousOnly},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT, kAnyAccess},
      {NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT, kAnyAccess}}},
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OUT,
};

// map: the loss per element (scale unused: a reduction divides in double); sum: its sum.
const VectorKernels& bce_with_logits_kernels();
// map: the gradient w.r.t. self times scale.
const VectorKernels& bce_with_logits_backward_kernels();
// map: the gradient w.r.t. target times scale.
const VectorKernels& bce_with_logits_target_backward_kernels();

}  // namespace nnplug::cpu
