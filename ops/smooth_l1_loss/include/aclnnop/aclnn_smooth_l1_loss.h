/* nnplug: CANN-compatible smooth L1 loss (forward). */
#ifndef ACLNNOP_ACLNN_SMOOTH_L1_LOSS_H_
#define ACLNNOP_ACLNN_SMOOTH_L1_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* z = |self - target| with self and target broadcast to each other; l = 0.5 z^2 / beta for
 * z < beta, else z - 0.5 beta (beta >= 0); reduction 0: result = l (the broadcast shape),
 * 1: mean(l), 2: sum(l) (result [] or [1]). */
ACLNN_API aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                        int64_t reduction, float beta, aclTensor* result,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnSmoothL1Loss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_SMOOTH_L1_LOSS_H_ */
