/* nnplug: CANN-compatible gradient of the cross-entropy loss. */
#ifndef ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_GRAD_H_
#define ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_GRAD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The gradient of aclnnCrossEntropyLoss with respect to its input, from the forward's
 * logProb (N, C): p = exp(logProb), g = gradLoss[n] ("none"), gradLoss ("sum") or
 * gradLoss / sum of w[t] over the rows counted ("mean"), then
 * out[n, c] = g * ((1 - labelSmoothing) * w[t] * (p[c] - [c == t]) + labelSmoothing / C * (p[c] * sum_k w[k]
 * - w[c])) and 0 for an ignored row. Label smoothing is supported (CANN supports only 0.0). gradZlossOptional
 * and lseForZlossOptional are not read. */
ACLNN_API aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(
    const aclTensor* gradLoss, const aclTensor* logProb, const aclTensor* target,
    const aclTensor* weightOptional, const aclTensor* gradZlossOptional, const aclTensor* lseForZlossOptional,
    char* reductionOptional, int64_t ignoreIndex, double labelSmoothing, double lseSquareScaleForZloss,
    const aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnCrossEntropyLossGrad(void* workspace, uint64_t workspaceSize,
                                                aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_GRAD_H_ */
