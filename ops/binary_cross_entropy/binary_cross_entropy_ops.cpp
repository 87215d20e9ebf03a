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

// Operands in the slot order of nnplug/op_slots.h.
const OpSchema kForward = {
    NNPLUG_OP_BINARY_CROSS_ENTROPY,
    "aclnnBinaryCrossEntropy",
    {
        OperandSpec::in("self", ShapeRule::kIteration).same_format_as_self().promoting(),
        OperandSpec::in("target", ShapeRule::kEqualsIteration).same_format_as_self().promoting(),
        OperandSpec::in("weight", ShapeRule::kBroadcastsTo).may_be_null().same_format_as_self().promoting(),
        OperandSpec::out("out", ShapeRule::kIterationOrReduced),
    },
    {kReductionAttr},
    kCheckOrder,
};

const OpSchema kBackward = [] {
    OpSchema schema{
        NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD,
        "aclnnBinaryCrossEntropyBackward",
        {
            OperandSpec::in("gradOutput", ShapeRule::kBroadcastsTo).promoting(),
            OperandSpec::in("self", ShapeRule::kIteration).same_format_as_self().promoting(),
            OperandSpec::in("target", ShapeRule::kBroadcastsTo).same_format_as_self().promoting(),
            OperandSpec::in("weightOptional", ShapeRule::kBroadcastsTo)
                .may_be_null()
                .same_format_as_self()
                .promoting(),
            OperandSpec::out("out", ShapeRule::kEqualsIteration),
        },
        {kReductionAttr},
        kCheckOrder,
    };
    schema.promise = NumericPromise::kCanonicalBits;  // every operation of the expression is exactly rounded
    schema.gradient_of = NNPLUG_OP_BINARY_CROSS_ENTROPY;
    return schema;
}();

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
