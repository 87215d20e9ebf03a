// The binary cross-entropy ops' part of the elementwise model: the tile compute and
// the check_inputs rule. The backward is binary_cross_entropy_math.h's float32 expression exactly; the
// forward is the vector kernel the CPU backend uses (within 2 float32 ulp of bce_forward).
#include <nnplug/ops/binary_cross_entropy_math.h>
#include <nnplug/plugin_support.h>

#include "binary_cross_entropy_forward_tile.h"
#include "elementwise_op.h"

namespace nnplug::emu {
namespace {

// An absent weight is 1: the weighted and unweighted loops differ only in that load.
void compute_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    const float scale = sdk::scale(desc);
    const float* grad = in[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT];
    const float* self = in[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF];
    const float* target = in[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET];
    const float* weight = in[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT];
    if (weight != nullptr)
        for (int64_t i = 0; i < n; ++i)
            result[i] = bce_backward(grad[i], weight[i], self[i], target[i], scale);
    else
        for (int64_t i = 0; i < n; ++i) result[i] = bce_backward(grad[i], 1.0f, self[i], target[i], scale);
}

void compute_forward(const nnplug_op_desc&, const TileInputs& in, int64_t n, float* result) {
    simd::forward_tile(in[NNPLUG_BINARY_CROSS_ENTROPY_SELF], in[NNPLUG_BINARY_CROSS_ENTROPY_TARGET],
                       in[NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT], result, n);
}

// self is a probability; NaN fails the test too, as it is outside [0, 1] as well.
std::string check_self(const float* self, int64_t n, int64_t first_element) {
    for (int64_t i = 0; i < n; ++i)
        if (!(self[i] >= 0.0f && self[i] <= 1.0f))
            return "self element " + std::to_string(first_element + i) + " is " + std::to_string(self[i]) +
                   ", outside [0, 1] (option check_inputs)";
    return {};
}

std::string check_forward(const TileInputs& in, int64_t n, int64_t first_element) {
    return check_self(in[NNPLUG_BINARY_CROSS_ENTROPY_SELF], n, first_element);
}

std::string check_backward(const TileInputs& in, int64_t n, int64_t first_element) {
    return check_self(in[NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF], n, first_element);
}

}  // namespace

void register_binary_cross_entropy_compute(std::vector<ElementwiseOp>& ops) {
    ElementwiseOp forward;
    forward.kind = NNPLUG_OP_BINARY_CROSS_ENTROPY;
    forward.kernel_name = "BinaryCrossEntropy";
    forward.compute = compute_forward;
    forward.check_inputs = check_forward;
    ops.push_back(forward);

    ElementwiseOp backward;
    backward.kind = NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD;
    backward.kernel_name = "BinaryCrossEntropyGrad";
    backward.compute = compute_backward;
    backward.check_inputs = check_backward;
    ops.push_back(backward);
}

}  // namespace nnplug::emu
