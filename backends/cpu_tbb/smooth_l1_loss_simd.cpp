// The smooth L1 loss and its gradient as vector functors, compiled once per target instruction
// set (foreach_target.h); the kernels at the bottom dispatch at run time. The operations and
// their order are <nnplug/ops/smooth_l1_loss_math.h>'s (both branches computed, the comparison
// selects; Mul and Div, never MulAdd), so the results are that header's bit for bit. beta is
// the call's NNPLUG_ATTR_BETA, read from the run's descriptor.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "smooth_l1_loss_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>
#include <nnplug/ops/smooth_l1_loss_math.h>

#include "vector_run.h"
#include "vector_walk-inl.h"

// The operand tables once, though foreach_target.h includes this file once per target.
#ifndef NNPLUG_SMOOTH_L1_LOSS_OPERANDS
#define NNPLUG_SMOOTH_L1_LOSS_OPERANDS
namespace nnplug::cpu {

// aclnnSmoothL1Loss: self and target broadcast to each other, so either may be one value along a run.
inline constexpr OpOperands kSmoothL1LossOperands = {
    2,
    {{{NNPLUG_SMOOTH_L1_LOSS_SELF, kSplatOrContiguous}, {NNPLUG_SMOOTH_L1_LOSS_TARGET, kSplatOrContiguous}}},
    NNPLUG_SMOOTH_L1_LOSS_RESULT,
};

// aclnnSmoothL1LossBackward: gradOutput, self and target broadcast to each other.
inline constexpr OpOperands kSmoothL1LossBackwardOperands = {
    3,
    {{{NNPLUG_SMOOTH_L1_LOSS_BACKWARD_GRAD_OUT, kSplatOrContiguous},
      {NNPLUG_SMOOTH_L1_LOSS_BACKWARD_SELF, kSplatOrContiguous},
      {NNPLUG_SMOOTH_L1_LOSS_BACKWARD_TARGET, kSplatOrContiguous}}},
    NNPLUG_SMOOTH_L1_LOSS_BACKWARD_GRAD_INPUT,
};

}  // namespace nnplug::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {

// A handful of operations per vector: the loops are bound by memory, with nothing to hide.
struct SmoothL1LossMath {
    static constexpr OpOperands kOperands = kSmoothL1LossOperands;
    static constexpr bool kPrefetch = false;

    VF beta, half, half_beta;

    // z < beta ? ((0.5 * z) * z) / beta : z - 0.5 * beta
    template <OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF, VF self, VF target) const {
        const VF z = hn::Abs(hn::Sub(self, target));
        const VF quadratic = hn::Div(hn::Mul(hn::Mul(half, z), z), beta);
        return hn::IfThenElse(hn::Lt(z, beta), quadratic, hn::Sub(z, half_beta));
    }
};

struct SmoothL1LossBackwardMath {
    static constexpr OpOperands kOperands = kSmoothL1LossBackwardOperands;
    static constexpr bool kPrefetch = false;
    VF norm, beta;

    // o = |x| >= beta ? (x > 0 ? 1 : -1) : x / beta; (norm * o) * grad
    template <OperandAccess, OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF df, VF grad, VF self, VF target) const {
        const VF x = hn::Sub(self, target);
        const VF sign = hn::IfThenElse(hn::Gt(x, hn::Zero(df)), hn::Set(df, 1.0f), hn::Set(df, -1.0f));
        const VF o = hn::IfThenElse(hn::Ge(hn::Abs(x), beta), sign, hn::Div(x, beta));
        return hn::Mul(hn::Mul(norm, o), grad);
    }
};

SmoothL1LossMath forward_math(const VectorRun& run) {
    const float beta = nnplug_attr_f32(run.desc, NNPLUG_ATTR_BETA, 1.0f);
    const DF df;
    return {hn::Set(df, beta), hn::Set(df, 0.5f), hn::Set(df, 0.5f * beta)};
}

void SmoothL1LossMap(const VectorRun& run, float) {
    map_run(run, forward_math(run));
}

double SmoothL1LossSum(const VectorRun& run) {
    return sum_run(run, forward_math(run));
}

// The driver passes (float)scale, the gradient's factor norm.
void SmoothL1LossBackwardMap(const VectorRun& run, float scale) {
    const float beta = nnplug_attr_f32(run.desc, NNPLUG_ATTR_BETA, 1.0f);
    const DF df;
    map_run(run, SmoothL1LossBackwardMath{hn::Set(df, scale), hn::Set(df, beta)});
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(SmoothL1LossMap);
HWY_EXPORT(SmoothL1LossSum);
HWY_EXPORT(SmoothL1LossBackwardMap);

namespace {

void smooth_l1_loss_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(SmoothL1LossMap)(run, scale);
}
double smooth_l1_loss_sum(const VectorRun& run) {
    return HWY_DYNAMIC_DISPATCH(SmoothL1LossSum)(run);
}
void smooth_l1_loss_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(SmoothL1LossBackwardMap)(run, scale);
}

const VectorKernels& smooth_l1_loss_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kSmoothL1LossOperands;
        table.map = smooth_l1_loss_map;
        table.sum = smooth_l1_loss_sum;
        return table;
    }();
    return kernels;
}

const VectorKernels& smooth_l1_loss_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kSmoothL1LossBackwardOperands;
        table.map = smooth_l1_loss_backward_map;
        return table;
    }();
    return kernels;
}

}  // namespace

void register_smooth_l1_loss_simd(std::vector<OpKernels>& ops) {
    ops.push_back({NNPLUG_OP_SMOOTH_L1_LOSS, smooth_l1_loss_kernels});
    ops.push_back({NNPLUG_OP_SMOOTH_L1_LOSS_BACKWARD, smooth_l1_loss_backward_kernels});
}

}  // namespace nnplug::cpu
#endif
