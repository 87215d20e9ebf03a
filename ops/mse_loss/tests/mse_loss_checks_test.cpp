// aclnnMseLoss and aclnnMseLossBackward beyond their golden cases (tests/golden/mse_loss_golden.txt):
// every first-phase check with its status and exact message, the checks' order, mutual
// broadcasting, the reduced output's 0-d shape, the gradient's divisor, empty inputs. A refused
// call hands out no executor and writes nothing.
#include <aclnnop/aclnn_mse_loss.h>
#include <aclnnop/aclnn_mse_loss_backward.h>
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

// The forward's first phase refuses with status and exactly "aclnnMseLoss: <text>".
void expect_forward_refused(const aclTensor* self, const aclTensor* target, int64_t reduction, aclTensor* out,
                            aclnnStatus status, const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnMseLossGetWorkspaceSize(self, target, reduction, out, &workspace, &executor), status)
        << message();
    EXPECT_EQ(message(), "aclnnMseLoss: " + text);
    EXPECT_EQ(executor, nullptr);
}

void expect_backward_refused(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                             int64_t reduction, aclTensor* out, aclnnStatus status, const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnMseLossBackwardGetWorkspaceSize(grad, self, target, reduction, out, &workspace, &executor),
              status)
        << message();
    EXPECT_EQ(message(), "aclnnMseLossBackward: " + text);
    EXPECT_EQ(executor, nullptr);
}

aclnnStatus forward(const aclTensor* self, const aclTensor* target, int64_t reduction, const aclTensor* out) {
    return run_op(op_named("mse_loss"), {self, target, out}, {reduction});
}

aclnnStatus backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target, int64_t reduction,
                     const aclTensor* out) {
    return run_op(op_named("mse_loss_backward"), {grad, self, target, out}, {reduction});
}

using MseLossChecks = nnplug::test::RuntimeTest;

TEST_F(MseLossChecks, NullTensorsAreNullptrErrorsInSignatureOrder) {
    DeviceTensor s(filled(4, 1), {2, 2}), t(filled(4, 0), {2, 2}), out(filled(4, kSentinel), {2, 2});
    expect_forward_refused(nullptr, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_forward_refused(s, nullptr, 0, out, ACLNN_ERR_PARAM_NULLPTR, "target is null");
    expect_forward_refused(s, t, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "out is null");
    expect_backward_refused(nullptr, s, t, 0, out, ACLNN_ERR_PARAM_NULLPTR, "gradOutput is null");
    expect_backward_refused(s, s, t, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "out is null");
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnMseLossGetWorkspaceSize(s, t, 0, out, nullptr, &executor), ACLNN_ERR_PARAM_NULLPTR);
    EXPECT_EQ(aclnnMseLossBackwardGetWorkspaceSize(s, s, t, 0, out, &workspace, nullptr),
              ACLNN_ERR_PARAM_NULLPTR);
}

TEST_F(MseLossChecks, TheForwardPromotesButTheBackwardWantsSelfsDtype) {
    DeviceTensor s16(filled(4, 1), {2, 2}, ACL_FLOAT16), tb(filled(4, 0), {2, 2}, ACL_BF16);
    DeviceTensor out(filled(4, kSentinel), {2, 2}), s(filled(4, 1), {2, 2});
    EXPECT_EQ(forward(s16, tb, 0, out), ACLNN_SUCCESS) << message();  // f16 with bf16 computes in f32
    EXPECT_EQ(out.storage(), filled(4, 1.0f));
    expect_backward_refused(s, s16, s16, 0, out, ACLNN_ERR_PARAM_INVALID,
                            "gradOutput has dtype float32 but self has dtype float16; they must be equal");
    expect_backward_refused(s16, s16, tb, 0, out, ACLNN_ERR_PARAM_INVALID,
                            "target has dtype bfloat16 but self has dtype float16; they must be equal");
    // out may be any float dtype: f16 gradients into an f32 out.
    EXPECT_EQ(backward(s16, s16, s16, 0, out), ACLNN_SUCCESS) << message();
}

TEST_F(MseLossChecks, ReductionOutsideNoneMeanSumIsInvalid) {
    DeviceTensor s(filled(4, 1), {2, 2}), out(filled(1, kSentinel), {});
    expect_forward_refused(s, s, 3, out, ACLNN_ERR_PARAM_INVALID,
                           "reduction 3 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(s, s, s, -1, s, ACLNN_ERR_PARAM_INVALID,
                            "reduction -1 is not 0 (none), 1 (mean) or 2 (sum)");
}

TEST_F(MseLossChecks, InputsMustBroadcastToEachOther) {
    DeviceTensor s(filled(20, 1), {4, 5}), t(filled(15, 0), {3, 5}), out(filled(20, kSentinel), {4, 5});
    expect_forward_refused(s, t, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "target shape [3,5] cannot broadcast with self shape [4,5]");
    DeviceTensor g(filled(4, 1), {4});
    expect_backward_refused(g, s, s, 0, out, ACLNN_ERR_PARAM_INVALID,
                            "self shape [4,5] cannot broadcast with gradOutput shape [4]");
    EXPECT_EQ(out.storage(), filled(20, kSentinel));
}

TEST_F(MseLossChecks, OutputsHaveTheBroadcastShapeOrAreZeroDimensionalWhenReduced) {
    DeviceTensor s(filled(4, 3), {4, 1}), t(filled(3, 1), {1, 3});
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
    EXPECT_EQ(out.storage(), filled(12, 4.0f));
    ASSERT_EQ(forward(s, t, 1, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 4.0f));
}

TEST_F(MseLossChecks, MoreThanEightDimensionsAreInvalid) {
    const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 2, 2};
    DeviceTensor s(filled(4, 1), nine), t(filled(4, 1), {2, 2}), out(filled(4, kSentinel), nine);
    expect_forward_refused(s, t, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "self has 9 dimensions; at most 8 are supported");
}

// The forward: null, dtype, promotion, rank, reduction, shape. The backward: null, dtype,
// reduction, rank, shape. Each call below breaks two rules; the earlier one is reported.
TEST_F(MseLossChecks, EachOpReportsTheFirstFailingCheckInItsOrder) {
    DeviceTensor s(filled(20, 1), {4, 5}), bad_shape(filled(15, 0), {3, 5}),
        out(filled(20, kSentinel), {4, 5});
    const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 4, 5};
    DeviceTensor deep(filled(20, 1), nine);
    expect_forward_refused(deep, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                           "self has 9 dimensions; at most 8 are supported");
    expect_forward_refused(s, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                           "reduction 7 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(deep, s, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                            "reduction 7 is not 0 (none), 1 (mean) or 2 (sum)");
    DeviceTensor s16(filled(20, 1), {4, 5}, ACL_FLOAT16);
    expect_backward_refused(s16, s, bad_shape, 7, out, ACLNN_ERR_PARAM_INVALID,
                            "gradOutput has dtype float16 but self has dtype float32; they must be equal");
}

// aten's mse_loss_backward and CANN divide the mean's gradient by self's own element count,
// not by the broadcast shape's: self [3] against target [4,3] divides by 3.
TEST_F(MseLossChecks, TheMeanGradientDividesBySelfsOwnCount) {
    DeviceTensor g(filled(1, 1), {}), s(filled(3, 2), {3}), t(filled(12, 0.5f), {4, 3});
    DeviceTensor out(filled(12, kSentinel), {4, 3});
    ASSERT_EQ(backward(g, s, t, 1, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(12, static_cast<float>(1.5 * (2.0f / 3.0f))));
    ASSERT_EQ(backward(g, s, t, 2, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(12, 3.0f));
}

TEST_F(MseLossChecks, EmptyInputsGiveNanMeanZeroSumAndWriteNothingElse) {
    DeviceTensor s(std::vector<float>{}, {0, 3}), t(filled(3, 1), {3}), zero_d(filled(1, kSentinel), {});
    ASSERT_EQ(forward(s, t, 1, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(zero_d.storage()[0]));
    ASSERT_EQ(forward(s, t, 2, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 0.0f));
    DeviceTensor empty_out(std::vector<float>{}, {0, 3});
    uint64_t workspace = 7;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnMseLossBackwardGetWorkspaceSize(zero_d, s, t, 1, empty_out, &workspace, &executor),
              ACLNN_SUCCESS)
        << message();
    EXPECT_EQ(workspace, 0u);
    EXPECT_EQ(aclnnMseLossBackward(nullptr, 0, executor, nullptr), ACLNN_SUCCESS) << message();
}

}  // namespace
