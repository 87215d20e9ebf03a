// The conformance kit's view of the NLLLoss ops: their calls with typed attributes, and the
// value generators the kit's cases come from (class indices in [0, C) with some rows
// ignored, weights a 16-bit type rounds, every target dtype and reduction), their float64
// expectations (reference/nll_loss_reference.h), the targets the kernel must refuse, and the
// finite differences of the loss that check each gradient.
#include <aclnnop/aclnn_nll_loss.h>
#include <aclnnop/aclnn_nll_loss2d.h>
#include <aclnnop/aclnn_nll_loss2d_backward.h>
#include <aclnnop/aclnn_nll_loss_backward.h>
#include <nll_loss_reference.h>
#include <nnplug/op_slots.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "device_tensor.h"
#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

constexpr float kSentinel = 1234.5f;

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnNLLLossGetWorkspaceSize(t[0], t[1], t[2], a[0].i, a[1].i, writable(t[3]), writable(t[4]),
                                        workspace, executor);
}

aclnnStatus forward2d(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                      uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnNLLLoss2dGetWorkspaceSize(t[0], t[1], t[2], a[0].i, a[1].i, writable(t[3]), writable(t[4]),
                                          workspace, executor);
}

aclnnStatus backward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnNLLLossBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0].i, a[1].i, t[4], writable(t[5]),
                                                workspace, executor);
}

aclnnStatus backward2d(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                       uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnNLLLoss2dBackwardGetWorkspaceSize(t[0], t[1], t[2], t[3], a[0].i, a[1].i, writable(t[4]),
                                                  writable(t[5]), workspace, executor);
}

// Values as a tensor of dtype holds them.
std::vector<float> stored(const std::vector<float>& values, aclDataType dtype) {
    return decode(encode(values, dtype), dtype);
}

std::vector<double> widened(const std::vector<float>& values) {
    return {values.begin(), values.end()};
}

// One problem: log-probabilities of self_shape, targets (some equal to ignore), weights.
struct Problem {
    std::vector<int64_t> self_shape, target_shape;
    int64_t classes = 0, inner = 1, ignore = -100;
    aclDataType dtype = ACL_FLOAT, target_dtype = ACL_INT64;
    std::vector<float> self, weight;
    std::vector<int64_t> target;
};

Problem make_problem(std::vector<int64_t> shape, aclDataType dtype, aclDataType target_dtype, int64_t ignore,
                     std::mt19937_64& random) {
    Problem p;
    p.self_shape = shape;
    p.dtype = dtype;
    p.target_dtype = target_dtype;
    p.ignore = ignore;
    const size_t axis = shape.size() >= 2 ? 1 : 0;
    p.classes = shape[axis];
    p.target_shape = shape;
    p.target_shape.erase(p.target_shape.begin() + static_cast<std::ptrdiff_t>(axis));
    for (size_t k = 2; k < shape.size(); ++k) p.inner *= shape[k];
    std::uniform_real_distribution<float> value(-6.0f, 0.0f), weight(0.1f, 3.0f);
    std::uniform_int_distribution<int64_t> cls(0, p.classes - 1);
    for (int64_t i = 0; i < element_count(shape); ++i) p.self.push_back(value(random));
    for (int64_t c = 0; c < p.classes; ++c) p.weight.push_back(weight(random));  // 16-bit types round them
    p.self = stored(p.self, dtype);
    p.weight = stored(p.weight, dtype);
    for (int64_t i = 0; i < element_count(p.target_shape); ++i)
        p.target.push_back(i % 4 == 1 && (ignore >= 0 || target_dtype != ACL_UINT8) ? ignore : cls(random));
    return p;
}

HostTensor targets(const Problem& p) {
    return HostTensor::of(p.target_dtype, p.target_shape, {p.target.begin(), p.target.end()});
}

// The loss call of a problem and its expectations.
ClassCase loss_case(const std::string& name, const Problem& p, int64_t reduction) {
    const auto expected = reference::nll_loss(widened(p.self), p.target, widened(p.weight), p.classes,
                                              p.inner, reduction, p.ignore);
    const std::vector<int64_t> out_shape = reduction == 0 ? p.target_shape : std::vector<int64_t>{};
    ClassCase c;
    c.name = name;
    c.tensors = {HostTensor::of(p.dtype, p.self_shape, p.self), targets(p),
                 HostTensor::of(p.dtype, {p.classes}, p.weight),
                 HostTensor::of(ACL_FLOAT, out_shape, std::vector<float>(expected.loss.size(), kSentinel)),
                 HostTensor::of(ACL_FLOAT, {1}, {kSentinel})};
    c.attrs = {AttrArg::int64(reduction), AttrArg::int64(p.ignore)};
    c.expected = {{}, {}, {}, expected.loss, {reduction == 0 ? double{kSentinel} : expected.total_weight}};
    return c;
}

// The gradient call of a problem, given the forward's total weight.
ClassCase gradient_case(const std::string& name, const Problem& p, int64_t reduction) {
    const auto forward =
        reference::nll_loss(widened(p.self), p.target, widened(p.weight), p.classes, p.inner, 1, p.ignore);
    const std::vector<float> total = stored({static_cast<float>(forward.total_weight)}, p.dtype);
    const std::vector<float> grad = stored(
        reduction == 0 ? std::vector<float>(p.target.size(), 0.75f) : std::vector<float>{1.5f}, p.dtype);
    ClassCase c;
    c.name = name;
    c.tensors = {HostTensor::of(p.dtype, reduction == 0 ? p.target_shape : std::vector<int64_t>{}, grad),
                 HostTensor::of(p.dtype, p.self_shape, p.self),
                 targets(p),
                 HostTensor::of(p.dtype, {p.classes}, p.weight),
                 HostTensor::of(p.dtype, {1}, total),
                 HostTensor::of(p.dtype, p.self_shape, std::vector<float>(p.self.size(), kSentinel))};
    c.attrs = {AttrArg::int64(reduction), AttrArg::int64(p.ignore)};
    c.expected.resize(6);
    c.expected[5] = reference::nll_loss_backward(widened(grad), p.target, widened(p.weight), p.classes,
                                                 p.inner, reduction, p.ignore, total[0]);
    return c;
}

std::string dtype_word(aclDataType dtype) {
    switch (dtype) {
        case ACL_FLOAT16:
            return "f16";
        case ACL_BF16:
            return "bf16";
        case ACL_INT64:
            return "i64";
        case ACL_INT32:
            return "i32";
        case ACL_UINT8:
            return "u8";
        default:
            return "f32";
    }
}

template <ClassCase (*kMake)(const std::string&, const Problem&, int64_t)>
std::vector<ClassCase> cases_of(const std::vector<std::vector<int64_t>>& shapes, uint64_t seed, bool quick) {
    std::mt19937_64 random(seed);
    std::vector<ClassCase> cases;
    for (const auto& shape : shapes)
        for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16})
            for (const aclDataType target_dtype : {ACL_INT64, ACL_INT32, ACL_UINT8}) {
                if (quick && dtype != ACL_FLOAT && target_dtype != ACL_INT64) continue;
                for (int64_t reduction = 0; reduction <= 2; ++reduction) {
                    const int64_t ignore = target_dtype == ACL_INT32 ? 1 : -100;
                    const Problem p = make_problem(shape, dtype, target_dtype, ignore, random);
                    std::string name = std::to_string(shape.size()) + "d_" + dtype_word(dtype) + "_" +
                                       dtype_word(target_dtype) + "_reduction" + std::to_string(reduction);
                    cases.push_back(kMake(name, p, reduction));
                }
            }
    return cases;
}

const std::vector<std::vector<int64_t>> kShapes = {{300, 13}, {6}, {1, 40}};
const std::vector<std::vector<int64_t>> kShapes2d = {{3, 5, 4, 7}, {1, 2, 1, 300}};

std::vector<ClassCase> random_loss(uint64_t seed, bool quick) {
    return cases_of<loss_case>(kShapes, seed, quick);
}
std::vector<ClassCase> random_loss2d(uint64_t seed, bool quick) {
    return cases_of<loss_case>(kShapes2d, seed, quick);
}
std::vector<ClassCase> random_gradient(uint64_t seed, bool quick) {
    return cases_of<gradient_case>(kShapes, seed, quick);
}
std::vector<ClassCase> random_gradient2d(uint64_t seed, bool quick) {
    return cases_of<gradient_case>(kShapes2d, seed, quick);
}

// A target outside [0, C) at element 5 of an otherwise valid call: a class too large, a
// negative one that is not ignoreIndex, one past C in uint8.
template <ClassCase (*kMake)(const std::string&, const Problem&, int64_t), int kTargetSlot>
std::vector<ClassCase> refused_of(const std::vector<int64_t>& shape, uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<ClassCase> cases;
    for (const auto& [target_dtype, bad] :
         {std::pair{ACL_INT64, int64_t{1} << 40}, std::pair{ACL_INT32, int64_t{-1}},
          std::pair{ACL_UINT8, int64_t{200}}}) {
        const Problem p = make_problem(shape, ACL_FLOAT, target_dtype, -100, random);
        const std::string value = std::to_string(bad);
        ClassCase c = kMake("target_" + dtype_word(target_dtype) + "_" + value, p, 0);
        c.tensors[kTargetSlot].values[5] = static_cast<float>(bad);
        c.refusal =
            "target element 5 is " + value + ", not a class index in [0, " + std::to_string(p.classes) + ")";
        cases.push_back(c);
    }
    return cases;
}

std::vector<ClassCase> refused_loss(uint64_t seed) {
    return refused_of<loss_case, NNPLUG_NLL_LOSS_TARGET>({8, 5}, seed);
}
std::vector<ClassCase> refused_loss2d(uint64_t seed) {
    return refused_of<loss_case, NNPLUG_NLL_LOSS_TARGET>({1, 5, 2, 4}, seed);
}
std::vector<ClassCase> refused_gradient(uint64_t seed) {
    return refused_of<gradient_case, NNPLUG_NLL_LOSS_BACKWARD_TARGET>({8, 5}, seed);
}
std::vector<ClassCase> refused_gradient2d(uint64_t seed) {
    return refused_of<gradient_case, NNPLUG_NLL_LOSS_BACKWARD_TARGET>({1, 5, 2, 4}, seed);
}

// The gradient against central differences of the backend's own loss (mean, float32): the
// loss is linear in self, so a step of 1/4 differs only by the loss's rounding.
std::string gradient_check(const char* loss_name, const char* gradient_name,
                           const std::vector<int64_t>& shape, uint64_t seed) {
    std::mt19937_64 random(seed);
    const Problem p = make_problem(shape, ACL_FLOAT, ACL_INT64, -100, random);
    const OpUnderTest& loss_op = op_named(loss_name);
    const OpUnderTest& gradient_op = op_named(gradient_name);
    ClassCase at = loss_case("finite_differences", p, 1);
    ClassCase g = gradient_case("finite_differences", p, 1);
    g.tensors[NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT].values = {1.0f};  // the loss's own gradient
    const float step = 0.25f;
    auto loss_at = [&](size_t element, float delta) -> double {
        ClassCase shifted = at;
        shifted.tensors[0].values[element] += delta;
        shifted.expected.assign(shifted.tensors.size(), {});
        std::vector<float> loss;
        const std::string why = run_class_case_output(loss_op, shifted, 3, loss);
        if (!why.empty()) throw std::runtime_error(why);
        return loss[0];
    };
    std::vector<float> analytic;
    g.expected.assign(g.tensors.size(), {});
    if (std::string why = run_class_case_output(gradient_op, g, 5, analytic); !why.empty()) return why;
    for (size_t e = 0; e < p.self.size(); e += 3) {
        const double difference = (loss_at(e, step) - loss_at(e, -step)) / (2 * step);
        if (std::abs(difference - analytic[e]) > 1e-4 + 1e-3 * std::abs(difference))
            return "element " + std::to_string(e) + " of the gradient is " + std::to_string(analytic[e]) +
                   ", the loss's central difference " + std::to_string(difference);
    }
    return "";
}

std::string check_backward(uint64_t seed) {
    return gradient_check("nll_loss", "nll_loss_backward", {12, 5}, seed);
}
std::string check_backward2d(uint64_t seed) {
    return gradient_check("nll_loss2d", "nll_loss2d_backward", {2, 3, 2, 3}, seed);
}

const ClassKit kLoss{forward, random_loss, refused_loss, nullptr};
const ClassKit kLoss2d{forward2d, random_loss2d, refused_loss2d, nullptr};
const ClassKit kBackward{backward, random_gradient, refused_gradient, check_backward};
const ClassKit kBackward2d{backward2d, random_gradient2d, refused_gradient2d, check_backward2d};

OpUnderTest entry(const char* name, const char* api, std::vector<std::string> operands, const char* output,
                  aclnnStatus (*second)(void*, uint64_t, aclOpExecutor*, aclrtStream), const ClassKit& kit) {
    OpUnderTest op{
        name, api, std::move(operands), {"reduction", "ignoreIndex"}, output, nullptr, second, false, {}, {}};
    op.class_kit = &kit;
    return op;
}

}  // namespace

void register_nll_loss_kit(std::vector<OpUnderTest>& ops) {
    const std::vector<std::string> loss = {"self", "target", "weight", "out", "totalWeightOut"};
    const std::vector<std::string> gradient = {"gradOutput", "self",        "target",
                                               "weight",     "totalWeight", "out"};
    ops.push_back(entry("nll_loss", "aclnnNLLLoss", loss, "out", aclnnNLLLoss, kLoss));
    ops.push_back(entry("nll_loss2d", "aclnnNLLLoss2d", loss, "out", aclnnNLLLoss2d, kLoss2d));
    ops.push_back(
        entry("nll_loss_backward", "aclnnNLLLossBackward", gradient, "out", aclnnNLLLossBackward, kBackward));
    ops.push_back(entry("nll_loss2d_backward", "aclnnNLLLoss2dBackward", gradient, "out",
                        aclnnNLLLoss2dBackward, kBackward2d));
}

}  // namespace nnplug::conformance
