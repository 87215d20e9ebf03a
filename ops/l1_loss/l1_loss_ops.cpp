// aclnnL1Loss and aclnnL1LossBackward: their schemas and entry points. Every input broadcasts
// with the others (ShapeRule::kBroadcastsMutually); everything else is generic.
#include <aclnnop/aclnn_l1_loss.h>
#include <aclnnop/aclnn_l1_loss_backward.h>

#include "two_phase.h"

namespace nnplug {
namespace {

// Operands in the slot order of nnplug/op_slots.h.
//
// The loss, in CANN's op_api order: null, reduction, dtypes and their promotion (castable to
// out), then ranks, the broadcast of self with target and out's shape. A reduced out is 0-d
// only (CANN refuses [1]); over no elements the mean is NaN and the sum 0.
OpSchema forward_schema() {
    OpSchema schema{
        NNPLUG_OP_L1_LOSS,
        "aclnnL1Loss",
        {
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("out", ShapeRule::kIterationOrReduced),
        },
        {kReductionAttr},
        {Check::kNull, Check::kAttrs, Check::kDtype, Check::kPromotion, Check::kRank, Check::kShape},
    };
    schema.empty_reduction_written = true;
    schema.reduced_shape = ReducedShape::kScalar;
    return schema;
}

// The gradient, in CANN's op_api order: null, reduction, dtypes and the promotion of the
// three inputs (castable to gradInput), then ranks, their broadcast and gradInput's shape,
// which is the broadcast shape whatever the reduction. The mean divides by the broadcast
// element count, as CANN's L1LossGrad (which sees the broadcast inputs) and PyTorch do.
OpSchema backward_schema() {
    OpSchema schema{
        NNPLUG_OP_L1_LOSS_BACKWARD,
        "aclnnL1LossBackward",
        {
            OperandSpec::in("gradOutput", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("gradInput", ShapeRule::kEqualsIteration),
        },
        {kReductionAttr},
        {Check::kNull, Check::kAttrs, Check::kDtype, Check::kPromotion, Check::kRank, Check::kShape},
    };
    schema.promise = NumericPromise::kCanonicalBits;  // a sign and two exactly rounded products
    schema.gradient_of = NNPLUG_OP_L1_LOSS;
    return schema;
}

const OpSchema kForward = forward_schema();
const OpSchema kBackward = backward_schema();

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kBackward}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnL1LossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction,
                                        aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, out}, {reduction}, workspaceSize, executor);
}

aclnnStatus aclnnL1Loss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                        aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                const aclTensor* target, int64_t reduction,
                                                aclTensor* gradInput, uint64_t* workspaceSize,
                                                aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward, {gradOutput, self, target, gradInput}, {reduction},
                               workspaceSize, executor);
}

aclnnStatus aclnnL1LossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
