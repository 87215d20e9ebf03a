// The conformance kit's view of aclnnBinaryCrossEntropy and its backward: how to call them
// with tensors and attributes in signature order, and the roles golden files name them by.
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <binary_cross_entropy_reference.h>
#include <nnplug/ops/binary_cross_entropy_math.h>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyGetWorkspaceSize(t[0], t[1], t[2], a[0].i, writable(t[3]), workspace,
                                                   executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0].i, writable(t[4]),
                                                           workspace, executor);
}

ElementExpectation forward_element(const ElementInputs& e) {
    return {bce_forward(e.w, e.x, e.y), reference::bce_forward(e.w, e.x, e.y), 0.0};
}

ElementExpectation backward_element(const ElementInputs& e) {
    return {bce_backward(e.g, e.w, e.x, e.y, e.scale), reference::bce_backward(e.g, e.w, e.x, e.y, e.scale64),
            0.0};
}

}  // namespace

void register_binary_cross_entropy_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"binary_cross_entropy",
                   "aclnnBinaryCrossEntropy",
                   {"self", "target", "weight", "out"},
                   {"reduction"},
                   "out",
                   forward,
                   aclnnBinaryCrossEntropy,
                   false,
                   {},
                   {}});
    ops.back().kit.evaluate = forward_element;
    ops.back().kit.self_values = SelfValues::kProbability;
    ops.push_back({"binary_cross_entropy_backward",
                   "aclnnBinaryCrossEntropyBackward",
                   {"gradOutput", "self", "target", "weight", "out"},
                   {"reduction"},
                   "out",
                   backward,
                   aclnnBinaryCrossEntropyBackward,
                   true,
                   {},
                   {}});
    ops.back().kit.evaluate = backward_element;
    ops.back().kit.self_values = SelfValues::kProbability;
}

}  // namespace nnplug::conformance
