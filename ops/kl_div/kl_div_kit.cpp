// The conformance kit's view of aclnnKlDiv and its two gradients: how to call them with tensors
// and typed attributes in signature order (reduction, logTarget), the roles golden files name
// them by, and the values the kit draws: targets in (0, 1], both logTarget values.
#include <aclnnop/aclnn_kl_div.h>
#include <aclnnop/aclnn_kl_div_backward.h>
#include <aclnnop/aclnn_kl_div_target_backward.h>
#include <kl_div_reference.h>
#include <nnplug/ops/kl_div_math.h>

#include <cmath>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

// logTarget from a call's attributes; a caller that passes the reduction alone (a test driving
// every op the same way) gets logTarget false.
bool log_target_of(const std::vector<AttrArg>& a) {
    return a.size() > 1 && a[1].b;
}

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnKlDivGetWorkspaceSize(t[0], t[1], a[0].i, log_target_of(a), writable(t[2]), workspace,
                                      executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnKlDivBackwardGetWorkspaceSize(t[0], t[1], t[2], a[0].i, log_target_of(a), writable(t[3]),
                                              workspace, executor);
}

aclnnStatus target_backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                            uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnKlDivTargetBackwardGetWorkspaceSize(t[0], t[1], t[2], a[0].i, log_target_of(a),
                                                    writable(t[3]), workspace, executor);
}

bool log_target(const ElementInputs& e) {
    return e.attrs != nullptr && e.attrs[1].b;
}

// The loss's float32 expression cancels where x is near log t (or t): a few ulps of the terms.
ElementExpectation forward_element(const ElementInputs& e) {
    const bool logged = log_target(e);
    const double t = e.y, x = e.x;
    const double magnitude = logged  ? std::exp(t) * (std::fabs(t) + std::fabs(x))
                             : t > 0 ? t * (std::fabs(std::log(t)) + std::fabs(x))
                                     : 0.0;
    return {kl_div(e.x, e.y, logged), reference::kl_div(x, t, logged), magnitude};
}

ElementExpectation backward_element(const ElementInputs& e) {
    const bool logged = log_target(e);
    return {kl_div_backward(e.g, e.y, logged, e.scale),
            reference::kl_div_backward(e.g, e.y, logged, e.scale64), 0.0};
}

ElementExpectation target_backward_element(const ElementInputs& e) {
    const bool logged = log_target(e);
    const double t = e.y, x = e.x, gs = std::fabs(static_cast<double>(e.g) * e.scale64);
    const double magnitude = logged  ? gs * std::exp(t) * (std::fabs(t - x) + 1.0)
                             : t > 0 ? gs * (std::fabs(std::log(t)) + std::fabs(x) + 1.0)
                                     : 0.0;
    return {kl_div_target_backward(e.g, e.x, e.y, logged, e.scale),
            reference::kl_div_target_backward(e.g, x, t, logged, e.scale64), magnitude};
}

void set_rules(KitRules& kit, ElementExpectation (*evaluate)(const ElementInputs&)) {
    kit.evaluate = evaluate;
    kit.target_values = TargetValues::kPositive;
    kit.attr_sets = {{AttrArg::boolean(false)}, {AttrArg::boolean(true)}};
}

}  // namespace

void register_kl_div_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"kl_div",
                   "aclnnKlDiv",
                   {"self", "target", "out"},
                   {"reduction", "logTarget"},
                   "out",
                   forward,
                   aclnnKlDiv,
                   false,
                   {},
                   {}});
    set_rules(ops.back().kit, forward_element);
    ops.push_back({"kl_div_backward",
                   "aclnnKlDivBackward",
                   {"gradOutput", "self", "target", "out"},
                   {"reduction", "logTarget"},
                   "out",
                   backward,
                   aclnnKlDivBackward,
                   false,
                   {},
                   {}});
    set_rules(ops.back().kit, backward_element);
    ops.push_back({"kl_div_target_backward",
                   "aclnnKlDivTargetBackward",
                   {"gradOutput", "self", "target", "gradTarget"},
                   {"reduction", "logTarget"},
                   "gradTarget",
                   target_backward,
                   aclnnKlDivTargetBackward,
                   false,
                   {},
                   {}});
    set_rules(ops.back().kit, target_backward_element);
    ops.back().kit.gradient_wrt = "target";
}

}  // namespace nnplug::conformance
