// The binary cross-entropy math as vector functors, compiled once per target
// instruction set (foreach_target.h); the kernels at the bottom dispatch at run time.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "binary_cross_entropy_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>
#include <nnplug/ops/binary_cross_entropy_math.h>

#include "binary_cross_entropy_forward-inl.h"
#include "binary_cross_entropy_simd.h"
#include "vector_walk-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {

struct BceForwardMath {
    static constexpr OpOperands kOperands = kBceForwardOperands;
    static constexpr bool kPrefetch = true;  // about 30 operations per vector

    template <OperandAccess, OperandAccess, OperandAccess kWeight>
    HWY_INLINE VF apply(DF d, VF self, VF target, VF weight) const {
        return simd::HWY_NAMESPACE::forward_loss<kWeight != OperandAccess::kAbsent>(d, self, target, weight);
    }
};

struct BceBackwardMath {
    static constexpr OpOperands kOperands = kBceBackwardOperands;
    static constexpr bool kPrefetch = false;
    VF scale;

    // The canonical order of nnplug::bce_backward, with explicit Mul/Sub/Div (never
    // MulAdd); an absent weight is 1, so it is left out.
    template <OperandAccess, OperandAccess, OperandAccess, OperandAccess kWeight>
    HWY_INLINE VF apply(DF d, VF grad, VF self, VF target, VF weight) const {
        const VF weighted = kWeight == OperandAccess::kAbsent ? grad : hn::Mul(grad, weight);
        const VF numerator = hn::Mul(weighted, hn::Sub(self, target));
        const VF product = hn::Mul(self, hn::Sub(hn::Set(d, 1.0f), self));
        const VF denominator = simd::HWY_NAMESPACE::clamp_below(product, hn::Set(d, kBceEpsilon));
        return hn::Mul(hn::Div(numerator, denominator), scale);
    }
};

void BceForwardMap(const VectorRun& run, float) {
    map_run(run, BceForwardMath{});
}

double BceForwardSum(const VectorRun& run) {
    return sum_run(run, BceForwardMath{});
}

void BceBackwardMap(const VectorRun& run, float scale) {
    map_run(run, BceBackwardMath{hn::Set(DF(), scale)});
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(BceForwardMap);
HWY_EXPORT(BceForwardSum);
HWY_EXPORT(BceBackwardMap);

namespace {
void bce_forward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(BceForwardMap)(run, scale);
}
double bce_forward_sum(const VectorRun& run) {
    return HWY_DYNAMIC_DISPATCH(BceForwardSum)(run);
}
void bce_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(BceBackwardMap)(run, scale);
}
}  // namespace

const VectorKernels& bce_forward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kBceForwardOperands;
        table.map = bce_forward_map;
        table.sum = bce_forward_sum;
        return table;
    }();
    return kernels;
}

void register_binary_cross_entropy_simd(std::vector<OpKernels>& ops) {
    ops.push_back({NNPLUG_OP_BINARY_CROSS_ENTROPY, bce_forward_kernels});
    ops.push_back({NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, bce_backward_kernels});
}

const VectorKernels& bce_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kBceBackwardOperands;
        table.map = bce_backward_map;
        return table;
    }();
    return kernels;
}

}  // namespace nnplug::cpu
#endif
