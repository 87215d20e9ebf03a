/* nnplug: CANN-compatible gradient of the mean squared error loss. */
#ifndef ACLNNOP_ACLNN_MSE_LOSS_BACKWARD_H_
#define ACLNNOP_ACLNN_MSE_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = gradOutput * 2 * (self - target), divided by self's element count for reduction 1
 * (mean); gradOutput, self and target broadcast to each other and out has their shape. */
ACLNN_API aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                           const aclTensor* target, int64_t reduction,
                                                           aclTensor* out, uint64_t* workspaceSize,
                                                           aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnMseLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_MSE_LOSS_BACKWARD_H_ */
