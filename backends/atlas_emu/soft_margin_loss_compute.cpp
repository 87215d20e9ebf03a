// The soft margin loss ops' part of the elementwise model: the tile compute, which is
// <nnplug/ops/soft_margin_loss_math.h>'s float32 expressions with the C library's expf and
// log1pf.
#include <nnplug/ops/soft_margin_loss_math.h>
#include <nnplug/plugin_support.h>

#include "elementwise_op.h"

namespace nnplug::emu {
namespace {

void compute_forward(const nnplug_op_desc&, const TileInputs& in, int64_t n, float* result) {
    const float* self = in[NNPLUG_SOFT_MARGIN_LOSS_SELF];
    const float* target = in[NNPLUG_SOFT_MARGIN_LOSS_TARGET];
    for (int64_t i = 0; i < n; ++i) result[i] = soft_margin_loss(self[i], target[i]);
}

void compute_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const float norm = -sdk::scale(desc);  // = (float)(-scale): negation is exact
    const float* grad = in[NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_GRAD_OUTPUT];
    const float* self = in[NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_SELF];
    const float* target = in[NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_TARGET];
    for (int64_t i = 0; i < n; ++i) result[i] = soft_margin_loss_backward(grad[i], self[i], target[i], norm);
}

}  // namespace

void register_soft_margin_loss_compute(std::vector<ElementwiseOp>& ops) {
    ElementwiseOp forward;
    forward.kind = NNPLUG_OP_SOFT_MARGIN_LOSS;
    forward.kernel_name = "SoftMarginLoss";
    forward.compute = compute_forward;
    ops.push_back(forward);

    ElementwiseOp backward;
    backward.kind = NNPLUG_OP_SOFT_MARGIN_LOSS_BACKWARD;
    backward.kernel_name = "SoftMarginLossGrad";
    backward.compute = compute_backward;
    ops.push_back(backward);
}

}  // namespace nnplug::emu
