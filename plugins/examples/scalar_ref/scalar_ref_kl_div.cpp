// scalar_ref's aclnnKlDiv and its two gradients: <nnplug/ops/kl_div_math.h>'s float32
// expressions, one element at a time, logTarget from the descriptor. batchmean arrives as a
// mean whose NNPLUG_ATTR_REDUCE_COUNT (the loss) or NNPLUG_ATTR_SCALE (the gradients) is that of
// self's first dimension, so the walk's mean needs nothing here.
#include <nnplug/ops/kl_div_math.h>

#include "scalar_ref_walk.h"

namespace scalar_ref {
namespace {

bool log_target(const nnplug_op_desc& d) {
#ifdef SCALAR_REF_BUG_LOG_TARGET_IGNORED  // BUG: the target read as probabilities always
    if (d.op >= 0) return false;
#endif
    return nnplug_attr_bool(&d, NNPLUG_ATTR_LOG_TARGET, 0) != 0;
}

// The gradients' factor: 1/N for mean, 1/self.size(0) for batchmean, else 1.
float scale_of(const nnplug_op_desc& d) {
#ifdef SCALAR_REF_BUG_BATCHMEAN_NUMEL  // BUG: every mean over the element count, batchmean's too
    if (nnplug::sdk::reduction(d) == NNPLUG_REDUCTION_MEAN) return static_cast<float>(1.0 / double(d.numel));
#endif
    return nnplug::sdk::scale(d);
}

nnplug_status run_kl_div(const nnplug_op_desc& d) {  // aclnnKlDiv
    const bool logged = log_target(d);
#ifdef SCALAR_REF_BUG_BATCHMEAN_NUMEL  // BUG: the loss's mean over the element count, batchmean's too
    nnplug_op_desc numel = d;
    for (int32_t i = 0; i < numel.attr_count; ++i)
        if (numel.attrs[i].key == NNPLUG_ATTR_REDUCE_COUNT) numel.attrs[i].value.i64 = d.numel;
    const nnplug_op_desc& desc = numel;
#else
    const nnplug_op_desc& desc = d;
#endif
    return for_each_element(desc, NNPLUG_KL_DIV_OUT, [&](const Position& at) {
        return nnplug::kl_div(at.load(NNPLUG_KL_DIV_SELF), at.load(NNPLUG_KL_DIV_TARGET), logged);
    });
}

nnplug_status run_kl_div_backward(const nnplug_op_desc& d) {  // aclnnKlDivBackward
    const bool logged = log_target(d);
    const float scale = scale_of(d);
    return for_each_element(d, NNPLUG_KL_DIV_BACKWARD_OUT, [&](const Position& at) {
        return nnplug::kl_div_backward(at.load(NNPLUG_KL_DIV_BACKWARD_GRAD_OUTPUT),
                                       at.load(NNPLUG_KL_DIV_BACKWARD_TARGET), logged, scale);
    });
}

nnplug_status run_kl_div_target_backward(const nnplug_op_desc& d) {  // aclnnKlDivTargetBackward
    const bool logged = log_target(d);
    const float scale = scale_of(d);
    return for_each_element(d, NNPLUG_KL_DIV_BACKWARD_OUT, [&](const Position& at) {
        return nnplug::kl_div_target_backward(at.load(NNPLUG_KL_DIV_BACKWARD_GRAD_OUTPUT),
                                              at.load(NNPLUG_KL_DIV_BACKWARD_SELF),
                                              at.load(NNPLUG_KL_DIV_BACKWARD_TARGET), logged, scale);
    });
}

const Registration kForward{{NNPLUG_OP_KL_DIV}, run_kl_div};
const Registration kBackward{{NNPLUG_OP_KL_DIV_BACKWARD}, run_kl_div_backward};
const Registration kTargetBackward{{NNPLUG_OP_KL_DIV_TARGET_BACKWARD}, run_kl_div_target_backward};

}  // namespace
}  // namespace scalar_ref
