// scalar_ref's aclnnBinaryCrossEntropy and its backward: <nnplug/ops/bce_math.h>'s float32
// expressions, one element at a time.
#include <nnplug/ops/bce_math.h>

#include "scalar_ref_walk.h"

namespace scalar_ref {
namespace {

namespace sdk = nnplug::sdk;

#ifdef SCALAR_REF_BUG_EPSILON  // BUG: the backward's denominator clamped at 1e-6, not 1e-12
float bce_backward(float grad, float weight, float self, float target, float scale) {
    return grad * weight * (self - target) / nnplug::clamp_below(self * (1.0f - self), 1e-6f) * scale;
}
#else
using nnplug::bce_backward;
#endif

nnplug_status run_bce(const nnplug_op_desc& d) {  // aclnnBinaryCrossEntropy
    return for_each_element(d, NNPLUG_BCE_OUT, [](const Position& at) {
        return nnplug::bce_forward(at.load(NNPLUG_BCE_WEIGHT), at.load(NNPLUG_BCE_SELF),
                                   at.load(NNPLUG_BCE_TARGET));
    });
}

nnplug_status run_bce_backward(const nnplug_op_desc& d) {  // aclnnBinaryCrossEntropyBackward
    const float scale = sdk::scale(d);
    return for_each_element(d, NNPLUG_BCE_BACKWARD_OUT, [&](const Position& at) {
        return bce_backward(at.load(NNPLUG_BCE_BACKWARD_GRAD_OUTPUT), at.load(NNPLUG_BCE_BACKWARD_WEIGHT),
                            at.load(NNPLUG_BCE_BACKWARD_SELF), at.load(NNPLUG_BCE_BACKWARD_TARGET), scale);
    });
}

const Registration kForward{{NNPLUG_OP_BCE_FORWARD}, run_bce};
const Registration kBackward{{NNPLUG_OP_BCE_BACKWARD}, run_bce_backward};

}  // namespace
}  // namespace scalar_ref
