// aclnnBinaryCrossEntropyWithLogits, its Backward (gradient w.r.t. self) and its
// TargetBackward (gradient w.r.t. target): their schemas and entry points.
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>

#include "two_phase.h"

namespace nnplug {
namespace {

// Operands in the slot order of nnplug/op_slots.h.
//
// The loss checks null, dtypes, reduction, then ranks and shapes; target's shape is
// checked even for an empty self, and the reduced out of an empty self gets the mean's
// NaN or the sum's 0. weight and posWeight stay out of the promotion: they are rounded to
// the promoted type of self and target (NNPLUG_ATTR_PROMOTED_DTYPE).
OpSchema forward_schema() {
    OpSchema schema{
        NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS,
        "aclnnBinaryCrossEntropyWithLogits",
        {
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kEqualsIterationEvenEmpty).promoting(),
            OperandSpec::in("weightOptional", ShapeRule::kBroadcastsTo)
                .may_be_null()
                .rounded_to_promoted_dtype(),
            OperandSpec::in("posWeightOptional", ShapeRule::kBroadcastsTo)
                .may_be_null()
                .rounded_to_promoted_dtype(),
            OperandSpec::out("out", ShapeRule::kIterationOrReduced)
                .dtype_equal_to(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET),
        },
        {kReductionAttr},
        {Check::kNull, Check::kDtype, Check::kAttrs, Check::kRank, Check::kShape},
    };
    schema.empty_reduction_written = true;
    schema.promise = NumericPromise::kCanonicalOrder;  // only exp and log are the backend's own
    return schema;
}

// Both gradients: null, ranks, dtypes, formats (self, target and the output agree),
// shapes, reduction, promotion. They differ in the output's name only.
OpSchema backward_schema(nnplug_op_kind kind, const char* api, const char* output) {
    OpSchema schema{
        kind,
        api,
        {
            OperandSpec::in("gradOutput", ShapeRule::kBroadcastsTo).promoting(),
            OperandSpec::in("self", ShapeRule::kIteration).same_format_as_self().promoting(),
            OperandSpec::in("target", ShapeRule::kEqualsIteration).same_format_as_self().promoting(),
            OperandSpec::in("weightOptional", ShapeRule::kBroadcastsTo).may_be_null().promoting(),
            OperandSpec::in("posWeightOptional", ShapeRule::kBroadcastsTo).may_be_null().promoting(),
            OperandSpec::out(output, ShapeRule::kEqualsIteration)
                .same_format_as_self()
                .dtype_equal_to(NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET),
        },
        {kReductionAttr},
        {Check::kNull, Check::kRank, Check::kDtype, Check::kFormat, Check::kShape, Check::kAttrs,
         Check::kPromotion},
    };
    schema.promise = NumericPromise::kCanonicalOrder;  // only exp and log are the backend's own
    // The gradient with respect to self; the target's (gradTarget) has no such link.
    if (kind == NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD)
        schema.gradient_of = NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS;
    return schema;
}

const OpSchema kForward = forward_schema();
const OpSchema kBackward = backward_schema(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD,
                                           "aclnnBinaryCrossEntropyWithLogitsBackward", "out");
const OpSchema kTargetBackward =
    backward_schema(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD,
                    "aclnnBinaryCrossEntropyWithLogitsTargetBackward", "gradTarget");

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kBackward},
                                         SchemaRegistration{kTargetBackward}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                              const aclTensor* weightOptional,
                                                              const aclTensor* posWeightOptional,
                                                              int64_t reduction, aclTensor* out,
                                                              uint64_t* workspaceSize,
                                                              aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, weightOptional, posWeightOptional, out},
                               {reduction}, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyWithLogits(void* workspace, uint64_t workspaceSize,
                                              aclOpExecutor* executor, aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* posWeightOptional, int64_t reduction, aclTensor* out,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward,
                               {gradOutput, self, target, weightOptional, posWeightOptional, out},
                               {reduction}, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackward(void* workspace, uint64_t workspaceSize,
                                                      aclOpExecutor* executor, aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* posWeightOptional, int64_t reduction,
    aclTensor* gradTarget, uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kTargetBackward,
                               {gradOutput, self, target, weightOptional, posWeightOptional, gradTarget},
                               {reduction}, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackward(void* workspace, uint64_t workspaceSize,
                                                            aclOpExecutor* executor, aclrtStream stream) {
    return nnplug::second_phase(nnplug::kTargetBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
