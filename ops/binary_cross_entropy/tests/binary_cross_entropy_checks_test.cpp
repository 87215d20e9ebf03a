// The first-phase checks in their order (docs/ops/binary_cross_entropy.md, first-phase
// checks), with their codes and one specific message each; second-phase misuse; empty
// tensors; executors. Failed calls write nothing into out.
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
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

class BceChecks : public nnplug::test::RuntimeTest {
protected:
    // Runs the backward's first phase and expects `status` with `fragment` in the message,
    // and out's storage untouched.
    void expect_backward_refused(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                                 const aclTensor* weight, int64_t reduction, DeviceTensor* out,
                                 aclnnStatus status, const std::string& fragment) {
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        const std::vector<float> before = out ? out->storage() : std::vector<float>{};
        EXPECT_EQ(
            aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
                grad, self, target, weight, reduction, out ? out->get() : nullptr, &workspace, &executor),
            status);
        expect_message(fragment);
        EXPECT_EQ(executor, nullptr) << "a refused call hands out no executor";
        if (out) {
            EXPECT_EQ(out->storage(), before) << "a refused call writes nothing";
        }
    }

    void expect_forward_refused(const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                                int64_t reduction, aclTensor* out, aclnnStatus status,
                                const std::string& fragment) {
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, weight, reduction, out, &workspace,
                                                          &executor),
                  status);
        expect_message(fragment);
    }

    static void expect_message(const std::string& fragment) {
        const std::string text = message();
        EXPECT_NE(text.find(fragment), std::string::npos) << "message: " << text;
        EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
    }

    std::vector<float> values(size_t count, float value) { return std::vector<float>(count, value); }
};

TEST_F(BceChecks, NullTensorsAreNullptrErrors) {
    DeviceTensor g(values(20, 0.1f), {4, 5}), s(values(20, 0.3f), {4, 5}), t(values(20, 0.5f), {4, 5});
    DeviceTensor out(values(20, kSentinel), {4, 5});
    expect_backward_refused(nullptr, s, t, nullptr, 0, &out, ACLNN_ERR_PARAM_NULLPTR, "gradOutput is null");
    expect_backward_refused(g, nullptr, t, nullptr, 0, &out, ACLNN_ERR_PARAM_NULLPTR, "self is null");
    expect_backward_refused(g, s, nullptr, nullptr, 0, &out, ACLNN_ERR_PARAM_NULLPTR, "target is null");
    expect_backward_refused(g, s, t, nullptr, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "out is null");
    expect_forward_refused(nullptr, t, nullptr, 0, out, ACLNN_ERR_PARAM_NULLPTR,
                           "aclnnBinaryCrossEntropy: self is null");
    aclOpExecutor* executor = nullptr;
    uint64_t workspace = 0;
    EXPECT_EQ(aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g, s, t, nullptr, 0, out, nullptr, &executor),
              ACLNN_ERR_PARAM_NULLPTR);
    expect_message("workspaceSize is null");
    EXPECT_EQ(aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g, s, t, nullptr, 0, out, &workspace, nullptr),
              ACLNN_ERR_PARAM_NULLPTR);
    expect_message("executor is null");
}

TEST_F(BceChecks, MoreThanEightDimensionsAreInvalid) {
    const std::vector<int64_t> nine(9, 1);
    DeviceTensor g(values(1, 0.1f), {1}), s(values(1, 0.3f), nine), t(values(1, 0.5f), {1});
    DeviceTensor out(values(1, kSentinel), nine);
    expect_backward_refused(g, s, t, nullptr, 0, &out, ACLNN_ERR_PARAM_INVALID,
                            "self has 9 dimensions; at most 8 are supported");
}

TEST_F(BceChecks, DtypesOutsideTheTableAreInvalid) {
    DeviceTensor g(values(20, 0.1f), {4, 5}), s(values(20, 0.3f), {4, 5}), t(values(20, 0.5f), {4, 5});
    DeviceTensor out(values(20, kSentinel), {4, 5});
    std::vector<int32_t> integers(20, 1);
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 80, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    const int64_t dims[] = {4, 5}, strides[] = {5, 1};
    aclTensor* int_target = aclCreateTensor(dims, 2, ACL_INT32, strides, 0, ACL_FORMAT_ND, dims, 2, device);
    aclTensor* double_weight =
        aclCreateTensor(dims, 2, ACL_DOUBLE, strides, 0, ACL_FORMAT_ND, dims, 1, device);
    ASSERT_NE(int_target, nullptr);
    expect_backward_refused(g, s, int_target, nullptr, 0, &out, ACLNN_ERR_PARAM_INVALID,
                            "target has dtype int32; expected float32, float16 or bfloat16");
    if (double_weight) {
        expect_backward_refused(g, s, t, double_weight, 0, &out, ACLNN_ERR_PARAM_INVALID,
                                "weightOptional has dtype float64");
    }
    aclDestroyTensor(int_target);
    aclDestroyTensor(double_weight);
    aclrtFree(device);
}

TEST_F(BceChecks, FormatsOfSelfTargetAndWeightMustAgree) {
    DeviceTensor g(values(20, 0.1f), {4, 5}), s(values(20, 0.3f), {4, 5});
    DeviceTensor out(values(20, kSentinel), {4, 5});
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 80, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    const int64_t dims[] = {4, 5}, strides[] = {5, 1};
    aclTensor* nchw = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_NCHW, dims, 2, device);
    expect_backward_refused(g, s, nchw, nullptr, 0, &out, ACLNN_ERR_PARAM_INVALID,
                            "target has format NCHW but self has format ND");
    aclDestroyTensor(nchw);
    aclrtFree(device);
}

TEST_F(BceChecks, ShapesMustMatchOrBroadcast) {
    DeviceTensor g(values(20, 0.1f), {4, 5}), s(values(20, 0.3f), {4, 5}), t(values(20, 0.5f), {4, 5});
    DeviceTensor bad_target(values(15, 0.5f), {3, 5}), bad_grad(values(4, 0.1f), {4}),
        row(values(5, 1.0f), {5});
    DeviceTensor out(values(20, kSentinel), {4, 5}), wrong_out(values(20, kSentinel), {5, 4});
    expect_backward_refused(
        g, s, bad_target, nullptr, 0, &out, ACLNN_ERR_PARAM_INVALID,
        "aclnnBinaryCrossEntropyBackward: target shape [3,5] cannot broadcast to self shape [4,5]");
    expect_backward_refused(bad_grad, s, t, nullptr, 0, &out, ACLNN_ERR_PARAM_INVALID,
                            "gradOutput shape [4] cannot broadcast to self shape [4,5]");
    expect_backward_refused(g, s, t, bad_grad, 0, &out, ACLNN_ERR_PARAM_INVALID,
                            "weightOptional shape [4] cannot broadcast");
    expect_backward_refused(g, s, t, nullptr, 0, &wrong_out, ACLNN_ERR_PARAM_INVALID,
                            "out shape [5,4] must be self's shape [4,5]");
    // A 0-d self takes only a 0-d gradOutput.
    DeviceTensor scalar_self(values(1, 0.3f), {}), scalar_target(values(1, 0.5f), {}),
        scalar_out(values(1, 0), {});
    DeviceTensor one_grad(values(1, 0.1f), {1});
    expect_backward_refused(one_grad, scalar_self, scalar_target, nullptr, 0, &scalar_out,
                            ACLNN_ERR_PARAM_INVALID,
                            "gradOutput shape [1] cannot broadcast to self shape []");
    // Broadcasting does work where the rules allow it.
    EXPECT_EQ(nnplug::test::run_backward(row, s, row, row, 0, out), ACLNN_SUCCESS) << message();
    // The forward wants target of self's shape, and a 0-d or [1] out when reducing.
    DeviceTensor pair(values(2, 0), {2});
    expect_forward_refused(s, row, nullptr, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "target shape [5] must equal self shape [4,5]");
    expect_forward_refused(s, t, nullptr, 1, pair, ACLNN_ERR_PARAM_INVALID,
                           "out shape [2] must be [] or [1]");
    expect_forward_refused(s, t, bad_grad, 0, out, ACLNN_ERR_PARAM_INVALID,
                           "weight shape [4] cannot broadcast");
}

TEST_F(BceChecks, ReductionMustBeNoneMeanOrSum) {
    DeviceTensor g(values(20, 0.1f), {4, 5}), s(values(20, 0.3f), {4, 5}), t(values(20, 0.5f), {4, 5});
    DeviceTensor out(values(20, kSentinel), {4, 5});
    expect_backward_refused(g, s, t, nullptr, 3, &out, ACLNN_ERR_PARAM_INVALID,
                            "reduction 3 is not 0 (none), 1 (mean) or 2 (sum)");
    expect_backward_refused(g, s, t, nullptr, -1, &out, ACLNN_ERR_PARAM_INVALID, "reduction -1");
}

TEST_F(BceChecks, TheFirstFailingCheckInSpecOrderIsReported) {
    DeviceTensor g(values(20, 0.1f), {4, 5}), s(values(20, 0.3f), {4, 5});
    DeviceTensor wrong_out(values(20, kSentinel), {5, 4});
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 80, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    const int64_t dims[] = {4, 5}, strides[] = {5, 1};
    aclTensor* int_target = aclCreateTensor(dims, 2, ACL_INT32, strides, 0, ACL_FORMAT_ND, dims, 2, device);
    // dtype (3) before shape (5) before reduction (6)
    expect_backward_refused(g, s, int_target, nullptr, 9, &wrong_out, ACLNN_ERR_PARAM_INVALID, "dtype int32");
    const std::vector<int64_t> nine(9, 1), nine_strides(9, 1);
    aclTensor* nine_d =
        aclCreateTensor(nine.data(), 9, ACL_INT32, nine_strides.data(), 0, ACL_FORMAT_ND, dims, 1, device);
    // null (1) before rank (2) before dtype (3)
    expect_backward_refused(g, s, nine_d, nullptr, 0, nullptr, ACLNN_ERR_PARAM_NULLPTR, "out is null");
    expect_backward_refused(g, s, nine_d, nullptr, 0, &wrong_out, ACLNN_ERR_PARAM_INVALID,
                            "target has 9 dimensions");
    // shape (5) before reduction (6)
    DeviceTensor t(values(20, 0.5f), {4, 5});
    expect_backward_refused(g, s, t, nullptr, 7, &wrong_out, ACLNN_ERR_PARAM_INVALID, "out shape [5,4]");
    aclDestroyTensor(int_target);
    aclDestroyTensor(nine_d);
    aclrtFree(device);
}

TEST_F(BceChecks, EmptySelfSucceedsWithNoWorkspaceAndWritesNothing) {
    DeviceTensor g(values(1, 0.1f), {}), s(values(0, 0), {0, 5}), t(values(0, 0), {0, 5});
    DeviceTensor out(values(4, kSentinel), {4}, {0, 5}, {5, 1}, 0, ACL_FLOAT);
    DeviceTensor mismatched_out(values(3, kSentinel), {3});
    for (DeviceTensor* target_out : {&out, &mismatched_out}) {
        uint64_t workspace = 99;
        aclOpExecutor* executor = nullptr;
        ASSERT_EQ(aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g, s, t, nullptr, 1, *target_out,
                                                                  &workspace, &executor),
                  ACLNN_SUCCESS)
            << "an empty self skips the shape checks: " << message();
        EXPECT_EQ(workspace, 0u);
        ASSERT_EQ(aclnnBinaryCrossEntropyBackward(nullptr, 0, executor, nullptr), ACLNN_SUCCESS) << message();
        ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    }
    EXPECT_EQ(out.storage(), values(4, kSentinel));
    DeviceTensor loss(values(1, kSentinel), {});
    EXPECT_EQ(nnplug::test::run_forward(s, t, nullptr, 2, loss), ACLNN_SUCCESS) << message();
    EXPECT_EQ(loss.storage(), values(1, kSentinel)) << "the run does nothing";
}

TEST_F(BceChecks, SecondPhaseMisuseIsReported) {
    DeviceTensor g(values(20, 0.1f), {4, 5}), s(values(20, 0.3f), {4, 5}), t(values(20, 0.5f), {4, 5});
    DeviceTensor out(values(20, kSentinel), {4, 5});
    EXPECT_EQ(aclnnBinaryCrossEntropyBackward(nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    expect_message("aclnnBinaryCrossEntropyBackward: executor is null");

    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(
        aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g, s, t, nullptr, 0, out, &workspace, &executor),
        ACLNN_SUCCESS);
    EXPECT_EQ(aclnnBinaryCrossEntropy(nullptr, workspace, executor, nullptr), ACLNN_ERR_PARAM_INVALID)
        << "a backward executor is not a forward one";
    expect_message("executor was made by aclnnBinaryCrossEntropyBackwardGetWorkspaceSize");
    ASSERT_EQ(aclnnBinaryCrossEntropyBackward(nullptr, workspace, executor, nullptr), ACLNN_SUCCESS)
        << message();
    EXPECT_EQ(aclnnBinaryCrossEntropyBackward(nullptr, workspace, executor, nullptr),
              ACLNN_ERR_PARAM_INVALID);
    expect_message("was consumed by its one run");
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclDestroyAclOpExecutor(reinterpret_cast<aclOpExecutor*>(&workspace)), ACLNN_ERR_PARAM_INVALID);
    expect_message("is not live");
}

TEST_F(BceChecks, WorkspaceSmallerThanAskedIsRefused) {
    // A reduction over many elements asks for workspace on every backend so far; a backend
    // that needs none for it has nothing to check here.
    const int64_t count = 100000;
    DeviceTensor s(values(count, 0.3f), {count}), t(values(count, 0.5f), {count});
    DeviceTensor loss(values(1, kSentinel), {});
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(s, t, nullptr, 1, loss, &workspace, &executor),
              ACLNN_SUCCESS);
    if (workspace == 0) {
        aclDestroyAclOpExecutor(executor);
        GTEST_SKIP() << "this backend needs no workspace for a mean";
    }
    void* buffer = nullptr;
    ASSERT_EQ(aclrtMalloc(&buffer, workspace, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclnnBinaryCrossEntropy(buffer, workspace - 1, executor, nullptr), ACLNN_ERR_PARAM_INVALID);
    expect_message("is smaller than the");
    EXPECT_EQ(aclnnBinaryCrossEntropy(nullptr, workspace, executor, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    expect_message("workspace is null");
    EXPECT_EQ(loss.storage(), values(1, kSentinel));
    ASSERT_EQ(aclnnBinaryCrossEntropy(buffer, workspace, executor, nullptr), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    const double self_value = 0.3f;
    EXPECT_NEAR(loss.storage()[0], -0.5 * (std::log(self_value) + std::log1p(-self_value)), 1e-6);
    aclrtFree(buffer);
}

TEST_F(BceChecks, RepeatableExecutorsRunManyTimesOnFreshData) {
    std::vector<float> self_values(20, 0.3f);
    DeviceTensor g(values(1, 1.0f), {}), s(self_values, {4, 5}), t(values(20, 0.5f), {4, 5});
    DeviceTensor out(values(20, kSentinel), {4, 5});
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(
        aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(g, s, t, nullptr, 2, out, &workspace, &executor),
        ACLNN_SUCCESS);
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS);
    // A device backend may stage the broadcast gradOutput in a workspace.
    void* workspace_memory = nullptr;
    if (workspace > 0) {
        ASSERT_EQ(aclrtMalloc(&workspace_memory, workspace, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    }
    for (int run = 0; run < 5; ++run) {
        const float self_value = 0.1f + 0.1f * run;
        std::vector<float> fresh(20, self_value);
        ASSERT_EQ(aclrtMemcpy(s.data(), 80, fresh.data(), 80, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        ASSERT_EQ(aclnnBinaryCrossEntropyBackward(workspace_memory, workspace, executor, nullptr),
                  ACLNN_SUCCESS)
            << message();
        ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
        const float expected = (self_value - 0.5f) / (self_value * (1.0f - self_value));
        EXPECT_FLOAT_EQ(out.storage()[7], expected) << "run " << run;
    }
    if (workspace_memory != nullptr) {
        EXPECT_EQ(aclrtFree(workspace_memory), ACL_SUCCESS);
    }
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_ERR_PARAM_INVALID) << "destroyed once only";
    EXPECT_EQ(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_PARAM_NULLPTR);
}

TEST_F(BceChecks, UnrunExecutorsCanBeDestroyed) {
    DeviceTensor s(values(8, 0.3f), {8}), t(values(8, 0.5f), {8}), out(values(8, kSentinel), {8});
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(s, t, nullptr, 0, out, &workspace, &executor),
              ACLNN_SUCCESS);
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    EXPECT_EQ(aclnnBinaryCrossEntropy(nullptr, 0, executor, nullptr), ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(out.storage(), values(8, kSentinel));
}

TEST(BceChecksWithoutRuntime, OpsBeforeAclInitFailCleanly) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(
        aclnnBinaryCrossEntropyGetWorkspaceSize(nullptr, nullptr, nullptr, 0, nullptr, &workspace, &executor),
        ACLNN_ERR_RUNTIME_ERROR);
    EXPECT_NE(std::string(aclGetRecentErrMsg()).find("aclInit has not been called"), std::string::npos);
}

}  // namespace
