/* nnplug: CANN-compatible gradient of the soft margin loss. */
#ifndef ACLNNOP_ACLNN_SOFT_MARGIN_LOSS_BACKWARD_H_
#define ACLNNOP_ACLNN_SOFT_MARGIN_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = -target * z / (1 + z) * gradOutput with z = exp(-target * self), divided by the
 * broadcast element count for reduction 1 (mean); gradOutput, self and target broadcast to
 * each other and out has their shape. */
ACLNN_API aclnnStatus aclnnSoftMarginLossBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                                  const aclTensor* self,
                                                                  const aclTensor* target, int64_t reduction,
                                                                  aclTensor* out, uint64_t* workspaceSize,
                                                                  aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnSoftMarginLossBackward(void* workspace, uint64_t workspaceSize,
                                                  aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNNOP_ACLNN_SOFT_MARGIN_LOSS_BACKWARD_H_ */
