// aclnnMseLoss and aclnnMseLossBackward: their schemas and entry points. Both broadcast
// their inputs to each other (ShapeRule::kBroadcastsMutually); everything else is generic.
#include <aclnnop/aclnn_mse_loss.h>
#include <aclnnop/aclnn_mse_loss_backward.h>

#include "two_phase.h"

namespace nnplug {
namespace {

// Operands in the slot order of nnplug/op_slots.h.
//
// The loss, in the order CANN documents its errors: null, dtypes, promotion (castable to
// out), ranks, reduction, then the broadcast of self with target and out's shape. A reduced
// out is 0-d only (CANN refuses [1]); over no elements the mean is NaN and the sum 0.
OpSchema forward_schema() {
    OpSchema schema{
        NNPLUG_OP_MSE_LOSS,
        "aclnnMseLoss",
        {
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("out", ShapeRule::kIterationOrReduced),
        },
        {kReductionAttr},
        {Check::kNull, Check::kDtype, Check::kPromotion, Check::kRank, Check::kAttrs, Check::kShape},
    };
    schema.empty_reduction_written = true;
    schema.reduced_shape = ReducedShape::kScalar;
    return schema;
}

// The gradient, in CANN's op_api order: null, dtypes (gradOutput and target must have self's:
// nothing is promoted), reduction, ranks, then the broadcast of the three inputs and out's
// shape, which is the broadcast shape whatever the reduction. The mean divides by self's own
// element count, as CANN and aten's mse_loss_backward do.
OpSchema backward_schema() {
    OpSchema schema{
        NNPLUG_OP_MSE_LOSS_BACKWARD,
        "aclnnMseLossBackward",
        {
            OperandSpec::in("gradOutput", ShapeRule::kBroadcastsMutually)
                .dtype_equal_to(NNPLUG_MSE_LOSS_BACKWARD_SELF),
            OperandSpec::in("self", ShapeRule::kIteration),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually)
                .dtype_equal_to(NNPLUG_MSE_LOSS_BACKWARD_SELF),
            OperandSpec::out("out", ShapeRule::kEqualsIteration),
        },
        {kReductionAttr},
        {Check::kNull, Check::kDtype, Check::kAttrs, Check::kRank, Check::kShape},
    };
    schema.mean_count = MeanCount::kSelf;
    schema.promise = NumericPromise::kCanonicalBits;  // three exactly rounded operations
    schema.gradient_of = NNPLUG_OP_MSE_LOSS;
    return schema;
}

const OpSchema kForward = forward_schema();
const OpSchema kBackward = backward_schema();

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kBackward}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction,
                                         aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, out}, {reduction}, workspaceSize, executor);
}

aclnnStatus aclnnMseLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                         aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                 const aclTensor* target, int64_t reduction, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward, {gradOutput, self, target, out}, {reduction}, workspaceSize,
                               executor);
}

aclnnStatus aclnnMseLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
