/* nnplug: CANN-compatible gradient of the per-pixel negative log-likelihood loss. */
#ifndef ACLNNOP_ACLNN_NLL_LOSS2D_BACKWARD_H_
#define ACLNNOP_ACLNN_NLL_LOSS2D_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aclnnNLLLossBackward for self (N, C, H, W) and target (N, H, W). CANN declares totalWeight
 * non-const here, and so does nnplug, so that programs compile unchanged. */
ACLNN_API aclnnStatus aclnnNLLLoss2dBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                             const aclTensor* self, const aclTensor* target,
                                                             const aclTensor* weight, int64_t reduction,
                                                             int64_t ignoreIndex, aclTensor* totalWeight,
                                                             aclTensor* out, uint64_t* workspaceSize,
                                                             aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnNLLLoss2dBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_NLL_LOSS2D_BACKWARD_H_ */
