// The binary cross-entropy ops on logits in the elementwise model: their tile compute
// and check_inputs rule. Each tile goes through backends/common's vector tiles, the
// math cpu_tbb evaluates, so both gradients and the per-element loss equal cpu_tbb's
// bit for bit (the reduced loss differs only in its summation order).
#include <nnplug/plugin_support.h>

#include <cmath>

#include "binary_cross_entropy_with_logits_tile.h"
#include "elementwise_op.h"

namespace nnplug::emu {
namespace {

void compute_forward(const nnplug_op_desc&, const TileInputs& in, int64_t n, float* result) {
    simd::logits_forward_tile(in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF],
                              in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET],
                              in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT],
                              in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT], result, n);
}

void compute_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    simd::logits_backward_tile(in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT],
                               in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF],
                               in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET],
                               in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT],
                               in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT],
                               sdk::scale(desc), result, n);
}

void compute_target_backward(const nnplug_op_desc& desc, const TileInputs& in, int64_t n, float* result) {
    simd::logits_target_backward_tile(in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT],
                                      in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF],
                                      in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT],
                                      in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT],
                                      sdk::scale(desc), result, n);
}

// Every logit is in the domain, infinities included (the loss and gradients are defined
// for them); NaN is not a logit, and is the usual sign of a diverged model.
std::string check_logits(const float* self, int64_t n, int64_t first_element) {
    for (int64_t i = 0; i < n; ++i)
        if (std::isnan(self[i]))
            return "self element " + std::to_string(first_element + i) + " is NaN (option check_inputs)";
    return {};
}

std::string check_forward(const TileInputs& in, int64_t n, int64_t first_element) {
    return check_logits(in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF], n, first_element);
}

std::string check_backward(const TileInputs& in, int64_t n, int64_t first_element) {
    return check_logits(in[NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF], n, first_element);
}

}  // namespace

void register_binary_cross_entropy_with_logits_compute(std::vector<ElementwiseOp>& ops) {
    ElementwiseOp forward;
    forward.kind = NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS;
    forward.kernel_name = "SigmoidCrossEntropyWithLogitsV2";
    forward.compute = compute_forward;
    forward.check_inputs = check_forward;
    // CANN casts weight and posWeight to the promoted type of self and target.
    forward.rounded_to_promoted = 1u << NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT |
                                  1u << NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT;
    ops.push_back(forward);

    ElementwiseOp backward;
    backward.kind = NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD;
    backward.kernel_name = "SigmoidCrossEntropyWithLogitsGradV2";
    backward.compute = compute_backward;
    backward.check_inputs = check_backward;
    ops.push_back(backward);

    ElementwiseOp target_backward;
    target_backward.kind = NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD;
    target_backward.kernel_name = "BinaryCrossEntropyWithLogitsTargetGrad";
    target_backward.compute = compute_target_backward;
    target_backward.check_inputs = check_backward;
    ops.push_back(target_backward);
}

}  // namespace nnplug::emu
