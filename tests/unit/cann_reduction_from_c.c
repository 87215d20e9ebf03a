/* CANN-style C code that names the reduction by CANN's enum Reduction, with every public
 * header and the plugin SDK included together (a clash would stop this file compiling). */
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>
#include <nnplug/plugin.h>

_Static_assert(None == 0 && Mean == 1 && Sum == 2, "CANN's enum Reduction values");

static aclTensor* device_vector(const float* host, int64_t count, void** device) {
    const size_t bytes = (size_t)count * sizeof(float);
    const int64_t stride = 1;
    if (aclrtMalloc(device, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        return 0;
    }
    aclrtMemcpy(*device, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(&count, 1, ACL_FLOAT, &stride, 0, ACL_FORMAT_ND, &count, 1, *device);
}

/* aclnnBinaryCrossEntropy of self {0.25, 0.75}, target {0, 1}, no weight, reduced by
 * `reduction` into one float; the status of the first failing call, or ACLNN_SUCCESS. */
aclnnStatus nnplug_test_reduced_bce_from_c(enum Reduction reduction, float* result) {
    static const float self_host[2] = {0.25f, 0.75f};
    static const float target_host[2] = {0.0f, 1.0f};
    const int64_t one = 1;
    const int64_t unit_stride = 1;
    void* self_device = 0;
    void* target_device = 0;
    void* out_device = 0;
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = 0;
    aclnnStatus status = ACLNN_ERR_INNER;
    aclTensor* self = device_vector(self_host, 2, &self_device);
    aclTensor* target = device_vector(target_host, 2, &target_device);
    aclTensor* out = 0;
    if (aclrtMalloc(&out_device, sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS) {
        out = aclCreateTensor(&one, 1, ACL_FLOAT, &unit_stride, 0, ACL_FORMAT_ND, &one, 1, out_device);
    }
    if (self && target && out) {
        status = aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, 0, reduction, out, &workspace_size,
                                                         &executor);
    }
    if (status == ACLNN_SUCCESS) {
        status = aclnnBinaryCrossEntropy(0, workspace_size, executor, 0);
    }
    if (status == ACLNN_SUCCESS) {
        status = aclrtSynchronizeStream(0);
    }
    if (status == ACLNN_SUCCESS) {
        status = aclrtMemcpy(result, sizeof(float), out_device, sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    }
    aclDestroyTensor(self);
    aclDestroyTensor(target);
    aclDestroyTensor(out);
    aclrtFree(self_device);
    aclrtFree(target_device);
    aclrtFree(out_device);
    return status;
}
