// The binary cross-entropy on logits and its gradients as vector functors, compiled
// once per target instruction set (foreach_target.h); the kernels at the bottom
// dispatch at run time. The math is backends/common/binary_cross_entropy_with_logits-inl.h, which
// atlas_emu's tiles evaluate too.
// clang-format off: foreach_target.h must stay first, before highway.h
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "binary_cross_entropy_with_logits_simd.cpp"
#include <hwy/foreach_target.h>
// clang-format on

#include <hwy/highway.h>

#include "binary_cross_entropy_with_logits-inl.h"
#include "binary_cross_entropy_with_logits_simd.h"
#include "vector_walk-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nnplug::cpu::HWY_NAMESPACE {

constexpr bool present(OperandAccess access) {
    return access != OperandAccess::kAbsent;
}

// With their exp and log the ops take 30 to 50 operations per vector: the loops prefetch.
struct LogitsForwardMath {
    static constexpr OpOperands kOperands = kBceWithLogitsOperands;
    static constexpr bool kPrefetch = true;

    template <OperandAccess, OperandAccess, OperandAccess kWeight, OperandAccess kPos>
    HWY_INLINE VF apply(DF d, VF self, VF target, VF weight, VF pos_weight) const {
        return simd::HWY_NAMESPACE::logits_forward<present(kWeight), present(kPos)>(d, self, target, weight,
                                                                                    pos_weight);
    }
};

struct LogitsBackwardMath {
    static constexpr OpOperands kOperands = kBceWithLogitsBackwardOperands;
    static constexpr bool kPrefetch = true;
    VF scale;

    template <OperandAccess, OperandAccess, OperandAccess, OperandAccess kWeight, OperandAccess kPos>
    HWY_INLINE VF apply(DF d, VF grad, VF self, VF target, VF weight, VF pos_weight) const {
        return simd::HWY_NAMESPACE::logits_backward<present(kWeight), present(kPos)>(
            d, grad, self, target, weight, pos_weight, scale);
    }
};

struct LogitsTargetBackwardMath {
    static constexpr OpOperands kOperands = kBceWithLogitsTargetBackwardOperands;
    static constexpr bool kPrefetch = true;
    VF scale;

    template <OperandAccess, OperandAccess, OperandAccess kWeight, OperandAccess kPos>
    HWY_INLINE VF apply(DF d, VF grad, VF self, VF weight, VF pos_weight) const {
        return simd::HWY_NAMESPACE::logits_target_backward<present(kWeight), present(kPos)>(
            d, grad, self, weight, pos_weight, scale);
    }
};

void LogitsForwardMap(const VectorRun& run, float) {
    map_run(run, LogitsForwardMath{});
}

double LogitsForwardSum(const VectorRun& run) {
    return sum_run(run, LogitsForwardMath{});
}

void LogitsBackwardMap(const VectorRun& run, float scale) {
    map_run(run, LogitsBackwardMath{hn::Set(DF(), scale)});
}

void LogitsTargetBackwardMap(const VectorRun& run, float scale) {
    map_run(run, LogitsTargetBackwardMath{hn::Set(DF(), scale)});
}

}  // namespace nnplug::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nnplug::cpu {

HWY_EXPORT(LogitsForwardMap);
HWY_EXPORT(LogitsForwardSum);
HWY_EXPORT(LogitsBackwardMap);
HWY_EXPORT(LogitsTargetBackwardMap);

namespace {
void forward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(LogitsForwardMap)(run, scale);
}
double forward_sum(const VectorRun& run) {
    return HWY_DYNAMIC_DISPATCH(LogitsForwardSum)(run);
}
void backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(LogitsBackwardMap)(run, scale);
}
void target_backward_map(const VectorRun& run, float scale) {
    HWY_DYNAMIC_DISPATCH(LogitsTargetBackwardMap)(run, scale);
}
}  // namespace

const VectorKernels& bce_with_logits_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kBceWithLogitsOperands;
        table.map = forward_map;
        table.sum = forward_sum;
        return table;
    }();
    return kernels;
}

const VectorKernels& bce_with_logits_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kBceWithLogitsBackwardOperands;
        table.map = backward_map;
        return table;
    }();
    return kernels;
}

const VectorKernels& bce_with_logits_target_backward_kernels() {
    static const VectorKernels kernels = [] {
        VectorKernels table{};
        table.operands = kBceWithLogitsTargetBackwardOperands;
        table.map = target_backward_map;
        return table;
    }();
    return kernels;
}

void register_binary_cross_entropy_with_logits_simd(std::vector<OpKernels>& ops) {
    ops.push_back({NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS, bce_with_logits_kernels});
    ops.push_back({NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD, bce_with_logits_backward_kernels});
    ops.push_back({NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD,
                   bce_with_logits_target_backward_kernels});
}

}  // namespace nnplug::cpu
#endif
