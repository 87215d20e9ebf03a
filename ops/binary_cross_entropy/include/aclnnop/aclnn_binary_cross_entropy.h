/* nnplug: CANN-compatible binary cross-entropy loss (forward). */
#ifndef ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_H_
#define ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reduction argument's values, declared here as CANN declares them (unscoped, so C and
 * C++ code written for CANN can pass Mean or Sum unchanged). */
enum Reduction { None = 0, Mean = 1, Sum = 2 };

/* l = -weight * (target * max(ln(self), -100) + (1 - target) * max(ln(1 - self), -100));
 * reduction 0: out = l, 1: out = mean(l), 2: out = sum(l). */
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                              const aclTensor* weight, int64_t reduction,
                                                              aclTensor* out, uint64_t* workspaceSize,
                                                              aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropy(void* workspace, uint64_t workspaceSize,
                                              aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_H_ */
