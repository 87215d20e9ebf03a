/* nnplug: CANN-compatible soft margin loss (the two-class logistic loss on ±1 targets). */
#ifndef ACLNNOP_ACLNN_SOFT_MARGIN_LOSS_H_
#define ACLNNOP_ACLNN_SOFT_MARGIN_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = log(1 + exp(-target * self)) per element of the broadcast of self and target, or its
 * mean (reduction 1) or sum (reduction 2) as a 0-d out. */
ACLNN_API aclnnStatus aclnnSoftMarginLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                          int64_t reduction, aclTensor* out,
                                                          uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnSoftMarginLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_SOFT_MARGIN_LOSS_H_ */
