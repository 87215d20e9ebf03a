// A program that ends without aclFinalize while it holds device memory, a stream and an
// executor. libnnplug then destroys its runtime at exit, after the backend plugin's own
// statics are gone: nothing the teardown touches may be one of them (atlas_emu's registry
// of device arenas was, found by fuzz_ops). ctest runs it on each backend, and under
// valgrind when valgrind is there. The backend comes from NNPLUG_BACKEND.
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>

#include <cstdio>

int main() {
    if (aclInit(nullptr) != ACL_SUCCESS) {
        std::fprintf(stderr, "aclInit: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    void* device = nullptr;
    aclrtStream stream = nullptr;
    if (aclrtMalloc(&device, 16 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtCreateStream(&stream) != ACL_SUCCESS) {
        std::fprintf(stderr, "setup: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    // gradOutput, self, target and out: four views of one 16-element buffer.
    const int64_t dims[] = {4}, strides[] = {1}, storage[] = {16};
    aclTensor* tensors[4] = {};
    for (int i = 0; i < 4; ++i) {
        tensors[i] =
            aclCreateTensor(dims, 1, ACL_FLOAT, strides, int64_t{4} * i, ACL_FORMAT_ND, storage, 1, device);
        if (tensors[i] == nullptr) {
            std::fprintf(stderr, "aclCreateTensor: %s\n", aclGetRecentErrMsg());
            return 1;
        }
    }
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    if (aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(tensors[0], tensors[1], tensors[2], nullptr,
                                                                  nullptr, 0, tensors[3], &workspace,
                                                                  &executor) != ACLNN_SUCCESS) {
        std::fprintf(stderr, "first phase: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    std::printf("exiting without aclFinalize, holding memory, a stream and an executor\n");
    return 0;
}
