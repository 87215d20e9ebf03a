// The soft margin loss and its gradient as vector functors, compiled once per target
// instruction set (foreach_target.h); the kernels at the bottom dispatch at run time. The
// operations and their order are <nnplug/ops/soft_margin_loss_math.h>'s (explicit Neg, Mul,
// Div and Add, never MulAdd), with the vector exp and log1p of binary_cross_entropy_with_logits-inl.h in
// place of expf and log1pf.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "soft_margin_loss_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>
#include <nnplug/ops/soft_margin_loss_math.h>

#include <limits>

#include "binary_cross_entropy_with_logits-inl.h"
#include "vector_run.h"
#include "vector_walk-inl.h"

// The operand tables once, though foreach_target.h includes this file once per target.
#ifndef NNPLUG_SOFT_MARGIN_LOSS_OPERANDS
#define NNPLUG_SOFT_MARGIN_LOSS_OPERANDS
namespace nnplug::cpu {

// aclnnSoftMarginLoss: self and target broadcast to each other, so either may be one value
// along a run.
inline constexpr OpOperands kSoftMarginLossOperands = {
    2,
    {{{NNPLUG_SOFT_MARGIN_LOSS_SELF, kSplatOrContiguous},
      {NNPLUG_SOFT_MARGIN_LOSS_TARGET, kSplatOrContiguous}}},
    NNPLUG_SOFT_MARGIN_LOSS_OUT,
};

// aclnnSoftMarginLossBackward: gradOutput, self and target broadcast to each other.
inline constexpr OpOperands kSoftMarginLossBackwardOperands = {
    3,
    {{{NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_SELF, kSplatOrContiguous},
      {NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_TARGET, kSplatOrContiguous}}},
    NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_OUT,
};

}  // namespace nnplug::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {

namespace vm = simd::HWY_NAMESPACE;

// log1p(e) for e in [0, 1]: ln(u) + c / u with u = 1 + e rounded and c = e - (u - 1) its exact
// rounding error, so that small e keeps its digits; ln(u) from the [1, 2] table log and c / u
// taken as c * (2 - u), within (u - 1)^2 |c| < 2^-25 of it (c is at most half an ulp of u).
HWY_INLINE VF log1p_unit(DF d, VF e) {
    const VF one = hn::Set(d, 1.0f);
    const VF u = hn::Add(one, e);
    const VF c = hn::Sub(e, hn::Sub(u, one));
    return hn::Add(vm::log_one_to_two(d, u), hn::Mul(c, hn::Sub(hn::Set(d, 2.0f), u)));
}

// The loss's margin t = (-x) * y.
HWY_INLINE VF margin(VF self, VF target) {
    return hn::Mul(hn::Neg(self), target);
}

// log1p(exp(t)) for every float t from e = exp(-|t|): log1p(e) + max(t, 0), which is
// log1p(exp(t)) to an ulp without exp(t) itself; +inf where expf(t) overflows (t above
// ln(FLT_MAX)), as the canonical expression gives, and NaN for NaN. A max of -0 instead
// of +0 does not change the sum, as log1p(e) >= +0.
HWY_INLINE VF log1p_exp(DF d, VF t, VF e) {
    const VF r = hn::Add(hn::Max(t, hn::Zero(d)), log1p_unit(d, e));
    const VF inf = hn::Set(d, std::numeric_limits<float>::infinity());
    return hn::IfThenElse(hn::IsNaN(t), t,
                          hn::IfThenElse(hn::Gt(t, hn::Set(d, kSoftMarginExpLimit)), inf, r));
}

// An exp and a log per element: the loops prefetch, and take the exp and the log in
// separate loops (kStaged); -|t| <= 0 takes the shorter exp.
struct SoftMarginLossMath {
    static constexpr OpOperands kOperands = kSoftMarginLossOperands;
    static constexpr bool kPrefetch = true;
    static constexpr bool kStaged = true;

    template <OperandAccess, OperandAccess>
    HWY_INLINE VF first(DF d, VF self, VF target) const {
        return vm::exp_nonpositive(d, hn::Neg(hn::Abs(margin(self, target))));
    }
    template <OperandAccess, OperandAccess>
    HWY_INLINE VF second(DF d, VF e, VF self, VF target) const {
        return log1p_exp(d, margin(self, target), e);
    }
    template <OperandAccess A, OperandAccess B>
    HWY_INLINE VF apply(DF d, VF self, VF target) const {
        return second<A, B>(d, first<A, B>(d, self, target), self, target);
    }
};

// z = exp((-y) * x), then the quotient and the output's conversion in a second loop.
struct SoftMarginLossBackwardMath {
    static constexpr OpOperands kOperands = kSoftMarginLossBackwardOperands;
    static constexpr bool kPrefetch = true;
    static constexpr bool kStaged = true;
    VF norm;

    template <OperandAccess, OperandAccess, OperandAccess>
    HWY_INLINE VF first(DF d, VF, VF self, VF target) const {
        return vm::exp_any(d, hn::Mul(hn::Neg(target), self));
    }
    template <OperandAccess, OperandAccess, OperandAccess>
    HWY_INLINE VF second(DF d, VF z, VF grad, VF, VF target) const {
        return hn::Mul(hn::Div(hn::Mul(hn::Mul(target, z), norm), hn::Add(z, hn::Set(d, 1.0f))), grad);
    }
    template <OperandAccess A, OperandAccess B, OperandAccess C>
    HWY_INLINE VF apply(DF d, VF grad, VF self, VF target) const {
        return second<A, B, C>(d, first<A, B, C>(d, grad, self, target), grad, self, target);
    }
};

void SoftMarginLossMap(const VectorRun& run, float) {
    map_run(run, SoftMarginLossMath{});
}

double SoftMarginLossSum(const VectorRun& run) {
    return sum_run(run, SoftMarginLossMath{});
}

// The driver passes (float)scale; the gradient's factor is -scale rounded once from double,
// which is -(float)scale exactly.
void SoftMarginLossBackwardMap(const VectorRun& run, float scale) {
    map_run(run, SoftMarginLossBackwardMath{hn::Set(DF(), -scale)});
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(SoftMarginLossMap);
HWY_EXPORT(SoftMarginLossSum);
HWY_EXPORT(SoftMarginLossBackwardMap);

namespace {

void soft_margin_loss_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(SoftMarginLossMap)(run, scale);
}
double soft_margin_loss_sum(const VectorRun& run) {
    return HWY_DYNAMIC_DISPATCH(SoftMarginLossSum)(run);
}
void soft_margin_loss_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(SoftMarginLossBackwardMap)(run, scale);
}

const VectorKernels& soft_margin_loss_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kSoftMarginLossOperands;
        table.map = soft_margin_loss_map;
        table.sum = soft_margin_loss_sum;
        return table;
    }();
    return kernels;
}

const VectorKernels& soft_margin_loss_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kSoftMarginLossBackwardOperands;
        table.map = soft_margin_loss_backward_map;
        return table;
    }();
    return kernels;
}

}  // namespace

void register_soft_margin_loss_simd(std::vector<OpKernels>& ops) {
    ops.push_back({NNPLUG_OP_SOFT_MARGIN_LOSS, soft_margin_loss_kernels});
    ops.push_back({NNPLUG_OP_SOFT_MARGIN_LOSS_BACKWARD, soft_margin_loss_backward_kernels});
}

}  // namespace nnplug::cpu
#endif
