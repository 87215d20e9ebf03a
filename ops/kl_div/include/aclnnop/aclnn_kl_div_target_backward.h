/* nnplug: CANN-compatible gradient of the Kullback-Leibler divergence loss w.r.t. target. */
#ifndef ACLNNOP_ACLNN_KL_DIV_TARGET_BACKWARD_H_
#define ACLNNOP_ACLNN_KL_DIV_TARGET_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gradTarget = gradOutput * (log(target) - self + 1) (gradOutput * exp(target) * (target - self
 * + 1) when logTarget), divided by the element count for reduction 1 and by the first
 * dimension for 3 (batchmean); gradTarget has target's shape. */
ACLNN_API aclnnStatus aclnnKlDivTargetBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                               const aclTensor* self, const aclTensor* target,
                                                               int64_t reduction, bool logTarget,
                                                               aclTensor* gradTarget, uint64_t* workspaceSize,
                                                               aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnKlDivTargetBackward(void* workspace, uint64_t workspaceSize,
                                               aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_KL_DIV_TARGET_BACKWARD_H_ */
