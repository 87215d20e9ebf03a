// Gradient check: the backward is the derivative of the forward loss. For random inputs,
// every reduction, with and without weight, the central finite difference of the float64
// forward reference matches the float64 backward reference tightly and the backend's
// float32 backward to float32 accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "acl_test_support.h"
#include "binary_cross_entropy_reference.h"

namespace {

using nnplug::test::DeviceTensor;

// The scalar that the backward differentiates: sum_i g_i * l_i (none), g * mean(l), g * sum(l).
double loss(const std::vector<float>& grad, const std::vector<double>& self, const std::vector<float>& target,
            const std::vector<float>* weight, int64_t reduction) {
    double total = 0;
    for (size_t i = 0; i < self.size(); ++i) {
        const double l = nnplug::reference::bce_forward(weight ? (*weight)[i] : 1.0, self[i], target[i]);
        total += (reduction == 0 ? grad[i] : 1.0) * l;
    }
    if (reduction == 0) return total;
    return grad[0] * (reduction == 1 ? total / static_cast<double>(self.size()) : total);
}

class BceGradientCheck : public nnplug::test::RuntimeTest,
                         public ::testing::WithParamInterface<std::tuple<int64_t, bool>> {};

TEST_P(BceGradientCheck, BackwardIsTheDerivativeOfTheForward) {
    const auto [reduction, weighted] = GetParam();
    const std::vector<int64_t> shape = {6, 7};
    const size_t count = 42;
    std::mt19937 generator(static_cast<uint32_t>(reduction * 2 + weighted));
    std::uniform_real_distribution<float> probability(0.05f, 0.95f), unit(0.0f, 1.0f),
        signed_unit(-1.0f, 1.0f);
    std::vector<float> self(count), target(count), weight(count), grad(reduction == 0 ? count : 1);
    for (size_t i = 0; i < count; ++i) {
        self[i] = probability(generator);
        target[i] = unit(generator);
        weight[i] = 2.0f * unit(generator);
    }
    for (float& g : grad) g = signed_unit(generator);

    DeviceTensor g(grad, reduction == 0 ? shape : std::vector<int64_t>{});
    DeviceTensor s(self, shape), t(target, shape), w(weight, shape),
        out(std::vector<float>(count, 0.0f), shape);
    ASSERT_EQ(nnplug::test::run_backward(g, s, t, weighted ? w.get() : nullptr, reduction, out),
              ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    const std::vector<float> backend = out.storage();

    const std::vector<float>* weights = weighted ? &weight : nullptr;
    std::vector<double> point(self.begin(), self.end());
    const double scale = reduction == 1 ? 1.0 / static_cast<double>(count) : 1.0;
    for (size_t i = 0; i < count; ++i) {
        const double h = 1e-6;
        const double saved = point[i];
        point[i] = saved + h;
        const double above = loss(grad, point, target, weights, reduction);
        point[i] = saved - h;
        const double below = loss(grad, point, target, weights, reduction);
        point[i] = saved;
        const double numeric = (above - below) / (2 * h);
        const double analytic = nnplug::reference::bce_backward(
            grad[reduction == 0 ? i : 0], weighted ? weight[i] : 1.0, self[i], target[i], scale);
        EXPECT_NEAR(analytic, numeric, 1e-6 * std::abs(numeric) + 1e-8) << "float64 reference, element " << i;
        EXPECT_NEAR(backend[i], numeric, 1e-5 * std::abs(numeric) + 1e-7) << "backend, element " << i;
    }
}

std::string name(const ::testing::TestParamInfo<std::tuple<int64_t, bool>>& info) {
    const int64_t reduction = std::get<0>(info.param);
    return std::string(reduction == 0   ? "none"
                       : reduction == 1 ? "mean"
                                        : "sum") +
           (std::get<1>(info.param) ? "_weight" : "_noweight");
}

INSTANTIATE_TEST_SUITE_P(Reductions, BceGradientCheck,
                         ::testing::Combine(::testing::Values(int64_t{0}, int64_t{1}, int64_t{2}),
                                            ::testing::Bool()),
                         name);

}  // namespace
