// The conformance kit's view of aclnnCrossEntropyLoss and its gradient: their calls with
// typed attributes (the reduction word, ignoreIndex, labelSmoothing, the zloss arguments) and
// the value generators of the kit's cases: logits with rows near 100 (exp overflows without
// the running max), class indices with some rows ignored, float32 weights, label smoothing,
// every input dtype; the targets the kernel must refuse; the finite differences of the loss.
#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <aclnnop/aclnn_cross_entropy_loss_grad.h>
#include <cross_entropy_loss_reference.h>
#include <nnplug/op_slots.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "device_tensor.h"
#include "op_catalog.h"

namespace nnplug::conformance {
namespace {

constexpr float kSentinel = 1234.5f;

// The word of a reduction argument, or null for AttrArg's null word.
char* word_of(const AttrArg& a) {
    return a.null_word ? nullptr : const_cast<char*>(a.word.c_str());
}

aclnnStatus forward(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                    uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnCrossEntropyLossGetWorkspaceSize(t[0], t[1], t[2], word_of(a[0]), a[1].i, a[2].f, a[3].f,
                                                 a[4].b, t[3], t[4], t[5], t[6], workspace, executor);
}

aclnnStatus gradient(const std::vector<const aclTensor*>& t, const std::vector<AttrArg>& a,
                     uint64_t* workspace, aclOpExecutor** executor) {
    return aclnnCrossEntropyLossGradGetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], t[5], word_of(a[0]),
                                                     a[1].i, a[2].f, a[3].f, t[6], workspace, executor);
}

std::vector<float> stored(const std::vector<float>& values, aclDataType dtype) {
    return decode(encode(values, dtype), dtype);
}

std::vector<double> widened(const std::vector<float>& values) {
    return {values.begin(), values.end()};
}

const char* const kWords[] = {"none", "mean", "sum"};

struct Problem {
    int64_t rows = 0, classes = 0, ignore = -100, reduction = 1;
    double smoothing = 0;
    aclDataType dtype = ACL_FLOAT, target_dtype = ACL_INT64;
    std::vector<float> logits, weight;  // weight empty: none
    std::vector<int64_t> target;
};

Problem make_problem(int64_t rows, int64_t classes, aclDataType dtype, bool weighted,
                     std::mt19937_64& random) {
    Problem p;
    p.rows = rows;
    p.classes = classes;
    p.dtype = dtype;
    std::uniform_real_distribution<float> logit(-8.0f, 8.0f), weight(0.1f, 3.0f), shift(90.0f, 100.0f);
    std::uniform_int_distribution<int64_t> cls(0, classes - 1);
    for (int64_t n = 0; n < rows; ++n) {
        const float offset = n % 5 == 2 ? shift(random) : 0.0f;  // exp(logit) overflows float32 here
        for (int64_t c = 0; c < classes; ++c) p.logits.push_back(logit(random) + offset);
    }
    p.logits = stored(p.logits, dtype);
    if (weighted)
        for (int64_t c = 0; c < classes; ++c) p.weight.push_back(weight(random));
    for (int64_t n = 0; n < rows; ++n) p.target.push_back(cls(random));
    return p;
}

// Every row whose target is class 1 is ignored when ignoreIndex is 1.
std::vector<AttrArg> attrs(const Problem& p, bool with_return_zloss) {
    std::vector<AttrArg> a = {AttrArg::reduction(kWords[p.reduction]), AttrArg::int64(p.ignore),
                              AttrArg::real(p.smoothing), AttrArg::real(0.0)};
    if (with_return_zloss) a.push_back(AttrArg::boolean(false));
    return a;
}

HostTensor weight_tensor(const Problem& p) {
    return p.weight.empty() ? HostTensor{} : HostTensor::of(ACL_FLOAT, {p.classes}, p.weight);
}

ClassCase loss_case(const std::string& name, const Problem& p) {
    const auto expected = reference::cross_entropy_loss(widened(p.logits), p.target, widened(p.weight),
                                                        p.classes, p.reduction, p.ignore, p.smoothing);
    const std::vector<int64_t> loss_shape =
        p.reduction == 0 ? std::vector<int64_t>{p.rows} : std::vector<int64_t>{1};
    ClassCase c;
    c.name = name;
    c.tensors = {
        HostTensor::of(p.dtype, {p.rows, p.classes}, p.logits),
        HostTensor::of(p.target_dtype, {p.rows}, {p.target.begin(), p.target.end()}),
        weight_tensor(p),
        HostTensor::of(p.dtype, loss_shape, std::vector<float>(expected.loss.size(), kSentinel)),
        HostTensor::of(p.dtype, {p.rows, p.classes}, std::vector<float>(p.logits.size(), kSentinel)),
        HostTensor::of(p.dtype, {1}, {kSentinel}),
        HostTensor::of(p.dtype, {p.rows}, std::vector<float>(static_cast<size_t>(p.rows), kSentinel))};
    c.attrs = attrs(p, true);
    c.expected = {{}, {}, {}, expected.loss, expected.log_prob, {kSentinel}, {}};
    // logProb = x - lse keeps the logits' absolute precision; a sum adds the rows' errors.
    double largest = 0;
    for (const float x : p.logits) largest = std::max(largest, static_cast<double>(std::abs(x)));
    c.magnitude.assign(c.tensors.size(), 0.0);
    c.magnitude[NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB] = largest;
    c.magnitude[NNPLUG_CROSS_ENTROPY_LOSS_LOSS] =
        largest * (p.reduction == 2 ? static_cast<double>(p.rows) : 1.0);
    return c;
}

// The gradient from logProb as the forward stores it in the problem's dtype.
ClassCase gradient_case(const std::string& name, const Problem& p) {
    const auto forward_values = reference::cross_entropy_loss(widened(p.logits), p.target, widened(p.weight),
                                                              p.classes, 0, p.ignore, p.smoothing);
    const std::vector<float> log_prob =
        stored({forward_values.log_prob.begin(), forward_values.log_prob.end()}, p.dtype);
    const std::vector<float> grad = stored(
        p.reduction == 0 ? std::vector<float>(static_cast<size_t>(p.rows), 0.5f) : std::vector<float>{2.0f},
        p.dtype);
    ClassCase c;
    c.name = name;
    c.tensors = {
        HostTensor::of(p.dtype, p.reduction == 0 ? std::vector<int64_t>{p.rows} : std::vector<int64_t>{},
                       grad),
        HostTensor::of(p.dtype, {p.rows, p.classes}, log_prob),
        HostTensor::of(p.target_dtype, {p.rows}, {p.target.begin(), p.target.end()}),
        weight_tensor(p),
        HostTensor{},
        HostTensor{},
        HostTensor::of(p.dtype, {p.rows, p.classes}, std::vector<float>(log_prob.size(), kSentinel))};
    c.attrs = attrs(p, false);
    c.expected.resize(7);
    c.expected[6] =
        reference::cross_entropy_loss_grad(widened(grad), widened(log_prob), p.target, widened(p.weight),
                                           p.classes, p.reduction, p.ignore, p.smoothing);
    return c;
}

std::string dtype_word(aclDataType dtype) {
    return dtype == ACL_FLOAT16 ? "f16" : dtype == ACL_BF16 ? "bf16" : "f32";
}

template <ClassCase (*kMake)(const std::string&, const Problem&)>
std::vector<ClassCase> cases_of(uint64_t seed, bool quick) {
    std::mt19937_64 random(seed);
    std::vector<ClassCase> cases;
    // Short rows (in the vector lanes side by side), long ones over several blocks, one row.
    const std::pair<int64_t, int64_t> shapes[] = {{300, 10}, {5, 2500}, {1, 37}};
    for (const auto& [rows, classes] : shapes)
        for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16})
            for (int64_t reduction = 0; reduction <= 2; ++reduction)
                for (const bool weighted : {false, true}) {
                    if (quick && (dtype != ACL_FLOAT || weighted)) continue;
                    Problem p = make_problem(rows, classes, dtype, weighted, random);
                    p.reduction = reduction;
                    p.ignore = weighted ? 1 : -100;
                    p.smoothing = weighted ? 0.2 : 0.0;
                    // int32 targets, which most SoCs' kernels refuse, only where a refusal
                    // leaves the weighted cases to run.
                    p.target_dtype = reduction == 2 && !weighted ? ACL_INT32 : ACL_INT64;
                    cases.push_back(kMake(std::to_string(rows) + "x" + std::to_string(classes) + "_" +
                                              dtype_word(dtype) + "_" + kWords[reduction] +
                                              (weighted ? "_weighted_ignore1_smoothing" : ""),
                                          p));
                }
    return cases;
}

std::vector<ClassCase> random_loss(uint64_t seed, bool quick) {
    return cases_of<loss_case>(seed, quick);
}
std::vector<ClassCase> random_gradient(uint64_t seed, bool quick) {
    return cases_of<gradient_case>(seed, quick);
}

// A target outside [0, C): too large, and -1 with ignoreIndex -1 (a negative ignoreIndex
// ignores nothing, so -1 is no class).
template <ClassCase (*kMake)(const std::string&, const Problem&), int kTargetSlot>
std::vector<ClassCase> refused_of(uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<ClassCase> cases;
    for (const int64_t bad : {int64_t{9}, int64_t{-1}}) {
        Problem p = make_problem(8, 9, ACL_FLOAT, false, random);
        p.ignore = bad < 0 ? bad : -100;
        ClassCase c = kMake("target_" + std::to_string(bad) + "_ignore_" + std::to_string(p.ignore), p);
        c.tensors[kTargetSlot].values[3] = static_cast<float>(bad);
        c.refusal = "target element 3 is " + std::to_string(bad) + ", not a class index in [0, 9)";
        cases.push_back(c);
    }
    return cases;
}

std::vector<ClassCase> refused_loss(uint64_t seed) {
    return refused_of<loss_case, NNPLUG_CROSS_ENTROPY_LOSS_TARGET>(seed);
}
std::vector<ClassCase> refused_gradient(uint64_t seed) {
    return refused_of<gradient_case, NNPLUG_CROSS_ENTROPY_LOSS_GRAD_TARGET>(seed);
}

// The gradient (from the backend's own logProb) against central differences of the
// backend's loss, mean with weights and label smoothing, in float32: a step of 1/64 leaves
// a truncation error of about 1e-5 and a rounding error of about 1e-5 relative.
std::string check_gradient(uint64_t seed) {
    std::mt19937_64 random(seed);
    Problem p = make_problem(6, 5, ACL_FLOAT, true, random);
    p.smoothing = 0.2;
    p.ignore = 1;
    const OpUnderTest& loss_op = op_named("cross_entropy_loss");
    const OpUnderTest& gradient_op = op_named("cross_entropy_loss_grad");
    ClassCase at = loss_case("finite_differences", p);
    at.expected.assign(at.tensors.size(), {});
    std::vector<float> log_prob, analytic;
    if (std::string why = run_class_case_output(loss_op, at, NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB, log_prob);
        !why.empty())
        return why;
    ClassCase g = gradient_case("finite_differences", p);
    g.tensors[NNPLUG_CROSS_ENTROPY_LOSS_GRAD_LOG_PROB].values = log_prob;
    g.tensors[NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS].values = {1.0f};
    g.expected.assign(g.tensors.size(), {});
    if (std::string why = run_class_case_output(gradient_op, g, NNPLUG_CROSS_ENTROPY_LOSS_GRAD_OUT, analytic);
        !why.empty())
        return why;
    const float step = 1.0f / 64;
    auto loss_at = [&](size_t element, float delta) {
        ClassCase shifted = at;
        shifted.tensors[0].values[element] += delta;
        std::vector<float> loss;
        if (std::string why = run_class_case_output(loss_op, shifted, NNPLUG_CROSS_ENTROPY_LOSS_LOSS, loss);
            !why.empty())
            throw std::runtime_error(why);
        return static_cast<double>(loss[0]);
    };
    for (size_t e = 0; e < p.logits.size(); ++e) {
        const double difference = (loss_at(e, step) - loss_at(e, -step)) / (2.0 * step);
        if (std::abs(difference - analytic[e]) > 2e-4 + 2e-3 * std::abs(difference))
            return "element " + std::to_string(e) + " of the gradient is " + std::to_string(analytic[e]) +
                   ", the loss's central difference " + std::to_string(difference);
    }
    return "";
}

const ClassKit kLoss{forward, random_loss, refused_loss, nullptr};
const ClassKit kGradient{gradient, random_gradient, refused_gradient, check_gradient};

OpUnderTest entry(const char* name, const char* api, std::vector<std::string> operands, const char* output,
                  std::vector<std::string> attr_names,
                  aclnnStatus (*second)(void*, uint64_t, aclOpExecutor*, aclrtStream), const ClassKit& kit) {
    OpUnderTest op{name, api, std::move(operands), std::move(attr_names), output, nullptr, second, false,
                   {},   {}};
    op.class_kit = &kit;
    return op;
}

}  // namespace

void register_cross_entropy_loss_kit(std::vector<OpUnderTest>& ops) {
    ops.push_back(
        entry("cross_entropy_loss", "aclnnCrossEntropyLoss",
              {"input", "target", "weightOptional", "lossOut", "logProbOut", "zlossOut", "lseForZlossOut"},
              "lossOut",
              {"reductionOptional", "ignoreIndex", "labelSmoothing", "lseSquareScaleForZloss", "returnZloss"},
              aclnnCrossEntropyLoss, kLoss));
    ops.push_back(entry("cross_entropy_loss_grad", "aclnnCrossEntropyLossGrad",
                        {"gradLoss", "logProb", "target", "weightOptional", "gradZlossOptional",
                         "lseForZlossOptional", "out"},
                        "out",
                        {"reductionOptional", "ignoreIndex", "labelSmoothing", "lseSquareScaleForZloss"},
                        aclnnCrossEntropyLossGrad, kGradient));
}

}  // namespace nnplug::conformance
