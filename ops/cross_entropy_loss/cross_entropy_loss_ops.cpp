// aclnnCrossEntropyLoss and aclnnCrossEntropyLossGrad: their schemas and entry points. Ops with a
// class axis over logits (N, C); the reduction is CANN's word ("none", "mean", "sum"; null is
// "mean"). CANN's tiling refuses a bad word or labelSmoothing with 561002, and so does nnplug.
#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <aclnnop/aclnn_cross_entropy_loss_grad.h>

#include "two_phase.h"

namespace nnplug {
namespace {

constexpr DtypeSet kTargetDtypes = NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I32);

constexpr AttrSpec kReductionWordAttr = {NNPLUG_ATTR_REDUCTION,   "reductionOptional", 0, 0, nullptr,
                                         AttrType::kReductionWord};

// A negative ignoreIndex ignores nothing (CANN's reference and its newer kernels).
constexpr AttrSpec kCeIgnoreIndexAttr = {
    NNPLUG_ATTR_IGNORE_INDEX, "ignoreIndex", INT64_MIN, INT64_MAX, "an int64", AttrType::kInt64, 0, 0, true};

constexpr AttrSpec kLabelSmoothingAttr = {
    NNPLUG_ATTR_LABEL_SMOOTHING, "labelSmoothing", 0, 0, "in [0, 1]", AttrType::kDouble, 0.0, 1.0};

constexpr AttrSpec kLseScaleAttr = {
    NNPLUG_ATTR_LSE_SQUARE_SCALE_FOR_ZLOSS, "lseSquareScaleForZloss", 0, 0, nullptr, AttrType::kDouble};

constexpr AttrSpec kReturnZlossAttr = {NNPLUG_ATTR_RETURN_ZLOSS, "returnZloss", 0, 0, nullptr,
                                       AttrType::kBool};

OperandSpec weight_operand() {
    return OperandSpec::in("weightOptional", ShapeRule::kClasses).dtypes(kFloat32Only).may_be_null();
}

// The loss: null, dtypes (target int64 or int32, weight float32, the outputs input's dtype),
// the attributes, then ranks and shapes. CANN requires zlossOut and lseForZlossOut and
// writes neither.
OpSchema forward_schema() {
    OpSchema schema{
        NNPLUG_OP_CROSS_ENTROPY_LOSS,
        "aclnnCrossEntropyLoss",
        {
            OperandSpec::in("input", ShapeRule::kIteration).of_ranks({2}),
            OperandSpec::in("target", ShapeRule::kClassRows).dtypes(kTargetDtypes),
            weight_operand(),
            OperandSpec::out("lossOut", ShapeRule::kClassRowsOrReduced)
                .dtype_equal_to(NNPLUG_CROSS_ENTROPY_LOSS_INPUT),
            OperandSpec::out("logProbOut", ShapeRule::kEqualsIteration)
                .dtype_equal_to(NNPLUG_CROSS_ENTROPY_LOSS_INPUT),
            OperandSpec::out("zlossOut", ShapeRule::kIgnored).dtype_equal_to(NNPLUG_CROSS_ENTROPY_LOSS_INPUT),
            OperandSpec::out("lseForZlossOut", ShapeRule::kIgnored)
                .dtype_equal_to(NNPLUG_CROSS_ENTROPY_LOSS_INPUT),
        },
        {kReductionWordAttr, kCeIgnoreIndexAttr, kLabelSmoothingAttr, kLseScaleAttr, kReturnZlossAttr},
        {Check::kNull, Check::kDtype, Check::kAttrs, Check::kRank, Check::kShape},
    };
    schema.empty_reduction_written = true;
    schema.mean_count = MeanCount::kWeights;
    schema.class_axis = ClassAxis::kSecondOrOnly;
    schema.attr_status = ACLNN_ERR_INNER_TILING_ERROR;
    return schema;
}

// The gradient from logProb: gradLoss and out have logProb's dtype.
OpSchema grad_schema() {
    OpSchema schema{
        NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD,
        "aclnnCrossEntropyLossGrad",
        {
            OperandSpec::in("gradLoss", ShapeRule::kClassRowsOrReduced)
                .dtype_equal_to(NNPLUG_CROSS_ENTROPY_LOSS_GRAD_LOG_PROB),
            OperandSpec::in("logProb", ShapeRule::kIteration).of_ranks({2}),
            OperandSpec::in("target", ShapeRule::kClassRows).dtypes(kTargetDtypes),
            weight_operand(),
            OperandSpec::in("gradZlossOptional", ShapeRule::kIgnored).may_be_null(),
            OperandSpec::in("lseForZlossOptional", ShapeRule::kIgnored).may_be_null(),
            OperandSpec::out("out", ShapeRule::kEqualsIteration)
                .dtype_equal_to(NNPLUG_CROSS_ENTROPY_LOSS_GRAD_LOG_PROB),
        },
        {kReductionWordAttr, kCeIgnoreIndexAttr, kLabelSmoothingAttr, kLseScaleAttr},
        {Check::kNull, Check::kDtype, Check::kAttrs, Check::kRank, Check::kShape},
    };
    schema.mean_count = MeanCount::kWeights;
    schema.class_axis = ClassAxis::kSecondOrOnly;
    schema.attr_status = ACLNN_ERR_INNER_TILING_ERROR;
    schema.gradient_of = NNPLUG_OP_CROSS_ENTROPY_LOSS;
    return schema;
}

const OpSchema kForward = forward_schema();
const OpSchema kGrad = grad_schema();

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kGrad}};

}  // namespace
}  // namespace nnplug

// CANN declares the reduction `char*`; the prototypes keep it so programs compile unchanged.
// NOLINTBEGIN(readability-non-const-parameter)
extern "C" {

aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(const aclTensor* input, const aclTensor* target,
                                                  const aclTensor* weightOptional, char* reductionOptional,
                                                  int64_t ignoreIndex, double labelSmoothing,
                                                  double lseSquareScaleForZloss, bool returnZloss,
                                                  const aclTensor* lossOut, const aclTensor* logProbOut,
                                                  const aclTensor* zlossOut, const aclTensor* lseForZlossOut,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
    const char* reduction = reductionOptional;
    return nnplug::first_phase(nnplug::kForward,
                               {input, target, weightOptional, lossOut, logProbOut, zlossOut, lseForZlossOut},
                               {reduction, ignoreIndex, labelSmoothing, lseSquareScaleForZloss, returnZloss},
                               workspaceSize, executor);
}

aclnnStatus aclnnCrossEntropyLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(
    const aclTensor* gradLoss, const aclTensor* logProb, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* gradZlossOptional, const aclTensor* lseForZlossOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing, double lseSquareScaleForZloss,
    const aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
    const char* reduction = reductionOptional;
    return nnplug::first_phase(
        nnplug::kGrad,
        {gradLoss, logProb, target, weightOptional, gradZlossOptional, lseForZlossOptional, out},
        {reduction, ignoreIndex, labelSmoothing, lseSquareScaleForZloss}, workspaceSize, executor);
}

aclnnStatus aclnnCrossEntropyLossGrad(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                      aclrtStream stream) {
    return nnplug::second_phase(nnplug::kGrad, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
// NOLINTEND(readability-non-const-parameter)
