/* nnplug: CANN-compatible smooth L1 loss (gradient). */
#ifndef ACLNNOP_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H_
#define ACLNNOP_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x = self - target: gradInput = -gradOut for x <= -beta, gradOut for x >= beta, else
 * x * gradOut / beta; divided by the broadcast element count for reduction 1. gradOut, self
 * and target broadcast to each other and gradInput has their broadcast shape. */
ACLNN_API aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(
    const aclTensor* gradOut, const aclTensor* self, const aclTensor* target, int64_t reduction, float beta,
    aclTensor* gradInput, uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnSmoothL1LossBackward(void* workspace, uint64_t workspaceSize,
                                                aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_SMOOTH_L1_LOSS_BACKWARD_H_ */
