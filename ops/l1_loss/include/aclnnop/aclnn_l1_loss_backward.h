/* nnplug: CANN-compatible L1 (mean absolute error) loss (gradient). */
#ifndef ACLNNOP_ACLNN_L1_LOSS_BACKWARD_H_
#define ACLNNOP_ACLNN_L1_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gradInput = sign(self - target) * gradOutput (sign 0 where self == target), divided by the
 * broadcast element count for reduction 1; gradOutput, self and target broadcast to each
 * other and gradInput has their broadcast shape. */
ACLNN_API aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                          const aclTensor* target, int64_t reduction,
                                                          aclTensor* gradInput, uint64_t* workspaceSize,
                                                          aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnL1LossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_L1_LOSS_BACKWARD_H_ */
