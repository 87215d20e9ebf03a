/* nnplug: CANN-compatible cross-entropy loss over classes. */
#ifndef ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_H_
#define ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For input (N, C) and class indices target (N): logProbOut = log_softmax(input) over C;
 * l[n] = (1 - labelSmoothing) * -w[t] * logProb[n, t] + labelSmoothing / C * -sum_c w[c] * logProb[n, c]
 * with t = target[n] and w = weightOptional (1 when null), 0 for a row whose target is
 * ignoreIndex (a negative ignoreIndex ignores nothing). reductionOptional "none": lossOut = l (N);
 * "sum": sum(l); "mean" (the default for null): sum(l) / sum of w[t] over the rows counted. A
 * target outside [0, C) is refused when the op runs. zlossOut and lseForZlossOut must not be
 * null; as in CANN, they are not written. */
ACLNN_API aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(
    const aclTensor* input, const aclTensor* target, const aclTensor* weightOptional, char* reductionOptional,
    int64_t ignoreIndex, double labelSmoothing, double lseSquareScaleForZloss, bool returnZloss,
    const aclTensor* lossOut, const aclTensor* logProbOut, const aclTensor* zlossOut,
    const aclTensor* lseForZlossOut, uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnCrossEntropyLoss(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_CROSS_ENTROPY_LOSS_H_ */
