#include "op_catalog.h"

#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>

#include <stdexcept>

namespace nnplug::conformance {
namespace {

aclTensor* writable(const aclTensor* tensor) {
    return const_cast<aclTensor*>(tensor);
}

aclnnStatus bce_forward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                        uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyGetWorkspaceSize(t[0], t[1], t[2], a[0], writable(t[3]), workspace,
                                                   executor);
}

aclnnStatus bce_backward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                         uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0], writable(t[4]),
                                                           workspace, executor);
}

aclnnStatus with_logits(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                        uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0], writable(t[4]),
                                                             workspace, executor);
}

aclnnStatus with_logits_backward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                                 uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], a[0],
                                                                     writable(t[5]), workspace, executor);
}

aclnnStatus with_logits_target_backward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                                        uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], a[0], writable(t[5]), workspace, executor);
}

}  // namespace

const std::vector<OpUnderTest>& op_catalog() {
    static const std::vector<OpUnderTest> ops = {
        {"forward",
         "aclnnBinaryCrossEntropy",
         {"self", "target", "weight", "out"},
         {"reduction"},
         "out",
         bce_forward,
         aclnnBinaryCrossEntropy},
        {"backward",
         "aclnnBinaryCrossEntropyBackward",
         {"gradOutput", "self", "target", "weight", "out"},
         {"reduction"},
         "out",
         bce_backward,
         aclnnBinaryCrossEntropyBackward,
         true},
        {"with_logits",
         "aclnnBinaryCrossEntropyWithLogits",
         {"self", "target", "weight", "posWeight", "out"},
         {"reduction"},
         "out",
         with_logits,
         aclnnBinaryCrossEntropyWithLogits},
        {"with_logits_backward",
         "aclnnBinaryCrossEntropyWithLogitsBackward",
         {"gradOutput", "self", "target", "weight", "posWeight", "out"},
         {"reduction"},
         "out",
         with_logits_backward,
         aclnnBinaryCrossEntropyWithLogitsBackward,
         true},
        {"with_logits_target_backward",
         "aclnnBinaryCrossEntropyWithLogitsTargetBackward",
         {"gradOutput", "self", "target", "weight", "posWeight", "gradTarget"},
         {"reduction"},
         "gradTarget",
         with_logits_target_backward,
         aclnnBinaryCrossEntropyWithLogitsTargetBackward,
         true},
    };
    return ops;
}

const OpUnderTest& op_named(const std::string& name) {
    for (const OpUnderTest& op : op_catalog())
        if (op.name == name) return op;
    throw std::out_of_range("no op called '" + name + "' in the test catalog");
}

aclnnStatus run_op(const OpUnderTest& op, const std::vector<const aclTensor*>& tensors,
                   const std::vector<int64_t>& attrs, aclrtStream stream) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = op.first_phase(tensors, attrs, &workspace_size, &executor);
    if (first != ACLNN_SUCCESS) return first;
    void* workspace = nullptr;
    if (workspace_size > 0 &&
        aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        aclDestroyAclOpExecutor(executor);
        return ACLNN_ERR_INNER;
    }
    aclnnStatus status = op.second_phase(workspace, workspace_size, executor, stream);
    if (status == ACLNN_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS)
        status = ACLNN_ERR_RUNTIME_ERROR;
    if (workspace != nullptr) aclrtFree(workspace);
    return status;
}

}  // namespace nnplug::conformance
