/* nnplug: CANN-compatible gradient of the binary cross-entropy loss. */
#ifndef ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H_
#define ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = gradOutput * weight * (self - target) / max(self * (1 - self), 1e-12) [* 1/N for mean] */
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* target,
    const aclTensor* weightOptional, int64_t reduction, aclTensor* out, uint64_t* workspaceSize,
    aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyBackward(void* workspace, uint64_t workspaceSize,
                                                      aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_BACKWARD_H_ */
