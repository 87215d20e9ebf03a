// The conformance kit's view of aclnnMseLoss and its backward: how to call them with tensors
// and attributes in signature order, and the roles golden files name them by.
#include <aclnnop/aclnn_mse_loss.h>
#include <aclnnop/aclnn_mse_loss_backward.h>
#include <mse_loss_reference.h>
#include <nnplug/ops/mse_loss_math.h>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnMseLossGetWorkspaceSize(t[0], t[1], a[0].i, writable(t[2]), workspace, executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnMseLossBackwardGetWorkspaceSize(t[0], t[1], t[2], a[0].i, writable(t[3]), workspace,
                                                executor);
}

ElementExpectation forward_element(const ElementInputs& e) {
    return {mse_loss(e.x, e.y), reference::mse_loss(e.x, e.y), 0.0};
}

ElementExpectation backward_element(const ElementInputs& e) {
    return {mse_loss_backward(e.g, e.x, e.y, mse_loss_norm(e.scale64)),
            reference::mse_loss_backward(e.g, e.x, e.y, e.scale64), 0.0};
}

}  // namespace

void register_mse_loss_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"mse_loss",
                   "aclnnMseLoss",
                   {"self", "target", "out"},
                   {"reduction"},
                   "out",
                   forward,
                   aclnnMseLoss,
                   false,
                   {},
                   {}});
    ops.back().kit.evaluate = forward_element;
    ops.push_back({"mse_loss_backward",
                   "aclnnMseLossBackward",
                   {"gradOutput", "self", "target", "out"},
                   {"reduction"},
                   "out",
                   backward,
                   aclnnMseLossBackward,
                   true,
                   {},
                   {}});
    ops.back().kit.evaluate = backward_element;
}

}  // namespace nnplug::conformance
