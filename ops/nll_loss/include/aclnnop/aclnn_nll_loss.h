/* nnplug: CANN-compatible negative log-likelihood loss over classes. */
#ifndef ACLNNOP_ACLNN_NLL_LOSS_H_
#define ACLNNOP_ACLNN_NLL_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* l[n] = -weight[target[n]] * self[n, target[n]], 0 where target[n] == ignoreIndex; self is
 * (N, C) or (C) (then target is 0-d). reduction 0: out = l (N), 1: out = sum(l) / totalWeight,
 * 2: out = sum(l), out one element; totalWeightOut = the sum of weight[target[n]] over the rows
 * not ignored, written when reduction is not 0. A target outside [0, C) that is not
 * ignoreIndex is refused when the op runs. */
ACLNN_API aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                   const aclTensor* weight, int64_t reduction,
                                                   int64_t ignoreIndex, aclTensor* out,
                                                   aclTensor* totalWeightOut, uint64_t* workspaceSize,
                                                   aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnNLLLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_NLL_LOSS_H_ */
