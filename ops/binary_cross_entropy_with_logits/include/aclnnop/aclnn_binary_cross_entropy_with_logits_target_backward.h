/* nnplug: CANN-compatible gradient of the binary cross-entropy loss on logits w.r.t. target. */
#ifndef ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD_H_
#define ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gradTarget = gradOutput * weight * (-self - (posWeight - 1) * log(sigmoid(self))) [* 1/N for mean];
 * gradTarget's dtype equals target's. */
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* posWeightOptional, int64_t reduction,
    aclTensor* gradTarget, uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackward(void* workspace, uint64_t workspaceSize,
                                                                      aclOpExecutor* executor,
                                                                      aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD_H_ */
