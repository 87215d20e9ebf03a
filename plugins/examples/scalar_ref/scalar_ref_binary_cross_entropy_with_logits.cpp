// scalar_ref's aclnnBinaryCrossEntropyWithLogits, its backward and its target backward:
// <nnplug/ops/binary_cross_entropy_with_logits_math.h>'s float32 expressions, one element at a time.
#include <nnplug/ops/binary_cross_entropy_with_logits_math.h>

#include "scalar_ref_walk.h"

namespace scalar_ref {
namespace {

namespace sdk = nnplug::sdk;

nnplug_status run_with_logits(const nnplug_op_desc& d) {  // aclnnBinaryCrossEntropyWithLogits
    // weight and posWeight are cast to the promoted dtype of self and target first.
    const int64_t promoted = nnplug_attr_i64(&d, NNPLUG_ATTR_PROMOTED_DTYPE, NNPLUG_DTYPE_F32);
    const bool has_pos_weight =
        nnplug_operand_present(&d, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT);
    return for_each_element(d, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT, [&](const Position& at) {
        const float x = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF),
                    y = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET);
#ifdef SCALAR_REF_BUG_WEIGHT_NOT_ROUNDED  // BUG: weight and posWeight used as stored, not cast first
        static_cast<void>(promoted);
        const float w = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT);
        if (!has_pos_weight) return nnplug::bce_with_logits_forward(x, y, w);
        const float p = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT);
#else
        const float w = rounded_to(promoted, at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT));
#ifdef SCALAR_REF_BUG_ABSENT_POS_WEIGHT  // BUG: no posWeight computed as posWeight 1
        if (!has_pos_weight) return nnplug::bce_with_logits_forward_pos(x, y, w, 1.0f);
#endif
        if (!has_pos_weight) return nnplug::bce_with_logits_forward(x, y, w);
        const float p = rounded_to(promoted, at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT));
#endif
        return nnplug::bce_with_logits_forward_pos(x, y, w, p);
    });
}

nnplug_status run_with_logits_backward(const nnplug_op_desc& d) {  // ...Backward and ...TargetBackward
    const float scale = sdk::scale(d);
    const bool has_pos_weight =
        nnplug_operand_present(&d, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT);
    const bool wrt_target = d.op == NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD;
    return for_each_element(d, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OUT, [&](const Position& at) {
        const float g = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT);
        const float x = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF);
        const float w = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT);
        const float p = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT);
        if (wrt_target)
            return has_pos_weight ? nnplug::bce_with_logits_target_backward_pos(g, x, w, p, scale)
                                  : nnplug::bce_with_logits_target_backward(g, x, w, scale);
        const float y = at.load(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET);
#ifdef SCALAR_REF_BUG_ABSENT_POS_WEIGHT  // BUG: no posWeight computed as posWeight 1
        return nnplug::bce_with_logits_backward_pos(g, x, y, w, has_pos_weight ? p : 1.0f, scale);
#endif
        return has_pos_weight ? nnplug::bce_with_logits_backward_pos(g, x, y, w, p, scale)
                              : nnplug::bce_with_logits_backward(g, x, y, w, scale);
    });
}

const Registration kForward{{NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS}, run_with_logits};
const Registration kBackward{{NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD,
                              NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD},
                             run_with_logits_backward};

}  // namespace
}  // namespace scalar_ref
