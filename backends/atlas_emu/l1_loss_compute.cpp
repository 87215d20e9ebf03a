// The L1 loss ops' part of the elementwise model: the tile compute, which is
// <nnplug/ops/l1_loss_math.h>'s float32 expressions exactly (the same bits as cpu_tbb).
#include <nnplug/ops/l1_loss_math.h>
#include <nnplug/plugin_support.h>

#include "elementwise_op.h"

namespace nnplug::emu {
namespace {

void compute_forward(const nnplug_op_desc&, const TileInputs& in, int64_t n, float* result) {
    const float* self = in[NNPLUG_L1_LOSS_SELF];
    const float* target = in[NNPLUG_L1_LOSS_TARGET];
    for (int64_t i = 0; i < n; ++i) result[i] = l1_loss(self[i], target[i]);
}

void compute_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const float norm = sdk::scale(desc);
    const float* grad = in[NNPLUG_L1_LOSS_BACKWARD_GRAD_OUTPUT];
    const float* self = in[NNPLUG_L1_LOSS_BACKWARD_SELF];
    const float* target = in[NNPLUG_L1_LOSS_BACKWARD_TARGET];
    for (int64_t i = 0; i < n; ++i) result[i] = l1_loss_backward(grad[i], self[i], target[i], norm);
}

}  // namespace

void register_l1_loss_compute(std::vector<ElementwiseOp>& ops) {
    ElementwiseOp forward;
    forward.kind = NNPLUG_OP_L1_LOSS;
    forward.kernel_name = "LpLoss";
    forward.compute = compute_forward;
    ops.push_back(forward);

    ElementwiseOp backward;
    backward.kind = NNPLUG_OP_L1_LOSS_BACKWARD;
    backward.kernel_name = "L1LossGrad";
    backward.compute = compute_backward;
    ops.push_back(backward);
}

}  // namespace nnplug::emu
