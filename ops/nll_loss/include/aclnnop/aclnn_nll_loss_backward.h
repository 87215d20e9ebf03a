/* nnplug: CANN-compatible gradient of the negative log-likelihood loss. */
#ifndef ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_
#define ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[n, c] = -weight[c] * g for c == target[n] (not ignoreIndex), 0 elsewhere; g is gradOutput[n]
 * for reduction 0, gradOutput for 2 and gradOutput / totalWeight for 1 (totalWeight as given,
 * the forward's totalWeightOut). out has self's shape. */
ACLNN_API aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                           const aclTensor* target, const aclTensor* weight,
                                                           int64_t reduction, int64_t ignoreIndex,
                                                           const aclTensor* totalWeight, aclTensor* out,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnNLLLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_ */
