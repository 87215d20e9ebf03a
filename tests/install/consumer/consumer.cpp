// An outside program built against the installed package: it must find the installed
// plugins and default config by itself, the published op schemas and the float64 references.
#include <acl/acl.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <nnplug/op_schema.h>
#include <nnplug/reference/binary_cross_entropy_reference.h>

#include <cmath>
#include <cstdio>

int main() {
    if (nnplug_op_schema_count() != NNPLUG_OP_KIND_COUNT) {
        std::printf("consumer: %zu op schemas published for %d op kinds\n", nnplug_op_schema_count(),
                    NNPLUG_OP_KIND_COUNT);
        return 1;
    }
    if (aclInit(nullptr) != ACL_SUCCESS) {
        std::printf("consumer: aclInit failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    const int64_t shape[] = {1}, strides[] = {1};
    float host[4] = {0.1f, 0.3f, 0.5f, 0.0f};  // grad, self, target, out
    void* device = nullptr;
    aclrtMalloc(&device, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(device, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
    float* slots = static_cast<float*>(device);
    aclTensor* tensors[4];
    for (int i = 0; i < 4; ++i)
        tensors[i] = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, slots + i);
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status = aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
        tensors[0], tensors[1], tensors[2], nullptr, 0, tensors[3], &workspace, &executor);
    if (status == ACLNN_SUCCESS) status = aclnnBinaryCrossEntropyBackward(nullptr, 0, executor, nullptr);
    aclrtSynchronizeStream(nullptr);
    aclrtMemcpy(host, sizeof host, device, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("consumer: %f from backend %s (status %d)\n", host[3], aclrtGetSocName(), status);
    const double reference = nnplug::reference::bce_backward(0.1, 1.0, 0.3, 0.5, 1.0);
    if (std::fabs(host[3] - reference) > 1e-6 * std::fabs(reference)) {
        std::printf("consumer: the float64 reference is %f\n", reference);
        status = ACLNN_ERR_INNER;
    }
    for (aclTensor* tensor : tensors) aclDestroyTensor(tensor);
    aclrtFree(device);
    aclFinalize();
    return status == ACLNN_SUCCESS ? 0 : 1;
}
