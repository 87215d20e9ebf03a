// The conformance kit's view of the binary cross-entropy ops on logits: how to call them
// with tensors and attributes in signature order, and the roles golden files name them by.
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0], writable(t[4]),
                                                             workspace, executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], a[0],
                                                                     writable(t[5]), workspace, executor);
}

aclnnStatus target_backward(const std::vector<const aclTensor*>& t, const std::vector<int64_t>& a,
                            uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], a[0], writable(t[5]), workspace, executor);
}

}  // namespace

void register_binary_cross_entropy_with_logits_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"with_logits",
                   "aclnnBinaryCrossEntropyWithLogits",
                   {"self", "target", "weight", "posWeight", "out"},
                   {"reduction"},
                   "out",
                   forward,
                   aclnnBinaryCrossEntropyWithLogits});
    ops.push_back({"with_logits_backward",
                   "aclnnBinaryCrossEntropyWithLogitsBackward",
                   {"gradOutput", "self", "target", "weight", "posWeight", "out"},
                   {"reduction"},
                   "out",
                   backward,
                   aclnnBinaryCrossEntropyWithLogitsBackward,
                   true});
    ops.push_back({"with_logits_target_backward",
                   "aclnnBinaryCrossEntropyWithLogitsTargetBackward",
                   {"gradOutput", "self", "target", "weight", "posWeight", "gradTarget"},
                   {"reduction"},
                   "gradTarget",
                   target_backward,
                   aclnnBinaryCrossEntropyWithLogitsTargetBackward,
                   true});
}

}  // namespace nnplug::conformance
