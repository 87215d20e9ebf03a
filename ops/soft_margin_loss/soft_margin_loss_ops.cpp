// aclnnSoftMarginLoss and aclnnSoftMarginLossBackward: their schemas and entry points. The
// inputs broadcast to each other and promote (ShapeRule::kBroadcastsMutually, promoting());
// everything else is generic.
#include <aclnnop/aclnn_soft_margin_loss.h>
#include <aclnnop/aclnn_soft_margin_loss_backward.h>

#include "two_phase.h"

namespace nnplug {
namespace {

// Operands in the slot order of nnplug/op_slots.h.
//
// The loss, in CANN's op_api order: null, dtypes, then its shape check (ranks, the broadcast
// of self with target, out's shape). CANN checks no reduction (any value but 0 and 1 sums);
// nnplug refuses one outside 0..2 before the shapes, whose rule depends on it. A reduced out
// is 0-d only; over no elements the mean is NaN and the sum 0.
OpSchema forward_schema() {
    OpSchema schema{
        NNPLUG_OP_SOFT_MARGIN_LOSS,
        "aclnnSoftMarginLoss",
        {
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("out", ShapeRule::kIterationOrReduced),
        },
        {kReductionAttr},
        {Check::kNull, Check::kDtype, Check::kRank, Check::kAttrs, Check::kShape},
    };
    schema.empty_reduction_written = true;
    schema.reduced_shape = ReducedShape::kScalar;
    return schema;
}

// The gradient, in CANN's op_api order: null, dtypes (the three inputs promote together),
// then ranks, the broadcast of the three inputs and out's shape, which is the broadcast shape
// whatever the reduction. The mean divides by the broadcast element count, as CANN's kernel
// does (aten divides by self's own count; the two agree when self does not broadcast).
OpSchema backward_schema() {
    OpSchema schema{
        NNPLUG_OP_SOFT_MARGIN_LOSS_BACKWARD,
        "aclnnSoftMarginLossBackward",
        {
            OperandSpec::in("gradOutput", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("out", ShapeRule::kEqualsIteration),
        },
        {kReductionAttr},
        {Check::kNull, Check::kDtype, Check::kRank, Check::kAttrs, Check::kShape},
    };
    schema.gradient_of = NNPLUG_OP_SOFT_MARGIN_LOSS;
    return schema;
}

const OpSchema kForward = forward_schema();
const OpSchema kBackward = backward_schema();

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kBackward}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnSoftMarginLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                int64_t reduction, aclTensor* out, uint64_t* workspaceSize,
                                                aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, out}, {reduction}, workspaceSize, executor);
}

aclnnStatus aclnnSoftMarginLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSoftMarginLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                        const aclTensor* target, int64_t reduction,
                                                        aclTensor* out, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward, {gradOutput, self, target, out}, {reduction}, workspaceSize,
                               executor);
}

aclnnStatus aclnnSoftMarginLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
