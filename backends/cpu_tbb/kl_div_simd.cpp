// The Kullback-Leibler divergence loss and its two gradients as vector functors, compiled once
// per target instruction set (foreach_target.h); the kernels at the bottom dispatch at run
// time and pick the logTarget form from the call's descriptor. The operations and their order
// are <nnplug/ops/kl_div_math.h>'s (backends/common/kl_div-inl.h, which atlas_emu's tiles
// evaluate too, so the two backends give the same bits).
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kl_div_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>
#include <nnplug/plugin.h>

#include "kl_div-inl.h"
#include "vector_run.h"
#include "vector_walk-inl.h"

// The operand tables once, though foreach_target.h includes this file once per target.
#ifndef NNPLUG_KL_DIV_OPERANDS
#define NNPLUG_KL_DIV_OPERANDS
namespace nnplug::cpu {

// aclnnKlDiv: self and target broadcast to each other, so either may be one value along a run.
inline constexpr OpOperands kKlDivOperands = {
    2,
    {{{NNPLUG_KL_DIV_SELF, kSplatOrContiguous}, {NNPLUG_KL_DIV_TARGET, kSplatOrContiguous}}},
    NNPLUG_KL_DIV_OUT,
};

// aclnnKlDivBackward: the gradient w.r.t. self reads gradOutput and target only.
inline constexpr OpOperands kKlDivBackwardOperands = {
    2,
    {{{NNPLUG_KL_DIV_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_KL_DIV_BACKWARD_TARGET, kSplatOrContiguous}}},
    NNPLUG_KL_DIV_BACKWARD_OUT,
};

// aclnnKlDivTargetBackward: gradOutput, self and target broadcast to each other.
inline constexpr OpOperands kKlDivTargetBackwardOperands = {
    3,
    {{{NNPLUG_KL_DIV_BACKWARD_GRAD_OUTPUT, kSplatOrContiguous},
      {NNPLUG_KL_DIV_BACKWARD_SELF, kSplatOrContiguous},
      {NNPLUG_KL_DIV_BACKWARD_TARGET, kSplatOrContiguous}}},
    NNPLUG_KL_DIV_BACKWARD_OUT,
};

inline bool log_target(const VectorRun& run) {
    return nnplug_attr_bool(run.desc, NNPLUG_ATTR_LOG_TARGET, 0) != 0;
}

}  // namespace nnplug::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {

namespace vm = simd::HWY_NAMESPACE;

// With a log or an exp per element the loops prefetch.
template <bool kLogTarget>
struct KlDivMath {
    static constexpr OpOperands kOperands = kKlDivOperands;
    static constexpr bool kPrefetch = true;

    template <OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF d, VF self, VF target) const {
        return vm::kl_div_forward<kLogTarget>(d, self, target);
    }
};

template <bool kLogTarget>
struct KlDivBackwardMath {
    static constexpr OpOperands kOperands = kKlDivBackwardOperands;
    static constexpr bool kPrefetch = kLogTarget;
    VF scale;

    template <OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF d, VF grad, VF target) const {
        return vm::kl_div_backward<kLogTarget>(d, grad, target, scale);
    }
};

template <bool kLogTarget>
struct KlDivTargetBackwardMath {
    static constexpr OpOperands kOperands = kKlDivTargetBackwardOperands;
    static constexpr bool kPrefetch = true;
    VF scale;

    template <OperandAccess, OperandAccess, OperandAccess>
    HWY_INLINE VF apply(DF d, VF grad, VF self, VF target) const {
        return vm::kl_div_target_backward<kLogTarget>(d, grad, self, target, scale);
    }
};

void KlDivMap(const VectorRun& run, float) {
    if (log_target(run)) return map_run(run, KlDivMath<true>{});
    map_run(run, KlDivMath<false>{});
}

double KlDivSum(const VectorRun& run) {
    if (log_target(run)) return sum_run(run, KlDivMath<true>{});
    return sum_run(run, KlDivMath<false>{});
}

void KlDivBackwardMap(const VectorRun& run, float scale) {
    const VF s = hn::Set(DF(), scale);
    if (log_target(run)) return map_run(run, KlDivBackwardMath<true>{s});
    map_run(run, KlDivBackwardMath<false>{s});
}

void KlDivTargetBackwardMap(const VectorRun& run, float scale) {
    const VF s = hn::Set(DF(), scale);
    if (log_target(run)) return map_run(run, KlDivTargetBackwardMath<true>{s});
    map_run(run, KlDivTargetBackwardMath<false>{s});
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(KlDivMap);
HWY_EXPORT(KlDivSum);
HWY_EXPORT(KlDivBackwardMap);
HWY_EXPORT(KlDivTargetBackwardMap);

namespace {

void kl_div_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(KlDivMap)(run, scale);
}
double kl_div_sum(const VectorRun& run) {
    return HWY_DYNAMIC_DISPATCH(KlDivSum)(run);
}
void kl_div_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(KlDivBackwardMap)(run, scale);
}
void kl_div_target_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(KlDivTargetBackwardMap)(run, scale);
}

const VectorKernels& kl_div_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kKlDivOperands;
        table.map = kl_div_map;
        table.sum = kl_div_sum;
        return table;
    }();
    return kernels;
}

const VectorKernels& kl_div_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kKlDivBackwardOperands;
        table.map = kl_div_backward_map;
        return table;
    }();
    return kernels;
}

const VectorKernels& kl_div_target_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kKlDivTargetBackwardOperands;
        table.map = kl_div_target_backward_map;
        return table;
    }();
    return kernels;
}

}  // namespace

void register_kl_div_simd(std::vector<OpKernels>& ops) {
    ops.push_back({NNPLUG_OP_KL_DIV, kl_div_kernels});
    ops.push_back({NNPLUG_OP_KL_DIV_BACKWARD, kl_div_backward_kernels});
    ops.push_back({NNPLUG_OP_KL_DIV_TARGET_BACKWARD, kl_div_target_backward_kernels});
}

}  // namespace nnplug::cpu
#endif
