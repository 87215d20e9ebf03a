// scalar_ref's aclnnBinaryCrossEntropy and its backward: <nnplug/ops/binary_cross_entropy_math.h>'s float32
// expressions, one element at a time.
#include <nnplug/ops/binary_cross_entropy_math.h>

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
    return for_each_element(d, NNPLUG_BINARY_CROSS_ENTROPY_OUT, [](const Position& at) {
        return nnplug::bce_forward(at.load(NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT),
                                   at.load(NNPLUG_BINARY_CROSS_ENTROPY_SELF),
                                   at.load(NNPLUG_BINARY_CROSS_ENTROPY_TARGET));
    });
}

nnplug_status run_bce_backward(const nnplug_op_desc& d) {  // aclnnBinaryCrossEntropyBackward
    const float scale = sdk::scale(d);
    return for_each_element(d, NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT, [&](const Position& at) {
        return bce_backward(at.load(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT),
                            at.load(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT),
                            at.load(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF),
                            at.load(NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET), scale);
    });
}

const Registration kForward{{NNPLUG_OP_BINARY_CROSS_ENTROPY}, run_bce};
const Registration kBackward{{NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD}, run_bce_backward};

}  // namespace
}  // namespace scalar_ref
