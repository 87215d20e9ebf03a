// The conformance kit's view of aclnnL1Loss and its backward: how to call them with tensors
// and attributes in signature order, and the roles golden files name them by.
#include <aclnnop/aclnn_l1_loss.h>
#include <aclnnop/aclnn_l1_loss_backward.h>
#include <l1_loss_reference.h>
#include <nnplug/ops/l1_loss_math.h>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnL1LossGetWorkspaceSize(t[0], t[1], a[0].i, writable(t[2]), workspace, executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnL1LossBackwardGetWorkspaceSize(t[0], t[1], t[2], a[0].i, writable(t[3]), workspace, executor);
}

ElementExpectation forward_element(const ElementInputs& e) {
    return {l1_loss(e.x, e.y), reference::l1_loss(e.x, e.y), 0.0};
}

ElementExpectation backward_element(const ElementInputs& e) {
    return {l1_loss_backward(e.g, e.x, e.y, e.scale), reference::l1_loss_backward(e.g, e.x, e.y, e.scale64),
            0.0};
}

}  // namespace

void register_l1_loss_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"l1_loss",
                   "aclnnL1Loss",
                   {"self", "target", "out"},
                   {"reduction"},
                   "out",
                   forward,
                   aclnnL1Loss,
                   false,
                   {},
                   {}});
    ops.back().kit.evaluate = forward_element;
    ops.push_back({"l1_loss_backward",
                   "aclnnL1LossBackward",
                   {"gradOutput", "self", "target", "gradInput"},
                   {"reduction"},
                   "gradInput",
                   backward,
                   aclnnL1LossBackward,
                   true,
                   {},
                   {}});
    ops.back().kit.evaluate = backward_element;
}

}  // namespace nnplug::conformance
