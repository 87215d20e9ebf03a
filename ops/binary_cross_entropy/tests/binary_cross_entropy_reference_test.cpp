// Both ops against the float64 reference, float32 contiguous tensors, on the backend
// NNPLUG_BACKEND names: several shapes (sizes that are no multiple of any SIMD width,
// single elements, 0-d), weight present or absent, every reduction.
#include "binary_cross_entropy_reference.h"

#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <gtest/gtest.h>
#include <nnplug/ops/binary_cross_entropy_math.h>

#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;
using nnplug::test::element_count;

struct Inputs {
    std::vector<float> grad, self, target, weight;
};

Inputs random_inputs(int64_t count, uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> probability(0.001f, 0.999f), unit(0.0f, 1.0f), grad(-2.0f, 2.0f);
    Inputs inputs;
    for (int64_t i = 0; i < count; ++i) {
        inputs.grad.push_back(grad(generator));
        inputs.self.push_back(probability(generator));
        inputs.target.push_back(unit(generator));
        inputs.weight.push_back(unit(generator) * 2.0f);
    }
    return inputs;
}

using Case = std::tuple<std::vector<int64_t>, bool, int64_t>;  // shape, with weight, reduction

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto& [shape, weighted, reduction] = info.param;
    std::string name = "shape";
    for (int64_t dim : shape) name += "_" + std::to_string(dim);
    if (shape.empty()) name += "_scalar";
    name += weighted ? "_weight" : "_noweight";
    name += reduction == 0 ? "_none" : reduction == 1 ? "_mean" : "_sum";
    return name;
}

class BceReference : public nnplug::test::RuntimeTest, public ::testing::WithParamInterface<Case> {};

TEST_P(BceReference, BackwardMatchesFloat64Reference) {
    const auto& [shape, weighted, reduction] = GetParam();
    const int64_t count = element_count(shape);
    const Inputs in = random_inputs(count, 7);
    // With mean or sum gradOutput is the 0-d incoming gradient of the scalar loss.
    const bool scalar_grad = reduction != 0;
    const std::vector<float> grad = scalar_grad ? std::vector<float>{in.grad[0]} : in.grad;
    DeviceTensor g(grad, scalar_grad ? std::vector<int64_t>{} : shape);
    DeviceTensor s(in.self, shape), t(in.target, shape), w(in.weight, shape);
    DeviceTensor out(std::vector<float>(count, -7.0f), shape);
    ASSERT_EQ(nnplug::test::run_backward(g, s, t, weighted ? w.get() : nullptr, reduction, out),
              ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    const auto result = out.storage();
    const double scale = reduction == 1 ? 1.0 / static_cast<double>(count) : 1.0;
    for (int64_t i = 0; i < count; ++i) {
        const double expected = nnplug::reference::bce_backward(
            grad[scalar_grad ? 0 : i], weighted ? in.weight[i] : 1.0, in.self[i], in.target[i], scale);
        EXPECT_NEAR(result[i], expected, 1e-5 * std::abs(expected) + 1e-30) << "element " << i;
        // And bit for bit the canonical float32 expression.
        const float canonical =
            nnplug::bce_backward(grad[scalar_grad ? 0 : i], weighted ? in.weight[i] : 1.0f, in.self[i],
                                 in.target[i], reduction == 1 ? nnplug::bce_mean_scale(count) : 1.0f);
        EXPECT_EQ(result[i], canonical) << "element " << i;
    }
}

TEST_P(BceReference, ForwardMatchesFloat64Reference) {
    const auto& [shape, weighted, reduction] = GetParam();
    const int64_t count = element_count(shape);
    const Inputs in = random_inputs(count, 11);
    DeviceTensor s(in.self, shape), t(in.target, shape), w(in.weight, shape);
    const std::vector<int64_t> out_shape = reduction == 0 ? shape : std::vector<int64_t>{};
    DeviceTensor out(std::vector<float>(element_count(out_shape), -7.0f), out_shape);
    ASSERT_EQ(nnplug::test::run_forward(s, t, weighted ? w.get() : nullptr, reduction, out), ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    const auto result = out.storage();
    double total = 0;
    for (int64_t i = 0; i < count; ++i) {
        const double expected =
            nnplug::reference::bce_forward(weighted ? in.weight[i] : 1.0, in.self[i], in.target[i]);
        total += expected;
        if (reduction == 0) {
            EXPECT_NEAR(result[i], expected, 1e-5 * std::abs(expected) + 1e-7) << "element " << i;
        }
    }
    if (reduction != 0) {
        const double expected = reduction == 1 ? total / static_cast<double>(count) : total;
        EXPECT_NEAR(result[0], expected, 1e-6 * std::abs(expected));
    }
}

const std::vector<std::vector<int64_t>> kShapes = {{},     {1},     {7},         {2, 2},
                                                   {3, 5}, {4, 33}, {17, 19, 3}, {70001}};

INSTANTIATE_TEST_SUITE_P(Shapes, BceReference,
                         ::testing::Combine(::testing::ValuesIn(kShapes), ::testing::Bool(),
                                            ::testing::Values(int64_t{0}, int64_t{1}, int64_t{2})),
                         case_name);

}  // namespace
