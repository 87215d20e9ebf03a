/* nnplug: CANN-compatible gradient of the Kullback-Leibler divergence loss w.r.t. self. */
#ifndef ACLNNOP_ACLNN_KL_DIV_BACKWARD_H_
#define ACLNNOP_ACLNN_KL_DIV_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = -target * gradOutput (-exp(target) * gradOutput when logTarget), divided by the element
 * count for reduction 1 and by self's first dimension for 3 (batchmean); out has self's shape. */
ACLNN_API aclnnStatus aclnnKlDivBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                         const aclTensor* target, int64_t reduction,
                                                         bool logTarget, aclTensor* out,
                                                         uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnKlDivBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                         aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_KL_DIV_BACKWARD_H_ */
