// scalar_ref's aclnnSmoothL1Loss and its backward: <nnplug/ops/smooth_l1_loss_math.h>'s float32
// expressions, one element at a time, with the call's beta (NNPLUG_ATTR_BETA).
#include <nnplug/ops/smooth_l1_loss_math.h>

#include <cmath>

#include "scalar_ref_walk.h"

namespace scalar_ref {
namespace {

float beta_of(const nnplug_op_desc& d) {
    return nnplug_attr_f32(&d, NNPLUG_ATTR_BETA, 1.0f);
}

#ifdef SCALAR_REF_BUG_SMOOTH_L1_BOUNDARY  // BUG: the quadratic branch taken at |self - target| == beta
float loss(float self, float target, float beta) {
    const float z = std::fabs(self - target);
    return z <= beta ? 0.5f * z * z / beta : z - 0.5f * beta;
}
float gradient(float grad, float self, float target, float beta, float norm) {
    const float x = self - target;
    const float o = std::fabs(x) > beta ? (x > 0.0f ? 1.0f : -1.0f) : x / beta;
    return norm * o * grad;
}
#else
float loss(float self, float target, float beta) {
    return nnplug::smooth_l1_loss(self, target, beta);
}
float gradient(float grad, float self, float target, float beta, float norm) {
    return nnplug::smooth_l1_loss_backward(grad, self, target, beta, norm);
}
#endif

nnplug_status run_smooth_l1_loss(const nnplug_op_desc& d) {  // aclnnSmoothL1Loss
    const float beta = beta_of(d);
    return for_each_element(d, NNPLUG_SMOOTH_L1_LOSS_RESULT, [&](const Position& at) {
        return loss(at.load(NNPLUG_SMOOTH_L1_LOSS_SELF), at.load(NNPLUG_SMOOTH_L1_LOSS_TARGET), beta);
    });
}

nnplug_status run_smooth_l1_loss_backward(const nnplug_op_desc& d) {  // aclnnSmoothL1LossBackward
    const float beta = beta_of(d);
    const float norm = static_cast<float>(nnplug_attr_f64(&d, NNPLUG_ATTR_SCALE, 1.0));
    return for_each_element(d, NNPLUG_SMOOTH_L1_LOSS_BACKWARD_GRAD_INPUT, [&](const Position& at) {
        return gradient(at.load(NNPLUG_SMOOTH_L1_LOSS_BACKWARD_GRAD_OUT),
                        at.load(NNPLUG_SMOOTH_L1_LOSS_BACKWARD_SELF),
                        at.load(NNPLUG_SMOOTH_L1_LOSS_BACKWARD_TARGET), beta, norm);
    });
}

const Registration kForward{{NNPLUG_OP_SMOOTH_L1_LOSS}, run_smooth_l1_loss};
const Registration kBackward{{NNPLUG_OP_SMOOTH_L1_LOSS_BACKWARD}, run_smooth_l1_loss_backward};

}  // namespace
}  // namespace scalar_ref
