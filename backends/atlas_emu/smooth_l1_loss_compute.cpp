// The smooth L1 loss ops' part of the elementwise model: the tile compute, which is
// <nnplug/ops/smooth_l1_loss_math.h>'s float32 expressions exactly (the same bits as cpu_tbb).
#include <nnplug/ops/smooth_l1_loss_math.h>
#include <nnplug/plugin_support.h>

#include "elementwise_op.h"

namespace nnplug::emu {
namespace {

float beta_of(const nnplug_op_desc& desc) {
    return nnplug_attr_f32(&desc, NNPLUG_ATTR_BETA, 1.0f);
}

void compute_forward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const float beta = beta_of(desc);
    const float* self = in[NNPLUG_SMOOTH_L1_LOSS_SELF];
    const float* target = in[NNPLUG_SMOOTH_L1_LOSS_TARGET];
    for (int64_t i = 0; i < n; ++i) result[i] = smooth_l1_loss(self[i], target[i], beta);
}

void compute_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const float beta = beta_of(desc);
    const float norm = sdk::scale(desc);
    const float* grad = in[NNPLUG_SMOOTH_L1_LOSS_BACKWARD_GRAD_OUT];
    const float* self = in[NNPLUG_SMOOTH_L1_LOSS_BACKWARD_SELF];
    const float* target = in[NNPLUG_SMOOTH_L1_LOSS_BACKWARD_TARGET];
    for (int64_t i = 0; i < n; ++i)
        result[i] = smooth_l1_loss_backward(grad[i], self[i], target[i], beta, norm);
}

}  // namespace

void register_smooth_l1_loss_compute(std::vector<ElementwiseOp>& ops) {
    ElementwiseOp forward;
    forward.kind = NNPLUG_OP_SMOOTH_L1_LOSS;
    forward.kernel_name = "SmoothL1LossV2";
    forward.compute = compute_forward;
    ops.push_back(forward);

    ElementwiseOp backward;
    backward.kind = NNPLUG_OP_SMOOTH_L1_LOSS_BACKWARD;
    backward.kernel_name = "SmoothL1LossGradV2";
    backward.compute = compute_backward;
    ops.push_back(backward);
}

}  // namespace nnplug::emu
