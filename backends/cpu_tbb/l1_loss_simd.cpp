// The L1 loss and its gradient as vector functors, compiled once per target instruction set
// (foreach_target.h); the kernels at the bottom dispatch at run time. The operations and their
// order are <nnplug/ops/l1_loss_math.h>'s (Sub and Abs; the sign from two comparisons, then
// Mul, never MulAdd), so the results are that header's bit for bit.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "l1_loss_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>
#include <nnplug/ops/l1_loss_math.h>

#include "vector_run.h"
#include "vector_walk-inl.h"

// The operand tables once, though foreach_target.h includes this file once per target.
#ifndef NNPLUG_L1_LOSS_OPERANDS
#define NNPLUG_L1_LOSS_OPERANDS
namespace nnplug::cpu {

// aclnnL1Loss: self and target broadcast to each other, so either may be one value along a run.
inline constexpr OpOperands kL1LossOperands = {
    2,
    {{{NNPLUG_L1_LOSS_SELF, kSplatOrContiguous}, {NNPLUG_L1_LOSS_TARGET, kSplatOrContiguous}}},
    NNPLUG_L1_LOSS_OUT,
};

// aclnnL1LossBackward: gradOutput, self and target broadcast to each other.
inline constexpr OpOperands kL1LossBackwardOperands = {
    3,
    {{{NNPLUG_L1_LOSS_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_L1_LOSS_BACKWARD_SELF, kSplatOrContiguous},
      {NNPLUG_L1_LOSS_BACKWARD_TARGET, kSplatOrContiguous}}},
    NNPLUG_L1_LOSS_BACKWARD_GRAD_INPUT,
};

}  // namespace nnplug::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {

// A few operations per vector: the loops are bound by memory, with nothing to hide.
struct L1LossMath {
    static constexpr OpOperands kOperands = kL1LossOperands;
    static constexpr bool kPrefetch = false;

    template <OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF, VF self, VF target) const {
        return hn::Abs(hn::Sub(self, target));
    }
};

struct L1LossBackwardMath {
    static constexpr OpOperands kOperands = kL1LossBackwardOperands;
    static constexpr bool kPrefetch = false;
    VF norm;

    // sign: 1 where self > target, -1 where self < target, 0 otherwise (equal, or a NaN).
    template <OperandAccess, OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF df, VF grad, VF self, VF target) const {
        const VF sign = hn::IfThenElse(hn::Gt(self, target), hn::Set(df, 1.0f),
                                       hn::IfThenElseZero(hn::Lt(self, target), hn::Set(df, -1.0f)));
        return hn::Mul(sign, hn::Mul(grad, norm));
    }
};

void L1LossMap(const VectorRun& run, float) {
    map_run(run, L1LossMath{});
}

double L1LossSum(const VectorRun& run) {
    return sum_run(run, L1LossMath{});
}

// The driver passes (float)scale, the gradient's factor.
void L1LossBackwardMap(const VectorRun& run, float scale) {
    map_run(run, L1LossBackwardMath{hn::Set(DF(), scale)});
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(L1LossMap);
HWY_EXPORT(L1LossSum);
HWY_EXPORT(L1LossBackwardMap);

namespace {

void l1_loss_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(L1LossMap)(run, scale);
}
double l1_loss_sum(const VectorRun& run) {
    return HWY_DYNAMIC_DISPATCH(L1LossSum)(run);
}
void l1_loss_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(L1LossBackwardMap)(run, scale);
}

const VectorKernels& l1_loss_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kL1LossOperands;
        table.map = l1_loss_map;
        table.sum = l1_loss_sum;
        return table;
    }();
    return kernels;
}

const VectorKernels& l1_loss_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kL1LossBackwardOperands;
        table.map = l1_loss_backward_map;
        return table;
    }();
    return kernels;
}

}  // namespace

void register_l1_loss_simd(std::vector<OpKernels>& ops) {
    ops.push_back({NNPLUG_OP_L1_LOSS, l1_loss_kernels});
    ops.push_back({NNPLUG_OP_L1_LOSS_BACKWARD, l1_loss_backward_kernels});
}

}  // namespace nnplug::cpu
#endif
