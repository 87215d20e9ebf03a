// scalar_ref's aclnnSoftMarginLoss and its backward: <nnplug/ops/soft_margin_loss_math.h>'s
// float32 expressions, one element at a time. self and target broadcast to each other; the
// walk reads each through its strides, so that needs nothing here.
#include <nnplug/ops/soft_margin_loss_math.h>

#include "scalar_ref_walk.h"

namespace scalar_ref {
namespace {

nnplug_status run_soft_margin_loss(const nnplug_op_desc& d) {  // aclnnSoftMarginLoss
    return for_each_element(d, NNPLUG_SOFT_MARGIN_LOSS_OUT, [](const Position& at) {
        const float x = at.load(NNPLUG_SOFT_MARGIN_LOSS_SELF), y = at.load(NNPLUG_SOFT_MARGIN_LOSS_TARGET);
#ifdef SCALAR_REF_BUG_SOFT_MARGIN_LOG  // BUG: log(1 + e), which is 0 once 1 + e rounds to 1
        return std::log(1.0f + std::exp((-x) * y));
#else
        return nnplug::soft_margin_loss(x, y);
#endif
    });
}

nnplug_status run_soft_margin_loss_backward(const nnplug_op_desc& d) {  // aclnnSoftMarginLossBackward
    const float norm = nnplug::soft_margin_loss_norm(nnplug_attr_f64(&d, NNPLUG_ATTR_SCALE, 1.0));
    return for_each_element(d, NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_OUT, [&](const Position& at) {
        return nnplug::soft_margin_loss_backward(at.load(NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_GRAD_OUTPUT),
                                                 at.load(NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_SELF),
                                                 at.load(NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_TARGET), norm);
    });
}

const Registration kForward{{NNPLUG_OP_SOFT_MARGIN_LOSS}, run_soft_margin_loss};
const Registration kBackward{{NNPLUG_OP_SOFT_MARGIN_LOSS_BACKWARD}, run_soft_margin_loss_backward};

}  // namespace
}  // namespace scalar_ref
