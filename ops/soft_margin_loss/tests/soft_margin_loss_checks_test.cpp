// aclnnSoftMarginLoss and aclnnSoftMarginLossBackward beyond their golden cases
// (tests/golden/soft_margin_loss_golden.txt): every first-phase check with its status and exact
// message, the checks' order, promotion in both ops, mutual broadcasting, the reduced output's
// 0-d shape, the gradient's divisor, large margins, empty inputs. A refused call hands out no
// executor and writes nothing.
#include <aclnnop/aclnn_soft_margin_loss.h>
#include <aclnnop/aclnn_soft_margin_loss_backward.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "acl_test_support.h"
#include "op_catalog.h"

namespace {

using nnplug::conformance::op_named;
using nnplug::conformance::run_op;
using nnplug::test::DeviceTensor;

constexpr float kSentinel = 1234.5f;

std::string message() {
    return aclGetRecentErrMsg();
}

std::vector<float> filled(size_t count, float value) {
    return std::vector<float>(count, value);
}

// The forward's first phase refuses with status and exactly "aclnnSoftMarginLoss: <text>".
void expect_forward_refused(const aclTensor* self, const aclTensor* target, int64_t reduction, aclTensor* out,
                            aclnnStatus status, const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnSoftMarginLossGetWorkspaceSize(self, target, reduction, out, &workspace, &executor),
              status)
        << message();
    EXPECT_EQ(message(), "aclnnSoftMarginLoss: " + text);
    EXPECT_EQ(executor, nullptr);
}

void expect_backward_refused(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                             int64_t reduction, aclTensor* out, aclnnStatus status, const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnSoftMarginLossBackwardGetWorkspaceSize(grad, self, target, reduction, out, &workspace,
                                                          &executor),
              status)
        << message();
    EXPECT_EQ(message(), "aclnnSoftMarginLossBackward: " + text);
    EXPECT_EQ(executor, nullptr);
}

aclnnStatus forward(const aclTensor* self, const aclTensor* target, int64_t reduction, const aclTensor* out) {
    return run_op(op_named("soft_margin_loss"), {self, target, out}, {reduction});
}

aclnnStatus backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target, int64_t reduction,
                     const aclTensor* out) {
    return run_op(op_named("soft_margin_loss_backward"), {grad, self, target, out}, {reduction});
}

using SoftMarginLossChecks = nnplug::test::RuntimeTest;

TEST_F(SoftMarginLossChecks, NullTensorsAreNullptrErrorsInSignatureOrder) {
    DeviceTensor s(filled(4, 1), {2, 2}), t(filled(4, 1), {2, 2}), out(filled(4, kSentinel), {2, 2});
    expect_forward_refused(nullptr, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_forward_refused(s, nullptr, 0, out, ACLNN_ERR_PARAM_NULLPTR, "target is null");
    expect_forward_refused(s, t, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "out is null");
    expect_backward_refused(nullptr, s, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "gradOutput is null");
    expect_backward_refused(s, nullptr, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_backward_refused(s, s, t, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "out is null");
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnSoftMarginLossGetWorkspaceSize(s, t, 0, out, nullptr, &executor), ACLNN_ERR_PARAM_NULLPTR);
    EXPECT_EQ(aclnnSoftMarginLossBackwardGetWorkspaceSize(s, s, t, 0, out, &workspace, nullptr),
              ACLNN_ERR_PARAM_NULLPTR);
}

TEST_F(SoftMarginLossChecks, DtypesOutsideTheFloatTypesAreInvalid) {
    DeviceTensor s(filled(4, 1), {2, 2}), i32(filled(4, 1), {2, 2}, ACL_INT32),
        out(filled(4, kSentinel), {2, 2});
    expect_forward_refused(i32, s, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "self has dtype int32; expected float32, float16 or bfloat16");
    expect_backward_refused(s, s, s, 0, i32, ACLNN_ERR_PARAM_INVALID,
                            "out has dtype int32; expected float32, float16 or bfloat16");
}

// Both ops promote their inputs, as CANN's op_api does: float16 with bfloat16 computes in
// float32, and any float out takes the result.
TEST_F(SoftMarginLossChecks, BothOpsPromoteTheirInputs) {
    DeviceTensor s16(filled(4, 0), {2, 2}, ACL_FLOAT16), tb(filled(4, 1), {2, 2}, ACL_BF16);
    DeviceTensor g(filled(4, 1), {2, 2}), out(filled(4, kSentinel), {2, 2});
    ASSERT_EQ(forward(s16, tb, 0, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(4, std::log1p(1.0f)));
    ASSERT_EQ(backward(g, s16, tb, 0, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(4, -0.5f));
}

TEST_F(SoftMarginLossChecks, ReductionOutsideNoneMeanSumIsInvalid) {
    DeviceTensor s(filled(4, 1), {2, 2}), out(filled(1, kSentinel), {});
    expect_forward_refused(s, s, 3, out, ACLNN_ERR_PARAM_INVALID,
                           "reduction 3 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(s, s, s, -1, s, ACLNN_ERR_PARAM_INVALID,
                            "reduction -1 is not 0 (none), 1 (mean) or 2 (sum)");
}

TEST_F(SoftMarginLossChecks, InputsMustBroadcastToEachOther) {
    DeviceTensor s(filled(20, 1), {4, 5}), t(filled(15, 1), {3, 5}), out(filled(20, kSentinel), {4, 5});
    expect_forward_refused(s, t, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "target shape [3,5] cannot broadcast with self shape [4,5]");
    DeviceTensor g(filled(4, 1), {4});
    expect_backward_refused(g, s, s, 0, out, ACLNN_ERR_PARAM_INVALID,
                            "self shape [4,5] cannot broadcast with gradOutput shape [4]");
    EXPECT_EQ(out.storage(), filled(20, kSentinel));
}

TEST_F(SoftMarginLossChecks, OutputsHaveTheBroadcastShapeOrAreZeroDimensionalWhenReduced) {
    DeviceTensor s(filled(4, 0), {4, 1}), t(filled(3, 1), {1, 3});
    DeviceTensor wrong(filled(4, kSentinel), {4, 1}), one(filled(1, kSentinel), {1}),
        zero_d(filled(1, kSentinel), {});
    expect_forward_refused(s, t, 0, wrong, ACLNN_ERR_PARAM_INVALID,
                           "out shape [4,1] must be the broadcast shape [4,3]");
    expect_forward_refused(s, t, 1, one, ACLNN_ERR_PARAM_INVALID,
                           "out shape [1] must be [] (0-d) for a reduced loss");
    // The gradient's out is the broadcast shape whatever the reduction.
    expect_backward_refused(zero_d, s, t, 1, zero_d, ACLNN_ERR_PARAM_INVALID,
                            "out shape [] must be the broadcast shape [4,3]");
    DeviceTensor out(filled(12, kSentinel), {4, 3});
    ASSERT_EQ(forward(s, t, 0, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(12, std::log1p(1.0f)));
    ASSERT_EQ(forward(s, t, 2, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_NEAR(zero_d.storage()[0], 12 * std::log1p(1.0), 1e-5);
}

TEST_F(SoftMarginLossChecks, MoreThanEightDimensionsAreInvalid) {
    const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 2, 2};
    DeviceTensor s(filled(4, 1), nine), t(filled(4, 1), {2, 2}), out(filled(4, kSentinel), nine);
    expect_forward_refused(s, t, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "self has 9 dimensions; at most 8 are supported");
    expect_backward_refused(t, t, s, 0, out, ACLNN_ERR_PARAM_INVALID,
                            "target has 9 dimensions; at most 8 are supported");
}

// Both ops: null, dtype, rank, reduction, shape. Each call below breaks two rules; the earlier
// one is reported.
TEST_F(SoftMarginLossChecks, EachOpReportsTheFirstFailingCheckInItsOrder) {
    DeviceTensor s(filled(20, 1), {4, 5}), bad_shape(filled(15, 1), {3, 5}),
        out(filled(20, kSentinel), {4, 5});
    const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 4, 5};
    DeviceTensor deep(filled(20, 1), nine), i32(filled(20, 1), {4, 5}, ACL_INT32);
    expect_forward_refused(i32, deep, 7, out, ACLNN_ERR_PARAM_INVALID,
                           "self has dtype int32; expected float32, float16 or bfloat16");
    expect_forward_refused(deep, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                           "self has 9 dimensions; at most 8 are supported");
    expect_forward_refused(s, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                           "reduction 7 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(deep, s, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                            "gradOutput has 9 dimensions; at most 8 are supported");
    expect_backward_refused(s, s, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                            "reduction 7 is not 0 (none), 1 (mean) or 2 (sum)");
}

// CANN's kernel divides the mean's gradient by the broadcast element count: self [3] against
// target [4,3] divides by 12 (aten's soft_margin_loss_backward would divide by 3).
TEST_F(SoftMarginLossChecks, TheMeanGradientDividesByTheBroadcastCount) {
    DeviceTensor g(filled(1, 1), {}), s(filled(3, 0), {3}), t(filled(12, 1), {4, 3});
    DeviceTensor out(filled(12, kSentinel), {4, 3});
    ASSERT_EQ(backward(g, s, t, 1, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(12, -0.5f / 12.0f));
    ASSERT_EQ(backward(g, s, t, 2, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(12, -0.5f));
}

// log1p keeps the loss's digits where 1 + exp(-y x) rounds to 1; beyond ln(FLT_MAX) the loss
// overflows to +inf and the gradient is NaN (inf / inf), as in PyTorch.
TEST_F(SoftMarginLossChecks, LargeMarginsKeepTheirDigitsAndOverflowLikePytorch) {
    DeviceTensor s(std::vector<float>{20.0f, -20.0f, 100.0f, 30.0f}, {4}),
        t(std::vector<float>{1.0f, -1.0f, -1.0f, 1.0f}, {4}), g(filled(1, 1), {});
    DeviceTensor out(filled(4, kSentinel), {4});
    ASSERT_EQ(forward(s, t, 0, out), ACLNN_SUCCESS) << message();
    const std::vector<float> loss = out.storage();
    EXPECT_NEAR(loss[0], std::exp(-20.0), 1e-5 * std::exp(-20.0));
    EXPECT_NEAR(loss[1], std::exp(-20.0), 1e-5 * std::exp(-20.0));
    EXPECT_EQ(loss[2], INFINITY);
    EXPECT_NEAR(loss[3], std::exp(-30.0), 1e-5 * std::exp(-30.0));
    ASSERT_EQ(backward(g, s, t, 0, out), ACLNN_SUCCESS) << message();
    const std::vector<float> grad = out.storage();
    EXPECT_NEAR(grad[0], -std::exp(-20.0), 1e-5 * std::exp(-20.0));
    EXPECT_NEAR(grad[1], std::exp(-20.0), 1e-5 * std::exp(-20.0));
    EXPECT_TRUE(std::isnan(grad[2]));
}

TEST_F(SoftMarginLossChecks, EmptyInputsGiveNanMeanZeroSumAndWriteNothingElse) {
    DeviceTensor s(std::vector<float>{}, {0, 3}), t(filled(3, 1), {3}), zero_d(filled(1, kSentinel), {});
    ASSERT_EQ(forward(s, t, 1, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(zero_d.storage()[0]));
    ASSERT_EQ(forward(s, t, 2, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 0.0f));
    DeviceTensor empty_out(std::vector<float>{}, {0, 3});
    uint64_t workspace = 7;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnSoftMarginLossBackwardGetWorkspaceSize(zero_d, s, t, 1, empty_out, &workspace, &executor),
              ACLNN_SUCCESS)
        << message();
    EXPECT_EQ(workspace, 0u);
    EXPECT_EQ(aclnnSoftMarginLossBackward(nullptr, 0, executor, nullptr), ACLNN_SUCCESS) << message();
}

}  // namespace
