/* nnplug: CANN-compatible negative log-likelihood loss over classes, per pixel. */
#ifndef ACLNNOP_ACLNN_NLL_LOSS2D_H_
#define ACLNNOP_ACLNN_NLL_LOSS2D_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aclnnNLLLoss for self (N, C, H, W) and target (N, H, W): out is (N, H, W) for reduction 0. */
ACLNN_API aclnnStatus aclnnNLLLoss2dGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                     const aclTensor* weight, int64_t reduction,
                                                     int64_t ignoreIndex, aclTensor* out,
                                                     aclTensor* totalWeightOut, uint64_t* workspaceSize,
                                                     aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnNLLLoss2d(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_NLL_LOSS2D_H_ */
