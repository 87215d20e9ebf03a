// aclnnL1Loss and aclnnL1LossBackward beyond their golden cases (tests/golden/l1_loss_golden.txt):
// every first-phase check with its status and exact message, the checks' order, mutual
// broadcasting, the reduced output's 0-d shape, the gradient's divisor and its 0 where self
// equals target, empty inputs. A refused call hands out no executor and writes nothing.
#include <aclnnop/aclnn_l1_loss.h>
#include <aclnnop/aclnn_l1_loss_backward.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
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

// The forward's first phase refuses with status and exactly "aclnnL1Loss: <text>".
void expect_forward_refused(const aclTensor* self, const aclTensor* target, int64_t reduction, aclTensor* out,
                            aclnnStatus status, const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnL1LossGetWorkspaceSize(self, target, reduction, out, &workspace, &executor), status)
        << message();
    EXPECT_EQ(message(), "aclnnL1Loss: " + text);
    EXPECT_EQ(executor, nullptr);
}

void expect_backward_refused(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                             int64_t reduction, aclTensor* out, aclnnStatus status, const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnL1LossBackwardGetWorkspaceSize(grad, self, target, reduction, out, &workspace, &executor),
              status)
        << message();
    EXPECT_EQ(message(), "aclnnL1LossBackward: " + text);
    EXPECT_EQ(executor, nullptr);
}

aclnnStatus forward(const aclTensor* self, const aclTensor* target, int64_t reduction, const aclTensor* out) {
    return run_op(op_named("l1_loss"), {self, target, out}, {reduction});
}

aclnnStatus backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target, int64_t reduction,
                     const aclTensor* out) {
    return run_op(op_named("l1_loss_backward"), {grad, self, target, out}, {reduction});
}

using L1LossChecks = nnplug::test::RuntimeTest;

TEST_F(L1LossChecks, NullTensorsAreNullptrErrorsInSignatureOrder) {
    DeviceTensor s(filled(4, 1), {2, 2}), t(filled(4, 0), {2, 2}), out(filled(4, kSentinel), {2, 2});
    expect_forward_refused(nullptr, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_forward_refused(s, nullptr, 0, out, ACLNN_ERR_PARAM_NULLPTR, "target is null");
    expect_forward_refused(s, t, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "out is null");
    expect_backward_refused(nullptr, s, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "gradOutput is null");
    expect_backward_refused(s, nullptr, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_backward_refused(s, s, t, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "gradInput is null");
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnL1LossGetWorkspaceSize(s, t, 0, out, nullptr, &executor), ACLNN_ERR_PARAM_NULLPTR);
    EXPECT_EQ(aclnnL1LossBackwardGetWorkspaceSize(s, s, t, 0, out, &workspace, nullptr),
              ACLNN_ERR_PARAM_NULLPTR);
}

// Both ops promote their inputs (CANN's op_api promotes all three of the gradient's).
TEST_F(L1LossChecks, BothOpsPromoteTheirInputs) {
    DeviceTensor s16(filled(4, 1), {2, 2}, ACL_FLOAT16), tb(filled(4, 0), {2, 2}, ACL_BF16);
    DeviceTensor out(filled(4, kSentinel), {2, 2}), s(filled(4, 3), {2, 2});
    EXPECT_EQ(forward(s16, tb, 0, out), ACLNN_SUCCESS) << message();  // f16 with bf16 computes in f32
    EXPECT_EQ(out.storage(), filled(4, 1.0f));
    EXPECT_EQ(backward(tb, s, s16, 2, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(4, 0.0f));  // gradOutput 0
    EXPECT_EQ(backward(s16, s, tb, 2, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(4, 1.0f));
    DeviceTensor i32(filled(4, 1), {2, 2}, ACL_INT32), out16(filled(4, kSentinel), {2, 2}, ACL_FLOAT16);
    expect_forward_refused(s, i32, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "target has dtype int32; expected float32, float16 or bfloat16");
    expect_backward_refused(s, s, s, 0, i32, ACLNN_ERR_PARAM_INVALID,
                            "gradInput has dtype int32; expected float32, float16 or bfloat16");
    // out may be any float dtype: float32 losses into a float16 out.
    EXPECT_EQ(forward(s, s16, 0, out16), ACLNN_SUCCESS) << message();
}

TEST_F(L1LossChecks, ReductionOutsideNoneMeanSumIsInvalid) {
    DeviceTensor s(filled(4, 1), {2, 2}), out(filled(1, kSentinel), {});
    expect_forward_refused(s, s, 3, out, ACLNN_ERR_PARAM_INVALID,
                           "reduction 3 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(s, s, s, -1, s, ACLNN_ERR_PARAM_INVALID,
                            "reduction -1 is not 0 (none), 1 (mean) or 2 (sum)");
}

TEST_F(L1LossChecks, InputsMustBroadcastToEachOther) {
    DeviceTensor s(filled(20, 1), {4, 5}), t(filled(15, 0), {3, 5}), out(filled(20, kSentinel), {4, 5});
    expect_forward_refused(s, t, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "target shape [3,5] cannot broadcast with self shape [4,5]");
    DeviceTensor g(filled(4, 1), {4});
    expect_backward_refused(g, s, s, 0, out, ACLNN_ERR_PARAM_INVALID,
                            "self shape [4,5] cannot broadcast with gradOutput shape [4]");
    EXPECT_EQ(out.storage(), filled(20, kSentinel));
}

TEST_F(L1LossChecks, OutputsHaveTheBroadcastShapeOrAreZeroDimensionalWhenReduced) {
    DeviceTensor s(filled(4, 3), {4, 1}), t(filled(3, 1), {1, 3});
    DeviceTensor wrong(filled(4, kSentinel), {4, 1}), one(filled(1, kSentinel), {1}),
        zero_d(filled(1, kSentinel), {});
    expect_forward_refused(s, t, 0, wrong, ACLNN_ERR_PARAM_INVALID,
                           "out shape [4,1] must be the broadcast shape [4,3]");
    expect_forward_refused(s, t, 1, one, ACLNN_ERR_PARAM_INVALID,
                           "out shape [1] must be [] (0-d) for a reduced loss");
    // The gradient's gradInput is the broadcast shape whatever the reduction.
    expect_backward_refused(zero_d, s, t, 1, zero_d, ACLNN_ERR_PARAM_INVALID,
                            "gradInput shape [] must be the broadcast shape [4,3]");
    DeviceTensor out(filled(12, kSentinel), {4, 3});
    ASSERT_EQ(forward(s, t, 0, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(12, 2.0f));
    ASSERT_EQ(forward(s, t, 1, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 2.0f));
}

TEST_F(L1LossChecks, MoreThanEightDimensionsAreInvalid) {
    const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 2, 2};
    DeviceTensor s(filled(4, 1), nine), t(filled(4, 1), {2, 2}), out(filled(4, kSentinel), nine);
    expect_forward_refused(s, t, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "self has 9 dimensions; at most 8 are supported");
    expect_backward_refused(s, s, t, 0, out, ACLNN_ERR_PARAM_INVALID,
                            "gradOutput has 9 dimensions; at most 8 are supported");
}

// Both ops, in CANN's op_api order: null, reduction, dtype and promotion, rank, shape. Each
// call below breaks two rules; the earlier one is reported.
TEST_F(L1LossChecks, EachOpReportsTheFirstFailingCheckInItsOrder) {
    DeviceTensor s(filled(20, 1), {4, 5}), bad_shape(filled(15, 0), {3, 5}),
        out(filled(20, kSentinel), {4, 5});
    const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 4, 5};
    DeviceTensor deep(filled(20, 1), nine), i32(filled(20, 1), {4, 5}, ACL_INT32);
    expect_forward_refused(deep, i32, 7, out, ACLNN_ERR_PARAM_INVALID,
                           "reduction 7 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_forward_refused(deep, i32, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "target has dtype int32; expected float32, float16 or bfloat16");
    expect_forward_refused(deep, bad_shape, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "self has 9 dimensions; at most 8 are supported");
    expect_backward_refused(deep, i32, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                            "reduction 7 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(deep, i32, bad_shape, 1, out, ACLNN_ERR_PARAM_INVALID,
                            "self has dtype int32; expected float32, float16 or bfloat16");
    expect_backward_refused(deep, s, bad_shape, 1, out, ACLNN_ERR_PARAM_INVALID,
                            "gradOutput has 9 dimensions; at most 8 are supported");
}

// The gradient is 0 where self equals target (sign 0, as CANN's L1LossGrad and PyTorch's sgn
// give), -gradOutput below, gradOutput above; the mean divides by the broadcast count: self
// [3] against target [4,3] divides by 12.
TEST_F(L1LossChecks, TheGradientIsZeroAtEqualValuesAndTheMeanDividesByTheBroadcastCount) {
    DeviceTensor g(filled(1, 1.5f), {}), s(std::vector<float>{-1, 0.5f, 2}, {3}), t(filled(12, 0.5f), {4, 3});
    DeviceTensor out(filled(12, kSentinel), {4, 3});
    ASSERT_EQ(backward(g, s, t, 2, out), ACLNN_SUCCESS) << message();
    std::vector<float> sum;
    for (int row = 0; row < 4; ++row) sum.insert(sum.end(), {-1.5f, 0.0f, 1.5f});
    EXPECT_EQ(out.storage(), sum);
    ASSERT_EQ(backward(g, s, t, 1, out), ACLNN_SUCCESS) << message();
    const float mean = 1.5f * static_cast<float>(1.0 / 12.0);
    std::vector<float> expected;
    for (int row = 0; row < 4; ++row) expected.insert(expected.end(), {-mean, 0.0f, mean});
    EXPECT_EQ(out.storage(), expected);
}

TEST_F(L1LossChecks, EmptyInputsGiveNanMeanZeroSumAndWriteNothingElse) {
    DeviceTensor s(std::vector<float>{}, {0, 3}), t(filled(3, 1), {3}), zero_d(filled(1, kSentinel), {});
    ASSERT_EQ(forward(s, t, 1, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(zero_d.storage()[0]));
    ASSERT_EQ(forward(s, t, 2, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 0.0f));
    DeviceTensor empty_out(std::vector<float>{}, {0, 3});
    uint64_t workspace = 7;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnL1LossBackwardGetWorkspaceSize(zero_d, s, t, 1, empty_out, &workspace, &executor),
              ACLNN_SUCCESS)
        << message();
    EXPECT_EQ(workspace, 0u);
    EXPECT_EQ(aclnnL1LossBackward(nullptr, 0, executor, nullptr), ACLNN_SUCCESS) << message();
}

}  // namespace
