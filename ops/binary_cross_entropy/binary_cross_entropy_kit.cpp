// The conformance kit's view of aclnnBinaryCrossEntropy and its backward: how to call them
// with tensors and attributes in signature order, and the roles golden files name them by.
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyGetWorkspaceSize(t[0], t[1], t[2], a[0], writable(t[3]), workspace,
                                                   executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0], writable(t[4]),
                                                           workspace, executor);
}

}  // namespace

void register_binary_cross_entropy_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"forward",
                   "aclnnBinaryCrossEntropy",
                   {"self", "target", "weight", "out"},
                   {"reduction"},
                   "out",
                   forward,
                   aclnnBinaryCrossEntropy});
    ops.push_back({"backward",
                   "aclnnBinaryCrossEntropyBackward",
                   {"gradOutput", "self", "target", "weight", "out"},
                   {"reduction"},
                   "out",
                   backward,
                   aclnnBinaryCrossEntropyBackward,
                   true});
}

}  // namespace nnplug::conformance
