/* nnplug: CANN-compatible Kullback-Leibler divergence loss. */
#ifndef ACLNNOP_ACLNN_KL_DIV_H_
#define ACLNNOP_ACLNN_KL_DIV_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = target * (log(target) - self) per element of the broadcast of self and target
 * (exp(target) * (target - self) when logTarget), or for reduction 1 its mean, 2 its sum, 3
 * (batchmean) its sum divided by self's first dimension, as a 0-d out. */
ACLNN_API aclnnStatus aclnnKlDivGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                 int64_t reduction, bool logTarget, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnKlDiv(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_KL_DIV_H_ */
