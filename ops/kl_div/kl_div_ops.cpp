// aclnnKlDiv, aclnnKlDivBackward and aclnnKlDivTargetBackward: their schemas and entry points.
// Reduction 3 (batchmean) divides the sum by self's first dimension (kBatchmeanReductionAttr);
// logTarget is a bool attribute the kernels read (NNPLUG_ATTR_LOG_TARGET).
#include <aclnnop/aclnn_kl_div.h>
#include <aclnnop/aclnn_kl_div_backward.h>
#include <aclnnop/aclnn_kl_div_target_backward.h>

#include "two_phase.h"

namespace nnplug {
namespace {

constexpr AttrSpec kLogTargetAttr = {NNPLUG_ATTR_LOG_TARGET, "logTarget", 0, 0, nullptr, AttrType::kBool};

// Operands in the slot order of nnplug/op_slots.h.
//
// The loss, in CANN's op_api order: null, dtypes, the promoted type castable to out, ranks,
// reduction (0..3), then the broadcast of self with target and out's shape. A reduced out is
// [] or [1]; over no elements the mean is NaN, the sum 0, batchmean 0 / self.size(0).
OpSchema forward_schema() {
    OpSchema schema{
        NNPLUG_OP_KL_DIV,
        "aclnnKlDiv",
        {
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("out", ShapeRule::kIterationOrReduced),
        },
        {kBatchmeanReductionAttr, kLogTargetAttr},
        {Check::kNull, Check::kDtype, Check::kPromotion, Check::kRank, Check::kAttrs, Check::kShape},
    };
    schema.empty_reduction_written = true;
    return schema;
}

// The gradients, in CANN's op_api order: null, dtypes, ranks, shapes; CANN checks no
// reduction, nnplug refuses one outside 0..3 before the shapes. The gradient w.r.t. self has
// self's shape: target and gradOutput broadcast to it (CANN also takes a target that enlarges
// self and sums the gradient back; nnplug refuses that shape).
OpSchema backward_schema() {
    OpSchema schema{
        NNPLUG_OP_KL_DIV_BACKWARD,
        "aclnnKlDivBackward",
        {
            OperandSpec::in("gradOutput", ShapeRule::kBroadcastsTo).promoting(),
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsTo).promoting(),
            OperandSpec::out("out", ShapeRule::kEqualsIteration),
        },
        {kBatchmeanReductionAttr, kLogTargetAttr},
        {Check::kNull, Check::kDtype, Check::kRank, Check::kAttrs, Check::kShape},
    };
    schema.gradient_of = NNPLUG_OP_KL_DIV;
    return schema;
}

// The gradient w.r.t. target has the broadcast shape of self and target (CANN: target's shape,
// summing the gradient back where target broadcasts; the two agree when target does not).
OpSchema target_backward_schema() {
    OpSchema schema{
        NNPLUG_OP_KL_DIV_TARGET_BACKWARD,
        "aclnnKlDivTargetBackward",
        {
            OperandSpec::in("gradOutput", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::in("self", ShapeRule::kIteration).promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsMutually).promoting(),
            OperandSpec::out("gradTarget", ShapeRule::kEqualsIteration),
        },
        {kBatchmeanReductionAttr, kLogTargetAttr},
        {Check::kNull, Check::kDtype, Check::kRank, Check::kAttrs, Check::kShape},
    };
    schema.gradient_of = NNPLUG_OP_KL_DIV;  // with respect to target (the kit's gradient_wrt)
    return schema;
}

const OpSchema kForward = forward_schema();
const OpSchema kBackward = backward_schema();
const OpSchema kTargetBackward = target_backward_schema();

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kBackward},
                                         SchemaRegistration{kTargetBackward}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnKlDivGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction,
                                       bool logTarget, aclTensor* out, uint64_t* workspaceSize,
                                       aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, out}, {reduction, logTarget}, workspaceSize,
                               executor);
}

aclnnStatus aclnnKlDiv(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnKlDivBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                               const aclTensor* target, int64_t reduction, bool logTarget,
                                               aclTensor* out, uint64_t* workspaceSize,
                                               aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward, {gradOutput, self, target, out}, {reduction, logTarget},
                               workspaceSize, executor);
}

aclnnStatus aclnnKlDivBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                               aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnKlDivTargetBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                     const aclTensor* target, int64_t reduction,
                                                     bool logTarget, aclTensor* gradTarget,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kTargetBackward, {gradOutput, self, target, gradTarget},
                               {reduction, logTarget}, workspaceSize, executor);
}

aclnnStatus aclnnKlDivTargetBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream) {
    return nnplug::second_phase(nnplug::kTargetBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
