// aclnnSmoothL1Loss and aclnnSmoothL1LossBackward beyond their golden cases
// (tests/golden/smooth_l1_loss_golden.txt): every first-phase check with its status and exact
// message, the checks' order, beta's range and its edge 0, the branch at |self - target| ==
// beta, the reduced output's shapes, the gradient's divisor, empty inputs. A refused call hands
// out no executor and writes nothing.
#include <aclnnop/aclnn_smooth_l1_loss.h>
#include <aclnnop/aclnn_smooth_l1_loss_backward.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;

constexpr float kSentinel = 1234.5f;

std::string message() {
    return aclGetRecentErrMsg();
}

std::vector<float> filled(size_t count, float value) {
    return std::vector<float>(count, value);
}

void expect_forward_refused(const aclTensor* self, const aclTensor* target, int64_t reduction, float beta,
                            aclTensor* out, aclnnStatus status, const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnSmoothL1LossGetWorkspaceSize(self, target, reduction, beta, out, &workspace, &executor),
              status)
        << message();
    EXPECT_EQ(message(), "aclnnSmoothL1Loss: " + text);
    EXPECT_EQ(executor, nullptr);
}

void expect_backward_refused(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                             int64_t reduction, float beta, aclTensor* out, aclnnStatus status,
                             const std::string& text) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnSmoothL1LossBackwardGetWorkspaceSize(grad, self, target, reduction, beta, out, &workspace,
                                                        &executor),
              status)
        << message();
    EXPECT_EQ(message(), "aclnnSmoothL1LossBackward: " + text);
    EXPECT_EQ(executor, nullptr);
}

// Both phases on the default stream, then a synchronize.
aclnnStatus forward(const aclTensor* self, const aclTensor* target, int64_t reduction, float beta,
                    aclTensor* out) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status =
        aclnnSmoothL1LossGetWorkspaceSize(self, target, reduction, beta, out, &workspace_size, &executor);
    if (status != ACLNN_SUCCESS) return status;
    void* workspace = nullptr;
    if (workspace_size > 0 &&
        aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return ACLNN_ERR_INNER;
    status = aclnnSmoothL1Loss(workspace, workspace_size, executor, nullptr);
    if (status == ACLNN_SUCCESS) status = aclrtSynchronizeStream(nullptr);
    if (workspace != nullptr) aclrtFree(workspace);
    return status;
}

aclnnStatus backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target, int64_t reduction,
                     float beta, aclTensor* out) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status = aclnnSmoothL1LossBackwardGetWorkspaceSize(grad, self, target, reduction, beta, out,
                                                                   &workspace_size, &executor);
    if (status != ACLNN_SUCCESS) return status;
    void* workspace = nullptr;
    if (workspace_size > 0 &&
        aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return ACLNN_ERR_INNER;
    status = aclnnSmoothL1LossBackward(workspace, workspace_size, executor, nullptr);
    if (status == ACLNN_SUCCESS) status = aclrtSynchronizeStream(nullptr);
    if (workspace != nullptr) aclrtFree(workspace);
    return status;
}

using SmoothL1LossChecks = nnplug::test::RuntimeTest;

TEST_F(SmoothL1LossChecks, NullTensorsAreNullptrErrorsInSignatureOrder) {
    DeviceTensor s(filled(4, 1), {2, 2}), t(filled(4, 0), {2, 2}), out(filled(4, kSentinel), {2, 2});
    expect_forward_refused(nullptr, t, 0, 1.0f, out, ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_forward_refused(s, nullptr, 0, 1.0f, out, ACLNN_ERR_PARAM_NULLPTR, "target is null");
    expect_forward_refused(s, t, 0, 1.0f, nullptr, ACLNN_ERR_PARAM_NULLPTR, "result is null");
    expect_backward_refused(nullptr, s, t, 0, 1.0f, out, ACLNN_ERR_PARAM_NULLPTR, "gradOut is null");
    expect_backward_refused(s, s, t, 0, 1.0f, nullptr, ACLNN_ERR_PARAM_NULLPTR, "gradInput is null");
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnSmoothL1LossGetWorkspaceSize(s, t, 0, 1.0f, out, nullptr, &executor),
              ACLNN_ERR_PARAM_NULLPTR);
}

// beta must be >= 0: negative values and NaN are refused, 0 and +inf are valid.
TEST_F(SmoothL1LossChecks, BetaIsNonNegative) {
    DeviceTensor s(filled(4, 1), {2, 2}), t(filled(4, 0), {2, 2}), out(filled(4, kSentinel), {2, 2});
    expect_forward_refused(s, t, 0, -0.5f, out, ACLNN_ERR_PARAM_INVALID, "beta -0.5 is not >= 0");
    expect_backward_refused(s, s, t, 0, std::nanf(""), out, ACLNN_ERR_PARAM_INVALID, "beta nan is not >= 0");
    EXPECT_EQ(out.storage(), filled(4, kSentinel));
    ASSERT_EQ(forward(s, t, 0, std::numeric_limits<float>::infinity(), out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(4, 0.0f));  // 0.5 * 1 * 1 / inf
}

// At |self - target| == beta both ops take PyTorch's linear branch: the loss z - beta/2, the
// gradient ±gradOut. With beta 0 the loss is |self - target| and the gradient at self ==
// target is -gradOut (x > 0 is false), as aten's kernels give.
TEST_F(SmoothL1LossChecks, TheBoundaryAndBetaZeroTakeTheLinearBranch) {
    DeviceTensor s(std::vector<float>{1.5f, -0.5f, 0.25f, 0.0f}, {4}), t(filled(4, 0), {4});
    DeviceTensor g(filled(1, 2.0f), {}), out(filled(4, kSentinel), {4});
    ASSERT_EQ(forward(s, t, 0, 0.5f, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), (std::vector<float>{1.25f, 0.25f, 0.0625f, 0.0f}));
    ASSERT_EQ(backward(g, s, t, 0, 0.5f, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), (std::vector<float>{2.0f, -2.0f, 1.0f, 0.0f}));
    ASSERT_EQ(forward(s, t, 0, 0.0f, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), (std::vector<float>{1.5f, 0.5f, 0.25f, 0.0f}));
    ASSERT_EQ(backward(g, s, t, 0, 0.0f, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), (std::vector<float>{2.0f, -2.0f, 2.0f, -2.0f}));
}

TEST_F(SmoothL1LossChecks, ReductionOutsideNoneMeanSumIsInvalid) {
    DeviceTensor s(filled(4, 1), {2, 2}), out(filled(1, kSentinel), {});
    expect_forward_refused(s, s, 3, 1.0f, out, ACLNN_ERR_PARAM_INVALID,
                           "reduction 3 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(s, s, s, -1, 1.0f, s, ACLNN_ERR_PARAM_INVALID,
                            "reduction -1 is not 0 (none), 1 (mean) or 2 (sum)");
}

TEST_F(SmoothL1LossChecks, InputsBroadcastAndOutputsHaveTheirShapes) {
    DeviceTensor s(filled(4, 3), {4, 1}), t(filled(3, 1), {1, 3}), bad(filled(6, 0), {2, 3});
    DeviceTensor wrong(filled(4, kSentinel), {4, 1}), one(filled(1, kSentinel), {1}), two(filled(2, 0), {2});
    expect_forward_refused(s, bad, 0, 1.0f, wrong, ACLNN_ERR_PARAM_INVALID,
                           "target shape [2,3] cannot broadcast with self shape [4,1]");
    expect_forward_refused(s, t, 0, 1.0f, wrong, ACLNN_ERR_PARAM_INVALID,
                           "result shape [4,1] must be the broadcast shape [4,3]");
    expect_forward_refused(s, t, 2, 1.0f, two, ACLNN_ERR_PARAM_INVALID,
                           "result shape [2] must be [] or [1] for a reduced loss");
    ASSERT_EQ(forward(s, t, 2, 1.0f, one), ACLNN_SUCCESS) << message();  // CANN's [1]
    EXPECT_EQ(one.storage(), filled(1, 12 * 1.5f));
    expect_backward_refused(one, s, t, 1, 1.0f, one, ACLNN_ERR_PARAM_INVALID,
                            "gradInput shape [1] must be the broadcast shape [4,3]");
}

// The loss: null, dtype, promotion, attributes, rank, shape. The gradient: null, dtype, rank,
// attributes, promotion, shape. Each call below breaks two rules; the earlier one is reported.
TEST_F(SmoothL1LossChecks, EachOpReportsTheFirstFailingCheckInItsOrder) {
    const std::vector<int64_t> nine = {1, 1, 1, 1, 1, 1, 1, 2, 2};
    DeviceTensor s(filled(4, 1), {2, 2}), deep(filled(4, 1), nine), i32(filled(4, 1), {2, 2}, ACL_INT32);
    DeviceTensor out(filled(4, kSentinel), {2, 2});
    expect_forward_refused(s, i32, 0, -1.0f, out, ACLNN_ERR_PARAM_INVALID,
                           "target has dtype int32; expected float32, float16 or bfloat16");
    expect_forward_refused(deep, s, 0, -1.0f, out, ACLNN_ERR_PARAM_INVALID, "beta -1 is not >= 0");
    expect_backward_refused(deep, s, s, 7, 1.0f, out, ACLNN_ERR_PARAM_INVALID,
                            "gradOut has 9 dimensions; at most 8 are supported");
    expect_backward_refused(s, s, s, 7, -1.0f, out, ACLNN_ERR_PARAM_INVALID,
                            "reduction 7 is not 0 (none), 1 (mean) or 2 (sum)");
}

// The mean divides by the broadcast count: self [3] against target [4,3] divides by 12.
TEST_F(SmoothL1LossChecks, TheMeanGradientDividesByTheBroadcastCount) {
    DeviceTensor g(filled(1, 1), {}), s(filled(3, 2), {3}), t(filled(12, 0), {4, 3});
    DeviceTensor out(filled(12, kSentinel), {4, 3});
    ASSERT_EQ(backward(g, s, t, 1, 1.0f, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage(), filled(12, static_cast<float>(1.0 / 12.0)));
}

TEST_F(SmoothL1LossChecks, EmptyInputsGiveNanMeanZeroSumAndWriteNothingElse) {
    DeviceTensor s(std::vector<float>{}, {0, 3}), t(filled(3, 1), {3}), zero_d(filled(1, kSentinel), {});
    ASSERT_EQ(forward(s, t, 1, 1.0f, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(zero_d.storage()[0]));
    ASSERT_EQ(forward(s, t, 2, 1.0f, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 0.0f));
    DeviceTensor empty_out(std::vector<float>{}, {0, 3});
    EXPECT_EQ(backward(zero_d, s, t, 1, 1.0f, empty_out), ACLNN_SUCCESS) << message();
}

}  // namespace
