// scalar_ref's aclnnL1Loss and its backward: <nnplug/ops/l1_loss_math.h>'s float32 expressions,
// one element at a time. The inputs broadcast to each other; the walk reads each through its
// strides, so that needs nothing here.
#include <nnplug/ops/l1_loss_math.h>

#include "scalar_ref_walk.h"

namespace scalar_ref {
namespace {

nnplug_status run_l1_loss(const nnplug_op_desc& d) {  // aclnnL1Loss
    return for_each_element(d, NNPLUG_L1_LOSS_OUT, [](const Position& at) {
        return nnplug::l1_loss(at.load(NNPLUG_L1_LOSS_SELF), at.load(NNPLUG_L1_LOSS_TARGET));
    });
}

#ifdef SCALAR_REF_BUG_L1_SIGN_AT_EQUAL  // BUG: the gradient at self == target is +gradOutput, not 0
float sign_of(float self, float target) {
    return self >= target ? 1.0f : -1.0f;
}
#else
float sign_of(float self, float target) {
    return nnplug::l1_loss_sign(self, target);
}
#endif

nnplug_status run_l1_loss_backward(const nnplug_op_desc& d) {  // aclnnL1LossBackward
    const float norm = static_cast<float>(nnplug_attr_f64(&d, NNPLUG_ATTR_SCALE, 1.0));
    return for_each_element(d, NNPLUG_L1_LOSS_BACKWARD_GRAD_INPUT, [&](const Position& at) {
        const float sign =
            sign_of(at.load(NNPLUG_L1_LOSS_BACKWARD_SELF), at.load(NNPLUG_L1_LOSS_BACKWARD_TARGET));
        return sign * (at.load(NNPLUG_L1_LOSS_BACKWARD_GRAD_OUTPUT) * norm);
    });
}

const Registration kForward{{NNPLUG_OP_L1_LOSS}, run_l1_loss};
const Registration kBackward{{NNPLUG_OP_L1_LOSS_BACKWARD}, run_l1_loss_backward};

}  // namespace
}  // namespace scalar_ref
