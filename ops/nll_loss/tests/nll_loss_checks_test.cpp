// aclnnNLLLoss, aclnnNLLLoss2d and their backwards on the backend under test: values against
// the float64 reference (random data, every reduction, ignored rows, every target dtype,
// strided views), the data-dependent mean and total weight, empty inputs, the first-phase
// rules with their status and message, and a target outside the classes refused when the op
// runs, with nothing written.
#include <aclnnop/aclnn_nll_loss.h>
#include <aclnnop/aclnn_nll_loss2d.h>
#include <aclnnop/aclnn_nll_loss2d_backward.h>
#include <aclnnop/aclnn_nll_loss_backward.h>
#include <gtest/gtest.h>
#include <nll_loss_reference.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;
using nnplug::test::filled;
using nnplug::test::message;

constexpr float kSentinel = 1234.5f;

aclnnStatus forward(bool two_d, const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                    int64_t reduction, int64_t ignore, aclTensor* out, aclTensor* total) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = two_d ? aclnnNLLLoss2dGetWorkspaceSize(self, target, weight, reduction, ignore,
                                                                     out, total, &size, &executor)
                                    : aclnnNLLLossGetWorkspaceSize(self, target, weight, reduction, ignore,
                                                                   out, total, &size, &executor);
    return nnplug::test::run_executor(first, size, executor, two_d ? aclnnNLLLoss2d : aclnnNLLLoss);
}

aclnnStatus backward(bool two_d, const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                     const aclTensor* weight, int64_t reduction, int64_t ignore, aclTensor* total,
                     aclTensor* out) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first =
        two_d ? aclnnNLLLoss2dBackwardGetWorkspaceSize(grad, self, target, weight, reduction, ignore, total,
                                                       out, &size, &executor)
              : aclnnNLLLossBackwardGetWorkspaceSize(grad, self, target, weight, reduction, ignore, total,
                                                     out, &size, &executor);
    return nnplug::test::run_executor(first, size, executor,
                                      two_d ? aclnnNLLLoss2dBackward : aclnnNLLLossBackward);
}

// One random problem: self (outer, C[, inner...]) log-probabilities, targets with some rows
// equal to ignoreIndex, weights a 16-bit type rounds.
struct Problem {
    std::vector<int64_t> self_shape, target_shape;
    int64_t classes = 0, inner = 1, ignore = -100;
    std::vector<float> self, weight;
    std::vector<int64_t> target;
};

Problem random_problem(std::vector<int64_t> self_shape, int64_t ignore, uint32_t seed) {
    Problem p;
    p.self_shape = self_shape;
    p.classes = self_shape.size() >= 2 ? self_shape[1] : self_shape[0];
    p.target_shape = self_shape;
    p.target_shape.erase(p.target_shape.begin() + (self_shape.size() >= 2 ? 1 : 0));
    for (size_t k = 2; k < self_shape.size(); ++k) p.inner *= self_shape[k];
    p.ignore = ignore;
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> value(-4.0f, 0.0f), weight(0.1f, 2.0f);
    std::uniform_int_distribution<int64_t> cls(0, p.classes - 1);
    for (int64_t i = 0; i < nnplug::test::element_count(self_shape); ++i) p.self.push_back(value(random));
    for (int64_t c = 0; c < p.classes; ++c) p.weight.push_back(weight(random));
    for (int64_t i = 0; i < nnplug::test::element_count(p.target_shape); ++i)
        p.target.push_back(i % 5 == 3 && ignore >= 0 && ignore < p.classes ? ignore
                           : i % 7 == 6                                    ? ignore
                                                                           : cls(random));
    return p;
}

std::vector<double> widened(const std::vector<float>& values) {
    return std::vector<double>(values.begin(), values.end());
}

std::vector<float> as_floats(const std::vector<int64_t>& values) {
    return std::vector<float>(values.begin(), values.end());
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double rtol) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], rtol * std::abs(want[i]) + 1e-6) << "element " << i;
}

using NllLoss = nnplug::test::RuntimeTest;

// Every reduction and target dtype, on (N, C), (C) and the 2d form, against float64.
TEST_F(NllLoss, MatchesTheFloat64ReferenceForEveryReductionAndTargetDtype) {
    const std::vector<std::vector<int64_t>> shapes = {{37, 11}, {6}, {3, 5, 4, 7}};
    uint32_t seed = 1;
    for (const auto& shape : shapes) {
        const bool two_d = shape.size() == 4;
        for (const aclDataType target_dtype : {ACL_INT64, ACL_INT32, ACL_UINT8}) {
            for (int64_t reduction = 0; reduction <= 2; ++reduction) {
                SCOPED_TRACE(testing::Message() << "rank " << shape.size() << " target dtype " << target_dtype
                                                << " reduction " << reduction);
                const Problem p = random_problem(shape, target_dtype == ACL_UINT8 ? 2 : -100, seed++);
                DeviceTensor self(p.self, p.self_shape), weight(p.weight, {p.classes});
                DeviceTensor target(as_floats(p.target), p.target_shape, target_dtype);
                const auto expected = nnplug::reference::nll_loss(
                    widened(p.self), p.target, widened(p.weight), p.classes, p.inner, reduction, p.ignore);
                const std::vector<int64_t> out_shape =
                    reduction == 0 ? p.target_shape : std::vector<int64_t>{};
                DeviceTensor out(filled(expected.loss.size(), kSentinel), out_shape),
                    total(filled(1, kSentinel), {1});
                ASSERT_EQ(forward(two_d, self, target, weight, reduction, p.ignore, out, total),
                          ACLNN_SUCCESS)
                    << message();
                expect_near(out.storage(), expected.loss, 1e-5);
                // totalWeightOut is written only when the call reduces.
                const float written_total = total.storage()[0];
                EXPECT_NEAR(written_total, reduction == 0 ? kSentinel : expected.total_weight,
                            1e-5 * expected.total_weight);

                // The gradient, with the forward's total weight for mean.
                const std::vector<float> grad_values =
                    reduction == 0 ? std::vector<float>(p.target.size(), 0.75f) : std::vector<float>{1.5f};
                DeviceTensor grad(grad_values, out_shape),
                    given_total({static_cast<float>(expected.total_weight)}, {1});
                DeviceTensor grad_out(filled(p.self.size(), kSentinel), p.self_shape);
                ASSERT_EQ(
                    backward(two_d, grad, self, target, weight, reduction, p.ignore, given_total, grad_out),
                    ACLNN_SUCCESS)
                    << message();
                const auto expected_grad = nnplug::reference::nll_loss_backward(
                    widened(grad_values), p.target, widened(p.weight), p.classes, p.inner, reduction,
                    p.ignore, static_cast<float>(expected.total_weight));
                expect_near(grad_out.storage(), expected_grad, 1e-6);
            }
        }
    }
}

// The mean divides by the weights of the rows counted, not by the row count: a mutant that
// counts ignored rows, or leaves the weights out, gives another value.
TEST_F(NllLoss, TheMeanDividesByTheCountedRowsWeights) {
    DeviceTensor self({-1, -2, -3, -4, -5, -6}, {3, 2}), weight({2, 10}, {2});
    DeviceTensor target({0, 1, 1}, {3}, ACL_INT64), out(filled(1, kSentinel), {}),
        total(filled(1, kSentinel), {1});
    // Row 2 is ignored: (2*1 + 10*4) / (2 + 10) = 3.5; counting it would give 42/22.
    ASSERT_EQ(forward(false, self, target, weight, 1, 1, out, total), ACLNN_SUCCESS) << message();
    EXPECT_FLOAT_EQ(out.storage()[0], 0.0f + 2.0f / 2.0f) << "only class-0 rows count when 1 is ignored";
    ASSERT_EQ(forward(false, self, target, weight, 1, -100, out, total), ACLNN_SUCCESS) << message();
    EXPECT_FLOAT_EQ(out.storage()[0], (2.0f * 1 + 10.0f * 4 + 10.0f * 6) / 22.0f);
    EXPECT_FLOAT_EQ(total.storage()[0], 22.0f);
}

TEST_F(NllLoss, AllRowsIgnoredGiveANanMeanAndAZeroTotalWeight) {
    DeviceTensor self({-1, -2, -3, -4}, {2, 2}), weight({1, 1}, {2});
    DeviceTensor target({1, 1}, {2}, ACL_INT64), out(filled(1, kSentinel), {}),
        total(filled(1, kSentinel), {1});
    ASSERT_EQ(forward(false, self, target, weight, 1, 1, out, total), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(out.storage()[0]));
    EXPECT_EQ(total.storage()[0], 0.0f);
}

// No rows: the mean is NaN, the sum 0, the total weight 0; with none nothing is written.
TEST_F(NllLoss, EmptyInputsWriteTheReductionOverNoRows) {
    DeviceTensor self(std::vector<float>{}, {0, 3}), weight({1, 1, 1}, {3}),
        target(std::vector<float>{}, {0}, ACL_INT64);
    DeviceTensor out(filled(1, kSentinel), {}), total(filled(1, kSentinel), {1});
    ASSERT_EQ(forward(false, self, target, weight, 1, -100, out, total), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(out.storage()[0]));
    EXPECT_EQ(total.storage()[0], 0.0f);
    ASSERT_EQ(forward(false, self, target, weight, 2, -100, out, total), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage()[0], 0.0f);
    DeviceTensor none_out(std::vector<float>{}, {0}), untouched(filled(1, kSentinel), {1});
    ASSERT_EQ(forward(false, self, target, weight, 0, -100, none_out, untouched), ACLNN_SUCCESS) << message();
    EXPECT_EQ(untouched.storage()[0], kSentinel);
}

// A class index outside [0, C) that is not ignoreIndex is refused when the op runs, naming
// the element and its value; nothing is written, and nothing outside weight is read.
TEST_F(NllLoss, ATargetOutsideTheClassesIsRefusedWithNothingWritten) {
    DeviceTensor self(filled(8, -1), {4, 2}), weight({1, 1}, {2});
    DeviceTensor out(filled(4, kSentinel), {4}), total(filled(1, kSentinel), {1});
    for (const float bad : {2.0f, -1.0f, 1000000.0f}) {
        DeviceTensor target({0, 1, bad, 0}, {4}, ACL_INT64);
        // At the call (cpu_tbb), or at the stream's synchronize (atlas_emu).
        EXPECT_NE(forward(false, self, target, weight, 0, -100, out, total), ACLNN_SUCCESS);
        EXPECT_NE(message().find("target element 2 is " + std::to_string(static_cast<int64_t>(bad)) +
                                 ", not a class index in [0, 2) nor ignoreIndex -100"),
                  std::string::npos)
            << message();
        EXPECT_EQ(out.storage(), filled(4, kSentinel));
        DeviceTensor grad(filled(4, 1), {4}), grad_out(filled(8, kSentinel), {4, 2});
        EXPECT_NE(backward(false, grad, self, target, weight, 0, -100, total, grad_out), ACLNN_SUCCESS);
        EXPECT_EQ(grad_out.storage(), filled(8, kSentinel));
    }
    // The same value as ignoreIndex is no error.
    DeviceTensor ignored({0, 1, -1, 0}, {4}, ACL_INT64);
    EXPECT_EQ(forward(false, self, ignored, weight, 0, -1, out, total), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), std::vector<float>({1, 1, 0, 1}));
}

// A reduced loss over several chunks of rows (checked while they are summed): the lowest bad
// row is named, whichever chunk a thread reaches first, and neither output is written.
TEST_F(NllLoss, TheLowestBadTargetOfAReducedLossIsRefusedWithNothingWritten) {
    const int64_t rows = 600;
    DeviceTensor self(filled(rows * 3, -1), {rows, 3}), weight({1, 1, 1}, {3});
    std::vector<float> targets(rows, 1.0f);
    targets[550] = 9;
    targets[300] = -7;
    DeviceTensor target(targets, {rows}, ACL_INT64);
    for (const int64_t reduction : {1, 2}) {
        DeviceTensor out(filled(1, kSentinel), {}), total(filled(1, kSentinel), {1});
        EXPECT_NE(forward(false, self, target, weight, reduction, -100, out, total), ACLNN_SUCCESS);
        EXPECT_NE(message().find("target element 300 is -7, not a class index in [0, 3)"), std::string::npos)
            << message();
        EXPECT_EQ(out.storage(), filled(1, kSentinel));
        EXPECT_EQ(total.storage(), filled(1, kSentinel));
    }
}

// Views: a transposed self and a strided target give the contiguous call's values.
TEST_F(NllLoss, StridedViewsGiveTheContiguousValues) {
    const Problem p = random_problem({5, 4}, -100, 99);
    std::vector<float> transposed(20);
    for (size_t n = 0; n < 5; ++n)
        for (size_t c = 0; c < 4; ++c) transposed[c * 5 + n] = p.self[n * 4 + c];
    DeviceTensor self_t(transposed, {4, 5}, {5, 4}, {1, 5}, 0, ACL_FLOAT);
    std::vector<float> spread(10, 0);
    for (size_t n = 0; n < 5; ++n) spread[2 * n] = static_cast<float>(p.target[n]);
    DeviceTensor target_s(spread, {10}, {5}, {2}, 0, ACL_INT64), weight(p.weight, {4});
    DeviceTensor out(filled(5, kSentinel), {5}), total(filled(1, kSentinel), {1});
    ASSERT_EQ(forward(false, self_t, target_s, weight, 0, -100, out, total), ACLNN_SUCCESS) << message();
    const auto expected =
        nnplug::reference::nll_loss(widened(p.self), p.target, widened(p.weight), 4, 1, 0, -100);
    expect_near(out.storage(), expected.loss, 1e-6);
}

void expect_refused(aclnnStatus status, aclnnStatus expected, const std::string& text) {
    EXPECT_EQ(status, expected) << message();
    EXPECT_EQ(message(), text);
}

TEST_F(NllLoss, TheFirstPhaseRefusesWhatCannDoesWithItsCodes) {
    DeviceTensor self(filled(6, -1), {3, 2}), weight({1, 1}, {2}), target({0, 1, 0}, {3}, ACL_INT64);
    DeviceTensor out(filled(3, kSentinel), {3}), total(filled(1, kSentinel), {1});
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const std::string api = "aclnnNLLLoss: ";
    expect_refused(aclnnNLLLossGetWorkspaceSize(self, target, nullptr, 0, -100, out, total, &size, &executor),
                   ACLNN_ERR_PARAM_NULLPTR, api + "weight is null");
    expect_refused(
        aclnnNLLLossGetWorkspaceSize(self, target, weight, 0, -100, out, nullptr, &size, &executor),
        ACLNN_ERR_PARAM_NULLPTR, api + "totalWeightOut is null");
    DeviceTensor float_target({0, 1, 0}, {3});
    expect_refused(
        aclnnNLLLossGetWorkspaceSize(self, float_target, weight, 0, -100, out, total, &size, &executor),
        ACLNN_ERR_PARAM_INVALID, api + "target has dtype float32; expected int32, int64 or uint8");
    DeviceTensor weight16({1, 1}, {2}, ACL_FLOAT16);
    expect_refused(
        aclnnNLLLossGetWorkspaceSize(self, target, weight16, 0, -100, out, total, &size, &executor),
        ACLNN_ERR_PARAM_INVALID,
        api + "weight has dtype float16 but self has dtype float32; they must be equal");
    expect_refused(aclnnNLLLossGetWorkspaceSize(self, target, weight, 3, -100, out, total, &size, &executor),
                   ACLNN_ERR_PARAM_INVALID, api + "reduction 3 is not 0 (none), 1 (mean) or 2 (sum)");
    DeviceTensor self3(filled(12, -1), {3, 2, 2});
    expect_refused(aclnnNLLLossGetWorkspaceSize(self3, target, weight, 0, -100, out, total, &size, &executor),
                   ACLNN_ERR_PARAM_INVALID, api + "self has 3 dimensions; it must have 1 or 2");
    DeviceTensor target4({0, 1, 0, 1}, {4}, ACL_INT64);
    expect_refused(aclnnNLLLossGetWorkspaceSize(self, target4, weight, 0, -100, out, total, &size, &executor),
                   ACLNN_ERR_PARAM_INVALID,
                   api + "target shape [4] must be self's shape without the class axis, [3]");
    DeviceTensor weight3({1, 1, 1}, {3});
    expect_refused(aclnnNLLLossGetWorkspaceSize(self, target, weight3, 0, -100, out, total, &size, &executor),
                   ACLNN_ERR_PARAM_INVALID, api + "weight shape [3] must be one element per class: [2]");
    DeviceTensor out2(filled(2, kSentinel), {2});
    expect_refused(aclnnNLLLossGetWorkspaceSize(self, target, weight, 1, -100, out2, total, &size, &executor),
                   ACLNN_ERR_PARAM_INVALID, api + "out shape [2] must be [] or [1] for a reduced loss");
    DeviceTensor total2(filled(2, kSentinel), {2});
    expect_refused(
        aclnnNLLLossGetWorkspaceSize(self, target, weight, 1, -100, total, total2, &size, &executor),
        ACLNN_ERR_PARAM_INVALID, api + "totalWeightOut shape [2] must be [] or [1]");
    // The 2d form wants self (N, C, H, W) and target (N, H, W).
    expect_refused(
        aclnnNLLLoss2dGetWorkspaceSize(self, target, weight, 0, -100, out, total, &size, &executor),
        ACLNN_ERR_PARAM_INVALID, "aclnnNLLLoss2d: self has 2 dimensions; it must have 4");
    EXPECT_EQ(executor, nullptr);
}

// Each API checks dtypes in an order of its own; with two wrong dtypes the one it checks first
// is named. A planner that checks every operand's set in slot order names target or self.
TEST_F(NllLoss, TwoWrongDtypesAreReportedInEachApisOrder) {
    DeviceTensor self(filled(6, -1), {3, 2}), self_int(filled(6, -1), {3, 2}, ACL_INT32);
    DeviceTensor float_target({0, 1, 0}, {3}), weight16({1, 1}, {2}, ACL_FLOAT16);
    DeviceTensor out(filled(3, kSentinel), {3}), out_int(filled(3, 0), {3}, ACL_INT32);
    DeviceTensor total(filled(1, kSentinel), {1});
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    // NLLLoss: weight's equality and the outputs' casts come before self's and target's sets.
    expect_refused(
        aclnnNLLLossGetWorkspaceSize(self_int, float_target, weight16, 0, -100, out, total, &size, &executor),
        ACLNN_ERR_PARAM_INVALID,
        "aclnnNLLLoss: weight has dtype float16 but self has dtype int32; they must be equal");
    DeviceTensor weight({1, 1}, {2});
    expect_refused(
        aclnnNLLLossGetWorkspaceSize(self, float_target, weight, 0, -100, out_int, total, &size, &executor),
        ACLNN_ERR_PARAM_INVALID, "aclnnNLLLoss: self's dtype float32 cannot be cast to out's int32");
    // NLLLoss2d: self's set first, then weight's equality, before target's set.
    DeviceTensor self4(filled(12, -1), {1, 2, 2, 3}), target3({0, 1, 0, 1, 0, 1}, {1, 2, 3});
    DeviceTensor out3(filled(6, kSentinel), {1, 2, 3});
    expect_refused(
        aclnnNLLLoss2dGetWorkspaceSize(self4, target3, weight16, 0, -100, out3, total, &size, &executor),
        ACLNN_ERR_PARAM_INVALID,
        "aclnnNLLLoss2d: weight has dtype float16 but self has dtype float32; they must be equal");
    // NLLLossBackward: weight's equality before gradOutput's, though gradOutput comes first.
    DeviceTensor grad16(filled(3, 1), {3}, ACL_FLOAT16), grad_out(filled(6, kSentinel), {3, 2});
    expect_refused(aclnnNLLLossBackwardGetWorkspaceSize(grad16, self, float_target, weight16, 0, -100, total,
                                                        grad_out, &size, &executor),
                   ACLNN_ERR_PARAM_INVALID,
                   "aclnnNLLLossBackward: weight has dtype float16 but self has dtype float32; they must be "
                   "equal");
    // NLLLoss2dBackward: gradOutput's equality before target's set.
    DeviceTensor grad3(filled(6, 1), {1, 2, 3}, ACL_FLOAT16), grad_out4(filled(12, kSentinel), {1, 2, 2, 3});
    expect_refused(
        aclnnNLLLoss2dBackwardGetWorkspaceSize(grad3, self4, target3, weight, 0, -100, total, grad_out4,
                                               &size, &executor),
        ACLNN_ERR_PARAM_INVALID,
        "aclnnNLLLoss2dBackward: gradOutput has dtype float16 but self has dtype float32; they must "
        "be equal");
    EXPECT_EQ(executor, nullptr);
}

}  // namespace
