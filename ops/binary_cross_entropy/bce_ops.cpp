// aclnnBinaryCrossEntropy and aclnnBinaryCrossEntropyBackward: their schemas and
// their entry points. Everything else (checks, descriptor, executors) is generic.
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>

#include "two_phase.h"

namespace nnplug {
namespace {

// Both ops check in this order: null, rank, dtype (and the SoC's rule), format, shape,
// reduction, promotion.
const std::vector<Check> kCheckOrder = {Check::kNull,  Check::kRank,  Check::kDtype,    Check::kFormat,
                                        Check::kShape, Check::kAttrs, Check::kPromotion};

// Slots as in nnplug/op_slots.h. Columns: name, output, optional, shape rule, same format
// as self, takes part in promotion.
const OpSchema kForward = {
    NNPLUG_OP_BCE_FORWARD,
    "aclnnBinaryCrossEntropy",
    {
        {"self", false, false, ShapeRule::kIteration, true, true},
        {"target", false, false, ShapeRule::kEqualsIteration, true, true},
        {"weight", false, true, ShapeRule::kBroadcastsTo, true, true},
        {"out", true, false, ShapeRule::kIterationOrReduced, false, false},
    },
    {kReductionAttr},
    kCheckOrder,
};

const OpSchema kBackward = {
    NNPLUG_OP_BCE_BACKWARD,
    "aclnnBinaryCrossEntropyBackward",
    {
        {"gradOutput", false, false, ShapeRule::kBroadcastsTo, false, true},
        {"self", false, false, ShapeRule::kIteration, true, true},
        {"target", false, false, ShapeRule::kBroadcastsTo, true, true},
        {"weightOptional", false, true, ShapeRule::kBroadcastsTo, true, true},
        {"out", true, false, ShapeRule::kEqualsIteration, false, false},
    },
    {kReductionAttr},
    kCheckOrder,
    false,
    ReducedShape::kScalarOrOne,
    MeanCount::kIteration,
    NumericPromise::kCanonicalBits,  // every operation of the expression is exactly rounded
};

const SchemaRegistration kPublished[] = {SchemaRegistration{kForward}, SchemaRegistration{kBackward}};

}  // namespace
}  // namespace nnplug

extern "C" {

aclnnStatus aclnnBinaryCrossEntropyGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                    const aclTensor* weight, int64_t reduction,
                                                    aclTensor* out, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kForward, {self, target, weight, out}, {reduction}, workspaceSize,
                               executor);
}

aclnnStatus aclnnBinaryCrossEntropy(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                    aclrtStream stream) {
    return nnplug::second_phase(nnplug::kForward, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                            const aclTensor* self, const aclTensor* target,
                                                            const aclTensor* weightOptional,
                                                            int64_t reduction, aclTensor* out,
                                                            uint64_t* workspaceSize,
                                                            aclOpExecutor** executor) {
    return nnplug::first_phase(nnplug::kBackward, {gradOutput, self, target, weightOptional, out},
                               {reduction}, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream) {
    return nnplug::second_phase(nnplug::kBackward, workspace, workspaceSize, executor, stream);
}

}  // extern "C"
