// aclnnSmoothL1Loss and aclnnSmoothL1LossBackward: their schemas and entry points. Every input
// broadcasts with the others (ShapeRule::kBroadcastsMutually); beta is a float attribute.
#include <aclnnop/aclnn_smooth_l1_loss.h>
#include <aclnnop/aclnn_smooth_l1_loss_backward.h>

#include <cmath>

#include "two_phase.h"

namespace nnplug {
namespace {

// beta: any float >= 0, +inf included (CANN's CheckBeta refuses negative values and NaN).
const AttrSpec kBetaAttr = {NNPLUG_ATTR_BETA, "beta", 0, 0, ">= 0", AttrType::kFloat, 0.0, HUGE_VAL};

// Operands in the slot order of nnplug/op_slots.h.
//
// The loss, in CANN's op_api order: null, dtypes, their promotion (castable to result), the
// attributes, then ranks, the broadcast of self with target and result's shape. CANN checks
// beta last, after the shapes; here it is checked with the reduction. A reduced result is []
// or [1]; over no elements the mean is NaN and the sum 0.
OpSchema forward_schema() {
    OpSchema schema{
        NNPLUG_OP_SMOOTH_L1_LOSS,
        "aclnnSmoothL1Loss",
        {
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("result", ShapeRule::kIterationOrReduced),
        },
        {kReductionAttr, kBetaAttr},
        {Check::kNull, Check::kDtype, Check::kPromotion, Check::kAttrs, Check::kRank, Check::kShape},
    };
    schema.empty_reduction_written = true;
    return schema;
}

// The gradient, in CANN's op_api order: null, dtypes, ranks, the attributes, the promotion of
// the three inputs (castable to gradInput), then their broadcast and gradInput's shape, which
// is the broadcast shape whatever the reduction. The mean divides by the broadcast element
// count (CANN's kernel and PyTorch's functional loss see the broadcast inputs).
OpSchema backward_schema() {
    OpSchema schema{
        NNPLUG_OP_SMOOTH_L1_LOSS_BACKWARD,
        "aclnnSmoothL1LossBackward",
        {
            OperandSpec::in("gradOut", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("gradInput", ShapeRule::kEqualsIteration),
        },
        {kReductionAttr, kBetaAttr},
        {Check::kNull, Check::kDtype, Check::kRank, Check::kAttrs, Check::kPromotion, Check::kShape},
    };
    schema.promise = NumericPromise::kCanonicalBits;  // exactly rounded operations and a branch
    schema.gradient_of = NNPLUG_OP_SMOOTH_L1_LOSS;
    return schema;
}

const OpSchema kForward = forward_schema();
const OpSchema kBackward = backward_schema();

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kBackward}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                              int64_t reduction, float beta, aclTensor* result,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, result}, {reduction, beta}, workspaceSize,
                               executor);
}

aclnnStatus aclnnSmoothL1Loss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                              aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* self,
                                                      const aclTensor* target, int64_t reduction, float beta,
                                                      aclTensor* gradInput, uint64_t* workspaceSize,
                                                      aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward, {gradOut, self, target, gradInput}, {reduction, beta},
                               workspaceSize, executor);
}

aclnnStatus aclnnSmoothL1LossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                      aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
