// scalar_ref's aclnnMseLoss and its backward: <nnplug/ops/mse_loss_math.h>'s float32
// expressions, one element at a time. self and target broadcast to each other; the walk
// reads each through its strides, so that needs nothing here.
#include <nnplug/ops/mse_loss_math.h>

#include "scalar_ref_walk.h"

namespace scalar_ref {
namespace {

nnplug_status run_mse_loss(const nnplug_op_desc& d) {  // aclnnMseLoss
    return for_each_element(d, NNPLUG_MSE_LOSS_OUT, [](const Position& at) {
        return nnplug::mse_loss(at.load(NNPLUG_MSE_LOSS_SELF), at.load(NNPLUG_MSE_LOSS_TARGET));
    });
}

nnplug_status run_mse_loss_backward(const nnplug_op_desc& d) {  // aclnnMseLossBackward
    const float norm = nnplug::mse_loss_norm(nnplug_attr_f64(&d, NNPLUG_ATTR_SCALE, 1.0));
    return for_each_element(d, NNPLUG_MSE_LOSS_BACKWARD_OUT, [&](const Position& at) {
        return nnplug::mse_loss_backward(at.load(NNPLUG_MSE_LOSS_BACKWARD_GRAD_OUTPUT),
                                         at.load(NNPLUG_MSE_LOSS_BACKWARD_SELF),
                                         at.load(NNPLUG_MSE_LOSS_BACKWARD_TARGET), norm);
    });
}

const Registration kForward{{NNPLUG_OP_MSE_LOSS}, run_mse_loss};
const Registration kBackward{{NNPLUG_OP_MSE_LOSS_BACKWARD}, run_mse_loss_backward};

}  // namespace
}  // namespace scalar_ref
