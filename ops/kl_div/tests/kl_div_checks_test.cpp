// aclnnKlDiv, aclnnKlDivBackward and aclnnKlDivTargetBackward beyond their golden cases
// (tests/golden/kl_div_golden.txt): every first-phase check with its status and exact message,
// the checks' order, batchmean's divisor, logTarget, the zero target, the gradients' shapes,
// empty inputs. A refused call hands out no executor and writes nothing.
#include <aclnnop/aclnn_kl_div.h>
#include <aclnnop/aclnn_kl_div_backward.h>
#include <aclnnop/aclnn_kl_div_target_backward.h>
#include <gtest/gtest.h>

#include <cmath>
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

// Runs a first phase's executor with a fresh workspace on the default stream.
aclnnStatus run(aclnnStatus first, uint64_t size, aclOpExecutor* executor,
                aclnnStatus (*second)(void*, uint64_t, aclOpExecutor*, aclrtStream)) {
    if (first != ACLNN_SUCCESS) return first;
    void* workspace = nullptr;
    if (size > 0 && aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 1;
    aclnnStatus status = second(workspace, size, executor, nullptr);
    if (status == ACLNN_SUCCESS) status = aclrtSynchronizeStream(nullptr);
    if (workspace != nullptr) aclrtFree(workspace);
    return status;
}

aclnnStatus forward(const aclTensor* self, const aclTensor* target, int64_t reduction, bool log_target,
                    aclTensor* out) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first =
        aclnnKlDivGetWorkspaceSize(self, target, reduction, log_target, out, &size, &executor);
    return run(first, size, executor, aclnnKlDiv);
}

aclnnStatus backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target, int64_t reduction,
                     bool log_target, aclTensor* out) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first =
        aclnnKlDivBackwardGetWorkspaceSize(grad, self, target, reduction, log_target, out, &size, &executor);
    return run(first, size, executor, aclnnKlDivBackward);
}

aclnnStatus target_backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                            int64_t reduction, bool log_target, aclTensor* out) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = aclnnKlDivTargetBackwardGetWorkspaceSize(grad, self, target, reduction,
                                                                       log_target, out, &size, &executor);
    return run(first, size, executor, aclnnKlDivTargetBackward);
}

// The first phase refuses with status and exactly "<api>: <text>", handing out no executor.
void expect_refused(aclnnStatus got, const char* api, aclnnStatus status, const std::string& text) {
    EXPECT_EQ(got, status) << message();
    EXPECT_EQ(message(), std::string(api) + ": " + text);
}

using KlDivChecks = nnplug::test::RuntimeTest;

TEST_F(KlDivChecks, NullTensorsAreNullptrErrorsInSignatureOrder) {
    DeviceTensor s(filled(4, -1), {2, 2}), t(filled(4, 0.5f), {2, 2}), out(filled(4, kSentinel), {2, 2});
    expect_refused(forward(nullptr, t, 0, false, out), "aclnnKlDiv", ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_refused(forward(s, t, 0, false, nullptr), "aclnnKlDiv", ACLNN_ERR_PARAM_NULLPTR, "out is null");
    expect_refused(backward(nullptr, s, t, 0, false, out), "aclnnKlDivBackward", ACLNN_ERR_PARAM_NULLPTR,
                   "gradOutput is null");
    expect_refused(target_backward(s, s, nullptr, 0, false, out), "aclnnKlDivTargetBackward",
                   ACLNN_ERR_PARAM_NULLPTR, "target is null");
    expect_refused(target_backward(s, s, t, 0, false, nullptr), "aclnnKlDivTargetBackward",
                   ACLNN_ERR_PARAM_NULLPTR, "gradTarget is null");
}

TEST_F(KlDivChecks, ReductionThreeIsBatchmeanAndFourIsInvalid) {
    DeviceTensor s(filled(4, 1), {2, 2}), out(filled(1, kSentinel), {});
    expect_refused(forward(s, s, 4, false, out), "aclnnKlDiv", ACLNN_ERR_PARAM_INVALID,
                   "reduction 4 is not 0 (none), 1 (mean), 2 (sum) or 3 (batchmean)");
    expect_refused(backward(s, s, s, -1, true, s), "aclnnKlDivBackward", ACLNN_ERR_PARAM_INVALID,
                   "reduction -1 is not 0 (none), 1 (mean), 2 (sum) or 3 (batchmean)");
    expect_refused(target_backward(s, s, s, 4, true, s), "aclnnKlDivTargetBackward", ACLNN_ERR_PARAM_INVALID,
                   "reduction 4 is not 0 (none), 1 (mean), 2 (sum) or 3 (batchmean)");
}

TEST_F(KlDivChecks, ThePromotedTypeMustBeCastableToOut) {
    DeviceTensor s(filled(4, -1), {2, 2}), t(filled(4, 0.5f), {2, 2}),
        out16(filled(4, kSentinel), {2, 2}, ACL_FLOAT16);
    EXPECT_EQ(forward(s, t, 0, false, out16), ACLNN_SUCCESS) << message();  // float32 casts to float16
    DeviceTensor i32(filled(4, 1), {2, 2}, ACL_INT32);
    expect_refused(forward(s, t, 0, false, i32), "aclnnKlDiv", ACLNN_ERR_PARAM_INVALID,
                   "out has dtype int32; expected float32, float16 or bfloat16");
}

// batchmean: the sum divided by self's first dimension; mean: by the element count.
TEST_F(KlDivChecks, BatchmeanDividesTheSumBySelfsFirstDimension) {
    DeviceTensor s(filled(12, 0), {4, 3}), t(filled(12, 1), {4, 3}), zero_d(filled(1, kSentinel), {}),
        one(filled(1, kSentinel), {1});
    // t (log t - x) = 1 (0 - 0) = 0 everywhere: take x = -1, each element 1.
    DeviceTensor x(filled(12, -1), {4, 3});
    ASSERT_EQ(forward(x, t, 3, false, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 3.0f));                         // 12 / 4
    ASSERT_EQ(forward(x, t, 1, false, one), ACLNN_SUCCESS) << message();  // [1] is a reduced out too
    EXPECT_EQ(one.storage(), filled(1, 1.0f));
    ASSERT_EQ(forward(x, t, 2, false, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 12.0f));
    DeviceTensor g(filled(1, 1), {}), grad(filled(12, kSentinel), {4, 3});
    ASSERT_EQ(backward(g, x, t, 3, false, grad), ACLNN_SUCCESS) << message();
    EXPECT_EQ(grad.storage(), filled(12, -0.25f));
    ASSERT_EQ(target_backward(g, x, t, 3, false, grad), ACLNN_SUCCESS) << message();
    EXPECT_EQ(grad.storage(), filled(12, 0.5f));  // (log 1 - (-1) + 1) / 4
}

// CANN's kernel takes log(1) at t = 0: the loss is 0 there, NaN below 0; the target gradient
// is NaN at 0.
TEST_F(KlDivChecks, AZeroTargetContributesZeroAndANegativeOneNan) {
    DeviceTensor s(std::vector<float>{-1.0f, 2.0f, -0.5f}, {3}),
        t(std::vector<float>{0.0f, 0.0f, -0.5f}, {3});
    DeviceTensor out(filled(3, kSentinel), {3});
    ASSERT_EQ(forward(s, t, 0, false, out), ACLNN_SUCCESS) << message();
    const std::vector<float> loss = out.storage();
    EXPECT_EQ(loss[0], 0.0f);
    EXPECT_EQ(loss[1], 0.0f);
    EXPECT_TRUE(std::isnan(loss[2]));
    DeviceTensor g(filled(1, 1), {});
    ASSERT_EQ(target_backward(g, s, t, 0, false, out), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(out.storage()[0]));
}

TEST_F(KlDivChecks, LogTargetTakesTheTargetAsLogProbabilities) {
    DeviceTensor s(filled(2, -1), {2}), t(std::vector<float>{0.0f, -1.0f}, {2}),
        out(filled(2, kSentinel), {2});
    ASSERT_EQ(forward(s, t, 0, true, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage()[0], 1.0f);  // exp(0) (0 - (-1))
    EXPECT_EQ(out.storage()[1], 0.0f);  // exp(-1) (-1 - (-1))
    DeviceTensor g(filled(1, 2), {});
    ASSERT_EQ(backward(g, s, t, 0, true, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.storage()[0], -2.0f);
}

// The self gradient has self's shape: target and gradOutput broadcast to it, one way.
TEST_F(KlDivChecks, TheSelfGradientHasSelfsShape) {
    DeviceTensor s(filled(3, -1), {3}), t(filled(12, 0.5f), {4, 3}), g(filled(1, 1), {});
    DeviceTensor out3(filled(3, kSentinel), {3}), out12(filled(12, kSentinel), {4, 3});
    expect_refused(backward(g, s, t, 0, false, out3), "aclnnKlDivBackward", ACLNN_ERR_PARAM_INVALID,
                   "target shape [4,3] cannot broadcast to self shape [3]");
    ASSERT_EQ(backward(g, t, s, 0, false, out12), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out12.storage(), filled(12, 1.0f));
    // The target gradient has the broadcast shape.
    ASSERT_EQ(target_backward(g, s, t, 0, false, out12), ACLNN_SUCCESS) << message();
    expect_refused(target_backward(g, t, s, 0, false, out3), "aclnnKlDivTargetBackward",
                   ACLNN_ERR_PARAM_INVALID, "gradTarget shape [3] must be the broadcast shape [4,3]");
}

TEST_F(KlDivChecks, EmptyInputsGiveNanMeanZeroSumAndBatchmeanOverTheFirstDimension) {
    DeviceTensor t(filled(3, 0.5f), {3}), zero_d(filled(1, kSentinel), {});
    DeviceTensor rows0(std::vector<float>{}, {0, 3}), cols0(std::vector<float>{}, {2, 0}),
        t0(std::vector<float>{}, {0});
    ASSERT_EQ(forward(rows0, t, 1, false, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(zero_d.storage()[0]));
    ASSERT_EQ(forward(rows0, t, 2, false, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 0.0f));
    ASSERT_EQ(forward(rows0, t, 3, false, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_TRUE(std::isnan(zero_d.storage()[0]));  // 0 / 0
    ASSERT_EQ(forward(cols0, t0, 3, false, zero_d), ACLNN_SUCCESS) << message();
    EXPECT_EQ(zero_d.storage(), filled(1, 0.0f));  // 0 / 2
}

}  // namespace
