// aclSetInputTensorAddr, aclSetOutputTensorAddr and aclSetTensorAddr: a repeatable executor
// moved to other memory gives what a fresh first phase over that memory gives, and leaves
// the old memory alone; each refusal names its reason and leaves the executor running where
// it ran. Run once per backend.
#include <acl/acl.h>
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_mse_loss.h>
#include <aclnnop/aclnn_nll_loss.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace nnplug::test {
namespace {

class ExecutorAddresses : public RuntimeTest {};

std::vector<float> ramp(size_t count, float first, float step) {
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = first + step * static_cast<float>(i);
    return values;
}

// (self - target)^2 of each element.
std::vector<float> squared_differences(const std::vector<float>& self, const std::vector<float>& target) {
    std::vector<float> out(self.size());
    for (size_t i = 0; i < self.size(); ++i) out[i] = (self[i] - target[i]) * (self[i] - target[i]);
    return out;
}

// A repeatable MseLoss (reduction none) executor over self, target and out.
aclOpExecutor* repeatable_mse(const DeviceTensor& self, const DeviceTensor& target, const DeviceTensor& out) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnMseLossGetWorkspaceSize(self, target, 0, out, &workspace, &executor), ACLNN_SUCCESS)
        << message();
    EXPECT_EQ(workspace, 0u);
    EXPECT_EQ(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS);
    return executor;
}

void run_mse(aclOpExecutor* executor) {
    ASSERT_EQ(aclnnMseLoss(nullptr, 0, executor, nullptr), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS) << message();
}

constexpr float kSentinel = -7.0f;

TEST_F(ExecutorAddresses, MovedOperandsGiveWhatAFreshExecutorGives) {
    const std::vector<float> a_self = ramp(12, 0.5f, 0.25f), a_target = ramp(12, 1.0f, -0.5f);
    const std::vector<float> b_self = ramp(12, -2.0f, 0.75f), b_target = ramp(12, 0.25f, 0.125f);
    DeviceTensor self(a_self, {3, 4}), target(a_target, {3, 4}), out(filled(12, kSentinel), {3, 4});
    DeviceTensor other_self(b_self, {3, 4}), other_target(b_target, {3, 4});
    DeviceTensor other_out(filled(12, kSentinel), {3, 4});
    aclOpExecutor* executor = repeatable_mse(self, target, out);
    run_mse(executor);
    EXPECT_EQ(out.storage(), squared_differences(a_self, a_target));

    ASSERT_EQ(aclSetInputTensorAddr(executor, 0, self, other_self.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclSetInputTensorAddr(executor, 1, target, other_target.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, other_out.data()), ACLNN_SUCCESS) << message();
    const std::vector<float> a_out = out.storage();
    run_mse(executor);
    EXPECT_EQ(other_out.storage(), squared_differences(b_self, b_target)) << "ran over the new memory";
    EXPECT_EQ(out.storage(), a_out) << "the old output is left alone";

    // aclSetTensorAddr counts the inputs, then the outputs: index 2 is out.
    DeviceTensor third_out(filled(12, kSentinel), {3, 4});
    ASSERT_EQ(aclSetTensorAddr(executor, 0, self, self.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclSetTensorAddr(executor, 2, out, third_out.data()), ACLNN_SUCCESS) << message();
    run_mse(executor);
    EXPECT_EQ(third_out.storage(), squared_differences(a_self, b_target));
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
}

TEST_F(ExecutorAddresses, TheTensorRecordsItsNewAddressForTheNextFirstPhase) {
    DeviceTensor self(ramp(6, 1.0f, 1.0f), {6}), target(filled(6, 0.0f), {6}), out(filled(6, kSentinel), {6});
    DeviceTensor moved(filled(6, kSentinel), {6});
    aclOpExecutor* executor = repeatable_mse(self, target, out);
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, moved.data()), ACLNN_SUCCESS) << message();
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    uint64_t workspace = 0;
    ASSERT_EQ(aclnnMseLossGetWorkspaceSize(self, target, 0, out, &workspace, &executor), ACLNN_SUCCESS);
    ASSERT_EQ(aclnnMseLoss(nullptr, 0, executor, nullptr), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(moved.storage(), squared_differences(ramp(6, 1.0f, 1.0f), filled(6, 0.0f)));
    EXPECT_EQ(out.storage(), filled(6, kSentinel));
}

// A class-axis op with two reduced outputs, moved in one go while its last run may still be
// queued on an asynchronous stream: each run reads the addresses it was launched with.
TEST_F(ExecutorAddresses, AClassOpMovesItsOutputsBetweenQueuedRuns) {
    const std::vector<float> logs = ramp(12, -3.0f, 0.25f);
    DeviceTensor self(logs, {4, 3}), target({0, 2, 1, 2}, {4}, ACL_INT64), weight({1.0f, 2.0f, 0.5f}, {3});
    DeviceTensor out(filled(1, kSentinel), {}), total(filled(1, kSentinel), {});
    DeviceTensor out2(filled(1, kSentinel), {}), total2(filled(1, kSentinel), {});
    DeviceTensor target2({1, 1, 0, 0}, {4}, ACL_INT64);
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnNLLLossGetWorkspaceSize(self, target, weight, 1, -100, out, total, &workspace, &executor),
              ACLNN_SUCCESS)
        << message();
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS);
    void* workspace_memory = nullptr;
    if (workspace > 0) {
        ASSERT_EQ(aclrtMalloc(&workspace_memory, workspace, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    }
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    ASSERT_EQ(aclnnNLLLoss(workspace_memory, workspace, executor, stream), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclSetInputTensorAddr(executor, 1, target, target2.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, out2.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 1, total, total2.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclnnNLLLoss(workspace_memory, workspace, executor, stream), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << message();
    const std::vector<float> w = {1.0f, 2.0f, 0.5f};
    auto nll = [&](const std::vector<int64_t>& t) {
        double loss = 0, weights = 0;
        for (size_t row = 0; row < t.size(); ++row) {
            loss -= w[t[row]] * logs[row * 3 + t[row]];
            weights += w[t[row]];
        }
        return std::vector<double>{loss / weights, weights};
    };
    const std::vector<double> first = nll({0, 2, 1, 2}), second = nll({1, 1, 0, 0});
    EXPECT_NEAR(out.storage()[0], first[0], 1e-5);
    EXPECT_FLOAT_EQ(total.storage()[0], static_cast<float>(first[1]));
    EXPECT_NEAR(out2.storage()[0], second[0], 1e-5);
    EXPECT_FLOAT_EQ(total2.storage()[0], static_cast<float>(second[1]));
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    if (workspace_memory != nullptr) {
        EXPECT_EQ(aclrtFree(workspace_memory), ACL_SUCCESS);
    }
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
}

// Two outputs swapped one move at a time pass through a state where both are one memory:
// only the state the run sees counts.
TEST_F(ExecutorAddresses, OperandsSwappedOneMoveAtATimeRun) {
    const std::vector<float> logs = ramp(6, -2.0f, 0.25f);
    DeviceTensor self(logs, {2, 3}), target({2, 0}, {2}, ACL_INT64), weight(filled(3, 1.0f), {3});
    DeviceTensor out(filled(1, kSentinel), {}), total(filled(1, kSentinel), {});
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnNLLLossGetWorkspaceSize(self, target, weight, 2, -100, out, total, &workspace, &executor),
              ACLNN_SUCCESS)
        << message();
    ASSERT_EQ(workspace, 0u);
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS);
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, total.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 1, total, out.data()), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclnnNLLLoss(nullptr, 0, executor, nullptr), ACLNN_SUCCESS) << message();
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_FLOAT_EQ(total.storage()[0], -(logs[2] + logs[3])) << "the loss sum went where out now is";
    EXPECT_FLOAT_EQ(out.storage()[0], 2.0f) << "the total weight went where totalWeightOut now is";
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
}

// Expects `status` and a message holding `words`, and the executor still running over the
// memory it ran over before.
void expect_refused(aclnnStatus status, aclnnStatus expected, const std::string& words) {
    EXPECT_EQ(status, expected) << words;
    EXPECT_NE(message().find(words), std::string::npos) << "message: " << message();
}

TEST_F(ExecutorAddresses, BadArgumentsAreRefusedAndChangeNothing) {
    const std::vector<float> s = ramp(8, 0.1f, 0.1f), t = filled(8, 0.5f);
    DeviceTensor self(s, {8}), target(t, {8}), out(filled(8, kSentinel), {8});
    DeviceTensor elsewhere(filled(8, 0.0f), {8});
    uint64_t workspace = 0;
    aclOpExecutor* once = nullptr;
    ASSERT_EQ(aclnnMseLossGetWorkspaceSize(self, target, 0, out, &workspace, &once), ACLNN_SUCCESS);
    expect_refused(aclSetInputTensorAddr(once, 0, self, elsewhere.data()), ACLNN_ERR_PARAM_INVALID,
                   "aclSetInputTensorAddr: executor ");
    EXPECT_NE(message().find("is not repeatable"), std::string::npos) << message();
    EXPECT_EQ(aclDestroyAclOpExecutor(once), ACLNN_SUCCESS);

    aclOpExecutor* executor = repeatable_mse(self, target, out);
    expect_refused(aclSetInputTensorAddr(nullptr, 0, self, elsewhere.data()), ACLNN_ERR_INNER_NULLPTR,
                   "aclSetInputTensorAddr: executor is null");
    expect_refused(aclSetOutputTensorAddr(executor, 0, nullptr, elsewhere.data()), ACLNN_ERR_INNER_NULLPTR,
                   "aclSetOutputTensorAddr: tensor is null");
    expect_refused(aclSetInputTensorAddr(executor, 2, self, elsewhere.data()), ACLNN_ERR_PARAM_INVALID,
                   "index 2 is past the 2 inputs of aclnnMseLoss");
    expect_refused(aclSetOutputTensorAddr(executor, 1, out, elsewhere.data()), ACLNN_ERR_PARAM_INVALID,
                   "index 1 is past the 1 outputs of aclnnMseLoss");
    expect_refused(aclSetTensorAddr(executor, 3, out, elsewhere.data()), ACLNN_ERR_PARAM_INVALID,
                   "index 3 is past the 3 tensors of aclnnMseLoss");
    expect_refused(aclSetInputTensorAddr(executor, 1, self, elsewhere.data()), ACLNN_ERR_PARAM_INVALID,
                   "is not input 1 (target), the aclTensor aclnnMseLossGetWorkspaceSize was given");
    expect_refused(aclSetOutputTensorAddr(executor, 0, out, nullptr), ACLNN_ERR_PARAM_NULLPTR,
                   "aclSetOutputTensorAddr: addr is null, but out has data");
    run_mse(executor);
    EXPECT_EQ(out.storage(), squared_differences(s, t)) << "every refusal left the executor as it was";
    EXPECT_EQ(elsewhere.storage(), filled(8, 0.0f));
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    expect_refused(aclSetInputTensorAddr(executor, 0, self, elsewhere.data()), ACLNN_ERR_PARAM_INVALID,
                   "is not live");
}

TEST_F(ExecutorAddresses, AnOperandNullInTheFirstPhaseHasNoAddressToSet) {
    DeviceTensor self(filled(4, 0.5f), {4}), target(filled(4, 1.0f), {4}), out(filled(4, kSentinel), {4});
    DeviceTensor elsewhere(filled(4, 1.0f), {4});
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 0, out, &workspace, &executor),
              ACLNN_SUCCESS);
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS);
    expect_refused(aclSetInputTensorAddr(executor, 2, elsewhere, elsewhere.data()), ACLNN_ERR_PARAM_INVALID,
                   "input 2 (weight) was null in aclnnBinaryCrossEntropyGetWorkspaceSize");
    // The output is tensor 3 of all: inputs self, target, weight, then out.
    DeviceTensor moved(filled(4, kSentinel), {4});
    ASSERT_EQ(aclSetTensorAddr(executor, 3, out, moved.data()), ACLNN_SUCCESS) << message();
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
}

// The checks a first phase makes of memory are made of the new address too.
TEST_F(ExecutorAddresses, AddressesAreCheckedAsAFirstPhaseChecksThem) {
    const std::vector<float> s = ramp(32, 0.1f, 0.1f), t = filled(32, 0.5f);
    DeviceTensor self(s, {32}), target(t, {32}), out(filled(32, kSentinel), {32});
    aclOpExecutor* executor = repeatable_mse(self, target, out);
    // out moved onto target shifted by one element: overlapping, not the same view. The
    // operands' overlap is checked by the next run, once all moves are made: it refuses to
    // run and writes nothing; moved back, the executor runs again.
    void* shifted = static_cast<char*>(target.data()) + sizeof(float);
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, shifted), ACLNN_SUCCESS) << message();
    expect_refused(aclnnMseLoss(nullptr, 0, executor, nullptr), ACLNN_ERR_PARAM_INVALID,
                   "aclnnMseLoss: out and target share memory but are not the same view");
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(target.storage(), t) << "the refused run wrote nothing";
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, out.data()), ACLNN_SUCCESS) << message();
    // A block of 4 floats (64 bytes with the runtime's padding) cannot hold out's 32.
    void* small = nullptr;
    ASSERT_EQ(aclrtMalloc(&small, 4 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    expect_refused(aclSetOutputTensorAddr(executor, 0, out, small), ACLNN_ERR_PARAM_INVALID,
                   "runs past the end");
    // Host memory: refused by a backend with device memory of its own, exactly when its first
    // phase refuses a tensor there.
    std::vector<float> host(32, kSentinel);
    const int64_t shape[] = {32}, strides[] = {1};
    aclTensor* on_host =
        aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, host.data());
    uint64_t workspace = 0;
    aclOpExecutor* fresh = nullptr;
    const aclnnStatus first_phase =
        aclnnMseLossGetWorkspaceSize(self, target, 0, on_host, &workspace, &fresh);
    const std::string first_message = message();
    if (fresh != nullptr) {
        EXPECT_EQ(aclDestroyAclOpExecutor(fresh), ACLNN_SUCCESS);
    }
    EXPECT_EQ(aclDestroyTensor(on_host), ACLNN_SUCCESS);
    const aclnnStatus moved = aclSetOutputTensorAddr(executor, 0, out, host.data());
    EXPECT_EQ(moved, first_phase) << first_message;
    if (moved != ACLNN_SUCCESS) {
        expect_refused(moved, first_phase, "aclSetOutputTensorAddr: out data");
        EXPECT_NE(first_message.find("is host memory"), std::string::npos) << first_message;
        EXPECT_NE(message().find("is host memory"), std::string::npos) << message();
    } else {
        run_mse(executor);
        EXPECT_EQ(host, squared_differences(s, t)) << "a backend that takes host memory wrote it";
        ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, out.data()), ACLNN_SUCCESS) << message();
    }
    run_mse(executor);
    EXPECT_EQ(out.storage(), squared_differences(s, t)) << "the refusals changed nothing";
    // Exactly target's view is elementwise in place, which every backend supports.
    ASSERT_EQ(aclSetOutputTensorAddr(executor, 0, out, target.data()), ACLNN_SUCCESS) << message();
    run_mse(executor);
    EXPECT_EQ(target.storage(), squared_differences(s, t));
    EXPECT_EQ(aclrtFree(small), ACL_SUCCESS);
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
}

}  // namespace
}  // namespace nnplug::test
