// The conformance kit's view of aclnnSoftMarginLoss and its backward: how to call them with
// tensors and attributes in signature order, the roles golden files name them by, and the
// values the kit draws: logits up to ±100 (margins where log(1 + exp) loses the loss and where
// exp overflows) against ±1 targets.
#include <aclnnop/aclnn_soft_margin_loss.h>
#include <aclnnop/aclnn_soft_margin_loss_backward.h>
#include <nnplug/ops/soft_margin_loss_math.h>
#include <soft_margin_loss_reference.h>

#include <cmath>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnSoftMarginLossGetWorkspaceSize(t[0], t[1], a[0].i, writable(t[2]), workspace, executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnSoftMarginLossBackwardGetWorkspaceSize(t[0], t[1], t[2], a[0].i, writable(t[3]), workspace,
                                                       executor);
}

ElementExpectation forward_element(const ElementInputs& e) {
    return {soft_margin_loss(e.x, e.y), reference::soft_margin_loss(e.x, e.y), 0.0};
}

ElementExpectation backward_element(const ElementInputs& e) {
    return {soft_margin_loss_backward(e.g, e.x, e.y, soft_margin_loss_norm(e.scale64)),
            reference::soft_margin_loss_backward(e.g, e.x, e.y, e.scale64), 0.0};
}

}  // namespace

void register_soft_margin_loss_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"soft_margin_loss",
                   "aclnnSoftMarginLoss",
                   {"self", "target", "out"},
                   {"reduction"},
                   "out",
                   forward,
                   aclnnSoftMarginLoss,
                   false,
                   {},
                   {}});
    ops.back().kit.evaluate = forward_element;
    ops.back().kit.self_values = SelfValues::kLogit;
    ops.back().kit.target_values = TargetValues::kSign;
    ops.push_back({"soft_margin_loss_backward",
                   "aclnnSoftMarginLossBackward",
                   {"gradOutput", "self", "target", "out"},
                   {"reduction"},
                   "out",
                   backward,
                   aclnnSoftMarginLossBackward,
                   false,
                   {},
                   {}});
    ops.back().kit.evaluate = backward_element;
    ops.back().kit.self_values = SelfValues::kLogit;
    ops.back().kit.target_values = TargetValues::kSign;
}

}  // namespace nnplug::conformance
