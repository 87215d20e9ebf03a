/* nnplug: CANN-compatible L1 (mean absolute error) loss (forward). */
#ifndef ACLNNOP_ACLNN_L1_LOSS_H_
#define ACLNNOP_ACLNN_L1_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* l = |self - target| with self and target broadcast to each other;
 * reduction 0: out = l (the broadcast shape), 1: out = mean(l), 2: out = sum(l) (out 0-d). */
ACLNN_API aclnnStatus aclnnL1LossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                  int64_t reduction, aclTensor* out, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnL1Loss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_L1_LOSS_H_ */
