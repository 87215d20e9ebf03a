// aclnnNLLLoss, aclnnNLLLoss2d and their backwards: their schemas and entry points. Ops with
// a class axis: self is (N, C) or (C), or (N, C, H, W) for the 2d forms; the target lacks the
// axis, the weight (C) is read at each target's class. The mean divides by the weight the
// counted rows sum to, which only the data can tell: the kernel computes it (totalWeightOut),
// and the backward divides by the totalWeight it is given.
#include <aclnnop/aclnn_nll_loss.h>
#include <aclnnop/aclnn_nll_loss2d.h>
#include <aclnnop/aclnn_nll_loss2d_backward.h>
#include <aclnnop/aclnn_nll_loss_backward.h>

#include "two_phase.h"

namespace nnplug {
namespace {

constexpr DtypeSet kTargetDtypes = NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I32) |
                                   NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_U8);

// self is (C) or (N, C); (N, C, H, W) for the 2d forms. The target lacks the class axis.
OperandSpec self_operand(bool two_d) {
    const OperandSpec self = OperandSpec::in("self", ShapeRule::kIteration);
    return two_d ? self.of_ranks({4}) : self.of_ranks({1, 2});
}

OperandSpec target_operand(bool two_d) {
    const OperandSpec target = OperandSpec::in("target", ShapeRule::kClassRows).dtypes(kTargetDtypes);
    return two_d ? target.of_ranks({3}) : target.of_ranks({0, 1});
}

// The loss, for self of the given ranks and a target of one dim fewer. CANN's order: null,
// dtypes (weight has self's; out and totalWeightOut are float types self casts to; NLLLoss
// checks self's own set after those, NLLLoss2d before), the reduction, then ranks and
// shapes. The weight is required, as in CANN.
OpSchema forward_schema(nnplug_op_kind kind, const char* api, bool two_d) {
    OpSchema schema{
        kind,
        api,
        {
            self_operand(two_d),
            target_operand(two_d),
            OperandSpec::in("weight", ShapeRule::kClasses).dtype_equal_to(NNPLUG_NLL_LOSS_SELF),
            OperandSpec::out("out", ShapeRule::kClassRowsOrReduced),
            OperandSpec::out("totalWeightOut", ShapeRule::kOneElement).empty_writes(EmptyValue::kZero),
        },
        {kReductionAttr, kIgnoreIndexAttr},
        {Check::kNull, Check::kDtype, Check::kPromotion, Check::kAttrs, Check::kRank, Check::kShape},
    };
    const DtypeStep self_step{NNPLUG_NLL_LOSS_SELF, DtypeRule::kInSet};
    schema.dtype_steps = {{NNPLUG_NLL_LOSS_WEIGHT, DtypeRule::kEqualsOther},
                          {NNPLUG_NLL_LOSS_OUT, DtypeRule::kCastFromSelf},
                          {NNPLUG_NLL_LOSS_TOTAL_WEIGHT, DtypeRule::kCastFromSelf},
                          {NNPLUG_NLL_LOSS_TARGET, DtypeRule::kInSet}};
    schema.dtype_steps.insert(two_d ? schema.dtype_steps.begin() : schema.dtype_steps.end() - 1, self_step);
    schema.empty_reduction_written = true;
    schema.mean_count = MeanCount::kWeights;
    schema.class_axis = ClassAxis::kSecondOrOnly;
    return schema;
}

// NLLLossBackward: the equalities to self, out castable from self, then self's and target's
// sets; NLLLoss2dBackward: self's set, then every equality (out's too), then target's set.
std::vector<DtypeStep> backward_dtype_steps(bool two_d) {
    const DtypeStep self{NNPLUG_NLL_LOSS_BACKWARD_SELF, DtypeRule::kInSet};
    const DtypeStep target{NNPLUG_NLL_LOSS_BACKWARD_TARGET, DtypeRule::kInSet};
    const DtypeStep grad{NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT, DtypeRule::kEqualsOther};
    const DtypeStep weight{NNPLUG_NLL_LOSS_BACKWARD_WEIGHT, DtypeRule::kEqualsOther};
    const DtypeStep total{NNPLUG_NLL_LOSS_BACKWARD_TOTAL_WEIGHT, DtypeRule::kEqualsOther};
    if (two_d)
        return {self, grad, weight, {NNPLUG_NLL_LOSS_BACKWARD_OUT, DtypeRule::kEqualsOther}, total, target};
    return {weight, grad, total, {NNPLUG_NLL_LOSS_BACKWARD_OUT, DtypeRule::kCastFromSelf}, self, target};
}

// The gradient: gradOutput, weight and totalWeight have self's dtype; out is self's shape.
// NLLLoss2dBackward checks shapes before the reduction and wants out in self's dtype. Each
// API's dtype checks run in its own order (dtype_steps).
OpSchema backward_schema(nnplug_op_kind kind, const char* api, bool two_d) {
    OperandSpec out = OperandSpec::out("out", ShapeRule::kEqualsIteration);
    if (two_d) out = out.dtype_equal_to(NNPLUG_NLL_LOSS_BACKWARD_SELF);
    OpSchema schema{
        kind,
        api,
        {
            OperandSpec::in("gradOutput", ShapeRule::kClassRowsOrReduced)
                .dtype_equal_to(NNPLUG_NLL_LOSS_BACKWARD_SELF),
            self_operand(two_d),
            target_operand(two_d),
            OperandSpec::in("weight", ShapeRule::kClasses).dtype_equal_to(NNPLUG_NLL_LOSS_BACKWARD_SELF),
            OperandSpec::in("totalWeight", ShapeRule::kOneElement)
                .dtype_equal_to(NNPLUG_NLL_LOSS_BACKWARD_SELF),
            out,
        },
        {kReductionAttr, kIgnoreIndexAttr},
        two_d ? std::vector<Check>{Check::kNull, Check::kDtype, Check::kPromotion, Check::kRank,
                                   Check::kShape, Check::kAttrs}
              : std::vector<Check>{Check::kNull, Check::kDtype, Check::kPromotion, Check::kAttrs,
                                   Check::kRank, Check::kShape},
    };
    schema.dtype_steps = backward_dtype_steps(two_d);
    schema.mean_count = MeanCount::kWeights;
    schema.class_axis = ClassAxis::kSecondOrOnly;
    schema.gradient_of = two_d ? NNPLUG_OP_NLL_LOSS_2D : NNPLUG_OP_NLL_LOSS;
    return schema;
}

const OpSchema kForward = forward_schema(NNPLUG_OP_NLL_LOSS, "aclnnNLLLoss", false);
const OpSchema kForward2d = forward_schema(NNPLUG_OP_NLL_LOSS_2D, "aclnnNLLLoss2d", true);
const OpSchema kBackward = backward_schema(NNPLUG_OP_NLL_LOSS_BACKWARD, "aclnnNLLLossBackward", false);
const OpSchema kBackward2d = backward_schema(NNPLUG_OP_NLL_LOSS_2D_BACKWARD, "aclnnNLLLoss2dBackward", true);

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kForward2d},
                                         SchemaRegistration{kBackward}, SchemaRegistration{kBackward2d}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                         const aclTensor* weight, int64_t reduction, int64_t ignoreIndex,
                                         aclTensor* out, aclTensor* totalWeightOut, uint64_t* workspaceSize,
                                         aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, weight, out, totalWeightOut},
                               {reduction, ignoreIndex}, workspaceSize, executor);
}

aclnnStatus aclnnNLLLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                         aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnNLLLoss2dGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                           const aclTensor* weight, int64_t reduction, int64_t ignoreIndex,
                                           aclTensor* out, aclTensor* totalWeightOut, uint64_t* workspaceSize,
                                           aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward2d, {self, target, weight, out, totalWeightOut},
                               {reduction, ignoreIndex}, workspaceSize, executor);
}

aclnnStatus aclnnNLLLoss2d(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                           aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward2d, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                 const aclTensor* target, const aclTensor* weight,
                                                 int64_t reduction, int64_t ignoreIndex,
                                                 const aclTensor* totalWeight, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward, {gradOutput, self, target, weight, totalWeight, out},
                               {reduction, ignoreIndex}, workspaceSize, executor);
}

aclnnStatus aclnnNLLLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnNLLLoss2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                   const aclTensor* target, const aclTensor* weight,
                                                   int64_t reduction, int64_t ignoreIndex,
                                                   aclTensor* totalWeight, aclTensor* out,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward2d, {gradOutput, self, target, weight, totalWeight, out},
                               {reduction, ignoreIndex}, workspaceSize, executor);
}

aclnnStatus aclnnNLLLoss2dBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                   aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward2d, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
