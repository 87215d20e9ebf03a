// The mean squared error loss and its gradient as vector functors, compiled once per target
// instruction set (foreach_target.h); the kernels at the bottom dispatch at run time. The
// operations and their order are <nnplug/ops/mse_loss_math.h>'s (explicit Sub/Mul, never
// MulAdd), so the results are that header's bit for bit.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "mse_loss_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>
#include <nnplug/ops/mse_loss_math.h>

#include "vector_run.h"
#include "vector_walk-inl.h"

// The operand tables once, though foreach_target.h includes this file once per target.
#ifndef NNPLUG_MSE_LOSS_OPERANDS
#define NNPLUG_MSE_LOSS_OPERANDS
namespace nnplug::cpu {

// aclnnMseLoss: self and target broadcast to each other, so either may be one value along a run.
inline constexpr OpOperands kMseLossOperands = {
    2,
    {{{NNPLUG_MSE_LOSS_SELF, kSplatOrContiguous}, {NNPLUG_MSE_LOSS_TARGET, kSplatOrContiguous}}},
    NNPLUG_MSE_LOSS_OUT,
};

// aclnnMseLossBackward: gradOutput, self and target broadcast to each other.
inline constexpr OpOperands kMseLossBackwardOperands = {
    3,
    {{{NNPLUG_MSE_LOSS_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_MSE_LOSS_BACKWARD_SELF, kSplatOrContiguous},
      {NNPLUG_MSE_LOSS_BACKWARD_TARGET, kSplatOrContiguous}}},
    NNPLUG_MSE_LOSS_BACKWARD_OUT,
};

}  // namespace nnplug::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {

// Two or three operations per vector: the loops are bound by memory, with nothing to hide.
struct MseLossMath {
    static constexpr OpOperands kOperands = kMseLossOperands;
    static constexpr bool kPrefetch = false;

    template <OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF, VF self, VF target) const {
        const VF d = hn::Sub(self, target);
        return hn::Mul(d, d);
    }
};

struct MseLossBackwardMath {
    static constexpr OpOperands kOperands = kMseLossBackwardOperands;
    static constexpr bool kPrefetch = false;
    VF norm;

    template <OperandAccess, OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF, VF grad, VF self, VF target) const {
        return hn::Mul(hn::Mul(hn::Sub(self, target), norm), grad);
    }
};

void MseLossMap(const VectorRun& run, float) {
    map_run(run, MseLossMath{});
}

double MseLossSum(const VectorRun& run) {
    return sum_run(run, MseLossMath{});
}

// The driver passes (float)scale; the gradient's factor is 2·scale rounded once from double,
// which is 2·(float)scale exactly (doubling commutes with rounding short of overflow).
void MseLossBackwardMap(const VectorRun& run, float scale) {
    map_run(run, MseLossBackwardMath{hn::Set(DF(), 2.0f * scale)});
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(MseLossMap);
HWY_EXPORT(MseLossSum);
HWY_EXPORT(MseLossBackwardMap);

namespace {

void mse_loss_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(MseLossMap)(run, scale);
}
double mse_loss_sum(const VectorRun& run) {
    return HWY_DYNAMIC_DISPATCH(MseLossSum)(run);
}
void mse_loss_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(MseLossBackwardMap)(run, scale);
}

const VectorKernels& mse_loss_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kMseLossOperands;
        table.map = mse_loss_map;
        table.sum = mse_loss_sum;
        return table;
    }();
    return kernels;
}

const VectorKernels& mse_loss_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kMseLossBackwardOperands;
        table.map = mse_loss_backward_map;
        return table;
    }();
    return kernels;
}

}  // namespace

void register_mse_loss_simd(std::vector<OpKernels>& ops) {
    ops.push_back({NNPLUG_OP_MSE_LOSS, mse_loss_kernels});
    ops.push_back({NNPLUG_OP_MSE_LOSS_BACKWARD, mse_loss_backward_kernels});
}

}  // namespace nnplug::cpu
#endif
