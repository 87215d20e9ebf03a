// The mean squared error ops' part of the elementwise model: the tile compute, which is
// <nnplug/ops/mse_loss_math.h>'s float32 expressions exactly (the same bits as cpu_tbb).
#include <nnplug/ops/mse_loss_math.h>
#include <nnplug/plugin_support.h>

#include "elementwise_op.h"

namespace nnplug::emu {
namespace {

void compute_forward(const nnplug_op_desc&, const TileInputs& in, int64_t n, float* result) {
    const float* self = in[NNPLUG_MSE_LOSS_SELF];
    const float* target = in[NNPLUG_MSE_LOSS_TARGET];
    for (int64_t i = 0; i < n; ++i) result[i] = mse_loss(self[i], target[i]);
}

void compute_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const float norm = 2.0f * sdk::scale(desc);  // = (float)(2 * scale): doubling is exact
    const float* grad = in[NNPLUG_MSE_LOSS_BACKWARD_GRAD_OUTPUT];
    const float* self = in[NNPLUG_MSE_LOSS_BACKWARD_SELF];
    const float* target = in[NNPLUG_MSE_LOSS_BACKWARD_TARGET];
    for (int64_t i = 0; i < n; ++i) result[i] = mse_loss_backward(grad[i], self[i], target[i], norm);
}

}  // namespace

void register_mse_loss_compute(std::vector<ElementwiseOp>& ops) {
    ElementwiseOp forward;
    forward.kind = NNPLUG_OP_MSE_LOSS;
    forward.kernel_name = "MseLoss";
    forward.compute = compute_forward;
    ops.push_back(forward);

    ElementwiseOp backward;
    backward.kind = NNPLUG_OP_MSE_LOSS_BACKWARD;
    backward.kernel_name = "MseLossGrad";
    backward.compute = compute_backward;
    ops.push_back(backward);
}

}  // namespace nnplug::emu
