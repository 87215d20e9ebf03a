/* nnplug: CANN-compatible tensor and executor types for the aclnn operator API. */
#ifndef ACLNN_ACL_META_H_
#define ACLNN_ACL_META_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACLNN_API
#define ACLNN_API ACL_FUNC_VISIBILITY
#endif

typedef int32_t aclnnStatus;

static const aclnnStatus ACLNN_SUCCESS = 0;
static const aclnnStatus ACLNN_ERR_PARAM_NULLPTR = 161001;
static const aclnnStatus ACLNN_ERR_PARAM_INVALID = 161002;
static const aclnnStatus ACLNN_ERR_RUNTIME_ERROR = 361001;
static const aclnnStatus ACLNN_ERR_INNER = 561000;
static const aclnnStatus ACLNN_ERR_INNER_TILING_ERROR = 561002;
static const aclnnStatus ACLNN_ERR_INNER_NULLPTR = 561103;

typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;

/* A view (shape, strides and offset in elements) over storage at tensorData. */
ACLNN_API aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                     const int64_t* stride, int64_t offset, aclFormat format,
                                     const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData);
/* Frees the descriptor, never the data. */
ACLNN_API aclnnStatus aclDestroyTensor(const aclTensor* tensor);
ACLNN_API aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum);
ACLNN_API aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType);

/* Makes an executor runnable many times; it is then freed by aclDestroyAclOpExecutor. */
ACLNN_API aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor);
ACLNN_API aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor);

/* A repeatable executor's operand moved to addr (the base of its storage) between runs: the
 * index-th input, output, or tensor of all (inputs, then outputs) in the aclnn signature's
 * order; tensor is the aclTensor its first phase was given there, and records addr too. */
ACLNN_API aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                            void* addr);
ACLNN_API aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                             void* addr);
ACLNN_API aclnnStatus aclSetTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                       void* addr);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_ACL_META_H_ */
