// The conformance kit's view of aclnnSmoothL1Loss and its backward: how to call them with
// tensors and attributes in signature order (reduction, then beta), the roles golden files name
// them by (CANN's gradOut plays the kit's gradOutput role), and the betas the random cases
// cycle through.
#include <aclnnop/aclnn_smooth_l1_loss.h>
#include <aclnnop/aclnn_smooth_l1_loss_backward.h>
#include <nnplug/ops/smooth_l1_loss_math.h>
#include <smooth_l1_loss_reference.h>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnSmoothL1LossGetWorkspaceSize(t[0], t[1], a[0].i, static_cast<float>(a[1].f), writable(t[2]),
                                             workspace, executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnSmoothL1LossBackwardGetWorkspaceSize(t[0], t[1], t[2], a[0].i, static_cast<float>(a[1].f),
                                                     writable(t[3]), workspace, executor);
}

float beta_of(const ElementInputs& e) {
    return static_cast<float>(e.attrs[1].f);
}

ElementExpectation forward_element(const ElementInputs& e) {
    const float beta = beta_of(e);
    return {smooth_l1_loss(e.x, e.y, beta), reference::smooth_l1_loss(e.x, e.y, beta), 0.0};
}

ElementExpectation backward_element(const ElementInputs& e) {
    const float beta = beta_of(e);
    return {smooth_l1_loss_backward(e.g, e.x, e.y, beta, e.scale),
            reference::smooth_l1_loss_backward(e.g, e.x, e.y, beta, e.scale64), 0.0};
}

// The default beta, a small and a large one, and 0 (the L1 loss).
const std::vector<std::vector<AttrArg>> kBetas = {
    {AttrArg::float32(1.0f)}, {AttrArg::float32(0.25f)}, {AttrArg::float32(0.0f)}, {AttrArg::float32(3.0f)}};

}  // namespace

void register_smooth_l1_loss_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"smooth_l1_loss",
                   "aclnnSmoothL1Loss",
                   {"self", "target", "result"},
                   {"reduction", "beta"},
                   "result",
                   forward,
                   aclnnSmoothL1Loss,
                   false,
                   {},
                   {}});
    ops.back().kit.evaluate = forward_element;
    ops.back().kit.attr_sets = kBetas;
    ops.push_back({"smooth_l1_loss_backward",
                   "aclnnSmoothL1LossBackward",
                   {"gradOutput", "self", "target", "gradInput"},
                   {"reduction", "beta"},
                   "gradInput",
                   backward,
                   aclnnSmoothL1LossBackward,
                   true,
                   {},
                   {}});
    ops.back().kit.evaluate = backward_element;
    ops.back().kit.attr_sets = kBetas;
}

}  // namespace nnplug::conformance
