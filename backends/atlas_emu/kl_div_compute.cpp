// The Kullback-Leibler divergence ops' part of the elementwise model: the tile compute, which
// is <nnplug/ops/kl_div_math.h>'s float32 expressions in the shared vector math
// (backends/common/kl_div_tile.h), the same bits as cpu_tbb; logTarget comes from the
// descriptor.
#include <nnplug/plugin_support.h>

#include "elementwise_op.h"
#include "kl_div_tile.h"

namespace nnplug::emu {
namespace {

bool log_target(const nnplug_op_desc& desc) {
    return nnplug_attr_bool(&desc, NNPLUG_ATTR_LOG_TARGET, 0) != 0;
}

void compute_forward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const bool logged = log_target(desc);
    const float* self = in[NNPLUG_KL_DIV_SELF];
    const float* target = in[NNPLUG_KL_DIV_TARGET];
    simd::kl_div_forward_tile(self, target, logged, result, n);
}

void compute_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const bool logged = log_target(desc);
    const float scale = sdk::scale(desc);
    const float* grad = in[NNPLUG_KL_DIV_BACKWARD_GRAD_OUTPUT];
    const float* target = in[NNPLUG_KL_DIV_BACKWARD_TARGET];
    simd::kl_div_backward_tile(grad, target, logged, scale, result, n);
}

void compute_target_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const bool logged = log_target(desc);
    const float scale = sdk::scale(desc);
    const float* grad = in[NNPLUG_KL_DIV_BACKWARD_GRAD_OUTPUT];
    const float* self = in[NNPLUG_KL_DIV_BACKWARD_SELF];
    const float* target = in[NNPLUG_KL_DIV_BACKWARD_TARGET];
    simd::kl_div_target_backward_tile(grad, self, target, logged, scale, result, n);
}

}  // namespace

void register_kl_div_compute(std::vector<ElementwiseOp>& ops) {
    ElementwiseOp forward;
    forward.kind = NNPLUG_OP_KL_DIV;
    forward.kernel_name = "KLDivV2";
    forward.compute = compute_forward;
    ops.push_back(forward);

    ElementwiseOp backward;
    backward.kind = NNPLUG_OP_KL_DIV_BACKWARD;
    backward.kernel_name = "KlDivLossGrad";
    backward.compute = compute_backward;
    ops.push_back(backward);

    ElementwiseOp target_backward;
    target_backward.kind = NNPLUG_OP_KL_DIV_TARGET_BACKWARD;
    target_backward.kernel_name = "KlDivTargetLossGrad";
    target_backward.compute = compute_target_backward;
    ops.push_back(target_backward);
}

}  // namespace nnplug::emu
