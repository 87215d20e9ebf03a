// Gradient check of the with-logits ops: aclnnBinaryCrossEntropyWithLogitsBackward is the
// derivative of the loss w.r.t. self, ...TargetBackward its derivative w.r.t. target. For random
// logits, every reduction, with and without weight and posWeight (both broadcast over rows, as
// posWeight [C] against [N, C] is used), the central finite difference of the float64 loss
// reference matches the float64 gradient references tightly and the backend's float32
// gradients to float32 accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "acl_test_support.h"
#include "binary_cross_entropy_with_logits_reference.h"
#include "op_catalog.h"

namespace {

using nnplug::test::DeviceTensor;
namespace reference = nnplug::reference;

constexpr int64_t kRows = 6, kCols = 7, kCount = kRows * kCols;

struct Inputs {
    std::vector<float> grad, self, target, weight, pos_weight;  // weight and pos_weight: [kCols]
    bool weighted, positive;
    int64_t reduction;

    double w(size_t i) const { return weighted ? weight[i % kCols] : 1.0; }
    double p(size_t i) const { return positive ? pos_weight[i % kCols] : reference::kNoPosWeight; }
    double g(size_t i) const { return grad[reduction == 0 ? i : 0]; }
    double scale() const { return reduction == 1 ? 1.0 / static_cast<double>(kCount) : 1.0; }

    // float32 rounding where the terms of the gradient cancel: a few float32 epsilons of the
    // terms' size, at most (1 + p) * (1 + |x|) times g * w * scale.
    double allowance(size_t i) const {
        return 1e-6 * std::abs(g(i) * w(i)) * scale() * (1 + p(i)) * (1 + std::abs(self[i]));
    }

    // The scalar the gradients differentiate: sum_i g_i * l_i (none), g * mean(l), g * sum(l).
    double objective(const std::vector<double>& x, const std::vector<double>& y) const {
        double total = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            const double l = reference::bce_with_logits_forward(w(i), p(i), x[i], y[i]);
            total += (reduction == 0 ? grad[i] : 1.0) * l;
        }
        return reduction == 0 ? total : grad[0] * total * scale();
    }
};

Inputs random_inputs(int64_t reduction, bool weighted, bool positive) {
    std::mt19937 generator(static_cast<uint32_t>(reduction * 4 + int64_t{weighted} * 2 + positive));
    std::uniform_real_distribution<float> logit(-6.0f, 6.0f), unit(0.0f, 1.0f), signed_unit(-1.0f, 1.0f);
    Inputs in{{}, {}, {}, {}, {}, weighted, positive, reduction};
    for (int64_t i = 0; i < kCount; ++i) {
        in.self.push_back(logit(generator));
        in.target.push_back(unit(generator));
    }
    for (int64_t c = 0; c < kCols; ++c) {
        in.weight.push_back(2.0f * unit(generator));
        in.pos_weight.push_back(0.25f + 3.75f * unit(generator));
    }
    for (int64_t i = 0; i < (reduction == 0 ? kCount : 1); ++i) in.grad.push_back(signed_unit(generator));
    return in;
}

// The op (by its test catalog name) on the backend; its float32 output.
std::vector<float> run_gradient(const std::string& op, const Inputs& in) {
    const std::vector<int64_t> shape = {kRows, kCols};
    DeviceTensor g(in.grad, in.reduction == 0 ? shape : std::vector<int64_t>{});
    DeviceTensor s(in.self, shape), t(in.target, shape), w(in.weight, {kCols}), p(in.pos_weight, {kCols});
    DeviceTensor out(std::vector<float>(kCount, 0.0f), shape);
    const aclnnStatus status = nnplug::test::run_op(
        nnplug::test::op_named(op),
        {g, s, t, in.weighted ? w.get() : nullptr, in.positive ? p.get() : nullptr, out}, {in.reduction});
    EXPECT_EQ(status, ACLNN_SUCCESS) << aclGetRecentErrMsg();
    return out.storage();
}

using Param = std::tuple<int64_t, bool, bool>;  // reduction, weight, posWeight

class BceWithLogitsGradientCheck : public nnplug::test::RuntimeTest,
                                   public ::testing::WithParamInterface<Param> {};

// Central differences with h = 1e-5 on a smooth objective: the truncation error is about
// h^2 |f'''| / 6 and the rounding error about 1e-16 |f| / h, both below 1e-9 here.
constexpr double kStep = 1e-5;

TEST_P(BceWithLogitsGradientCheck, BackwardIsTheDerivativeWithRespectToSelf) {
    const auto [reduction, weighted, positive] = GetParam();
    const Inputs in = random_inputs(reduction, weighted, positive);
    const std::vector<float> backend = run_gradient("binary_cross_entropy_with_logits_backward", in);
    std::vector<double> x(in.self.begin(), in.self.end()), y(in.target.begin(), in.target.end());
    for (size_t i = 0; i < x.size(); ++i) {
        const double saved = x[i];
        x[i] = saved + kStep;
        const double above = in.objective(x, y);
        x[i] = saved - kStep;
        const double below = in.objective(x, y);
        x[i] = saved;
        const double numeric = (above - below) / (2 * kStep);
        const double analytic = reference::bce_with_logits_backward(in.g(i), in.w(i), in.p(i), in.self[i],
                                                                    in.target[i], in.scale());
        EXPECT_NEAR(analytic, numeric, 1e-7 * std::abs(numeric) + 1e-9) << "float64 reference, element " << i;
        EXPECT_NEAR(backend[i], numeric, 1e-5 * std::abs(numeric) + in.allowance(i))
            << "backend, element " << i;
    }
}

TEST_P(BceWithLogitsGradientCheck, TargetBackwardIsTheDerivativeWithRespectToTarget) {
    const auto [reduction, weighted, positive] = GetParam();
    const Inputs in = random_inputs(reduction, weighted, positive);
    const std::vector<float> backend = run_gradient("binary_cross_entropy_with_logits_target_backward", in);
    std::vector<double> x(in.self.begin(), in.self.end()), y(in.target.begin(), in.target.end());
    for (size_t i = 0; i < y.size(); ++i) {
        const double saved = y[i];
        y[i] = saved + kStep;
        const double above = in.objective(x, y);
        y[i] = saved - kStep;
        const double below = in.objective(x, y);
        y[i] = saved;
        // The loss is linear in target: the central difference is exact but for rounding.
        const double numeric = (above - below) / (2 * kStep);
        const double analytic =
            reference::bce_with_logits_target_backward(in.g(i), in.w(i), in.p(i), in.self[i], in.scale());
        EXPECT_NEAR(analytic, numeric, 1e-7 * std::abs(numeric) + 1e-9) << "float64 reference, element " << i;
        EXPECT_NEAR(backend[i], numeric, 1e-5 * std::abs(numeric) + in.allowance(i))
            << "backend, element " << i;
    }
}

std::string name(const ::testing::TestParamInfo<Param>& info) {
    const int64_t reduction = std::get<0>(info.param);
    return std::string(reduction == 0   ? "none"
                       : reduction == 1 ? "mean"
                                        : "sum") +
           (std::get<1>(info.param) ? "_weight" : "_noweight") +
           (std::get<2>(info.param) ? "_posweight" : "");
}

INSTANTIATE_TEST_SUITE_P(Reductions, BceWithLogitsGradientCheck,
                         ::testing::Combine(::testing::Values(int64_t{0}, int64_t{1}, int64_t{2}),
                                            ::testing::Bool(), ::testing::Bool()),
                         name);

}  // namespace
