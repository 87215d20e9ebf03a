// The conformance kit's view of the binary cross-entropy ops on logits: how to call them
// with tensors and attributes in signature order, and the roles golden files name them by.
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>
#include <binary_cross_entropy_with_logits_reference.h>
#include <nnplug/ops/binary_cross_entropy_with_logits_math.h>

#include <algorithm>
#include <cmath>

#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0].i, writable(t[4]),
                                                             workspace, executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], a[0].i,
                                                                     writable(t[5]), workspace, executor);
}

aclnnStatus target_backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                            uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], a[0].i, writable(t[5]), workspace, executor);
}

// The float64 operands, with posWeight's absence as the reference spells it.
struct Inputs64 {
    double g, x, y, w, p, m, sp;
    explicit Inputs64(const ElementInputs& e)
        : g(e.g),
          x(e.x),
          y(e.y),
          w(e.w),
          p(e.has_p ? e.p : reference::kNoPosWeight),
          m(std::max(-x, 0.0)),
          sp(std::log1p(std::exp(-std::fabs(x)))) {}
};

ElementExpectation forward_element(const ElementInputs& e) {
    const Inputs64 d(e);
    const float c =
        e.has_p ? bce_with_logits_forward_pos(e.x, e.y, e.w, e.p) : bce_with_logits_forward(e.x, e.y, e.w);
    return {
        c, reference::bce_with_logits_forward(d.w, d.p, d.x, d.y),
        std::fabs(d.w) * (std::fabs((1 - d.y) * d.x) + std::fabs((d.p - 1) * d.y + 1) * (d.m + d.sp) + 1)};
}

ElementExpectation backward_element(const ElementInputs& e) {
    const Inputs64 d(e);
    const float c = e.has_p ? bce_with_logits_backward_pos(e.g, e.x, e.y, e.w, e.p, e.scale)
                            : bce_with_logits_backward(e.g, e.x, e.y, e.w, e.scale);
    const double t = d.p * d.y;
    return {c, reference::bce_with_logits_backward(d.g, d.w, d.p, d.x, d.y, e.scale64),
            std::fabs(d.g * d.w * e.scale64) * (std::fabs(t + 1 - d.y) + std::fabs(t))};
}

ElementExpectation target_backward_element(const ElementInputs& e) {
    const Inputs64 d(e);
    const float c = e.has_p ? bce_with_logits_target_backward_pos(e.g, e.x, e.w, e.p, e.scale)
                            : bce_with_logits_target_backward(e.g, e.x, e.w, e.scale);
    return {c, reference::bce_with_logits_target_backward(d.g, d.w, d.p, d.x, e.scale64),
            std::fabs(d.g * d.w * e.scale64) * (std::fabs(d.x) + (1 + std::fabs(d.p)) * (d.m + d.sp + 1))};
}

// The probes (KitRules::probe_inputs): calls whose result is each element's transcendental
// part exactly. The loss at |x| with y = p = 1 is (0 + 0) + sp = sp; the self gradient at
// y = 0 with p = 1 is (1 - 0)·s - 0 = s; the target gradient at -|x| with p = 0 is
// (0 - lp) - 0·logσ(-|x|) = -lp, lp = log1p(exp(-|x|)). Every other factor is 1.
ElementInputs forward_probe(const ElementInputs& e) {
    return {1.0f, std::fabs(e.x), 1.0f, 1.0f, 1.0f, true, 1.0f, 1.0};
}

float forward_given(const ElementInputs& e, float sp) {
    return e.has_p ? bce_with_logits_forward_pos_given(e.x, e.y, e.w, e.p, sp)
                   : bce_with_logits_forward_given(e.x, e.y, e.w, sp);
}

ElementInputs backward_probe(const ElementInputs& e) {
    return {1.0f, e.x, 0.0f, 1.0f, 1.0f, true, 1.0f, 1.0};
}

float backward_given(const ElementInputs& e, float s) {
    return e.has_p ? bce_with_logits_backward_pos_given(e.g, e.y, e.w, e.p, e.scale, s)
                   : bce_with_logits_backward_given(e.g, e.y, e.w, e.scale, s);
}

ElementInputs target_backward_probe(const ElementInputs& e) {
    return {1.0f, -std::fabs(e.x), 0.0f, 1.0f, 0.0f, true, 1.0f, 1.0};
}

float target_backward_given(const ElementInputs& e, float minus_lp) {
    return e.has_p ? bce_with_logits_target_backward_pos_given(e.g, e.x, e.w, e.p, e.scale, -minus_lp)
                   : bce_with_logits_target_backward(e.g, e.x, e.w, e.scale);
}

// The family's values: self holds logits; each op is fixed but for its exp and log.
KitRules logits_rules(ElementExpectation (*evaluate)(const ElementInputs&),
                      ElementInputs (*probe_inputs)(const ElementInputs&),
                      float (*canonical_given)(const ElementInputs&, float)) {
    KitRules rules;
    rules.evaluate = evaluate;
    rules.self_values = SelfValues::kLogit;
    rules.probe_inputs = probe_inputs;
    rules.canonical_given = canonical_given;
    return rules;
}

}  // namespace

void register_binary_cross_entropy_with_logits_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back({"binary_cross_entropy_with_logits",
                   "aclnnBinaryCrossEntropyWithLogits",
                   {"self", "target", "weight", "posWeight", "out"},
                   {"reduction"},
                   "out",
                   forward,
                   aclnnBinaryCrossEntropyWithLogits,
                   false,
                   {},
                   {}});
    ops.back().kit = logits_rules(forward_element, forward_probe, forward_given);
    ops.push_back({"binary_cross_entropy_with_logits_backward",
                   "aclnnBinaryCrossEntropyWithLogitsBackward",
                   {"gradOutput", "self", "target", "weight", "posWeight", "out"},
                   {"reduction"},
                   "out",
                   backward,
                   aclnnBinaryCrossEntropyWithLogitsBackward,
                   true,
                   {},
                   {}});
    ops.back().kit = logits_rules(backward_element, backward_probe, backward_given);
    ops.push_back({"binary_cross_entropy_with_logits_target_backward",
                   "aclnnBinaryCrossEntropyWithLogitsTargetBackward",
                   {"gradOutput", "self", "target", "weight", "posWeight", "gradTarget"},
                   {"reduction"},
                   "gradTarget",
                   target_backward,
                   aclnnBinaryCrossEntropyWithLogitsTargetBackward,
                   true,
                   {},
                   {}});
    ops.back().kit = logits_rules(target_backward_element, target_backward_probe, target_backward_given);
}

}  // namespace nnplug::conformance
