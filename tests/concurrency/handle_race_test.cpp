// A handle destroyed by one thread while another uses it: the use either completes
// correctly or returns its documented error (docs/reliability.md), never a crash, a
// deadlock or an abort. Each race is run many times with both threads released together;
// run once per backend, and under AddressSanitizer and ThreadSanitizer in CI, which see a
// use after free even where a plain build would not crash.
#include <acl/acl.h>
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "acl_test_support.h"

namespace nnplug::test {
namespace {

constexpr int kRounds = 400;

std::string backend() {
    const char* name = std::getenv("NNPLUG_BACKEND");
    return name != nullptr && *name != '\0' ? name : "cpu_tbb";
}

class HandleRace : public RuntimeTest {
protected:
    std::string config_text() const override { return "backend: " + backend() + "\n"; }
};

// Runs use() and destroy() on two threads released at the same moment.
void race(const std::function<void()>& use, const std::function<void()>& destroy) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    auto start = [&] {
        aclrtSetDevice(0);
        ++ready;
        while (!go.load()) std::this_thread::yield();
    };
    std::thread user([&] {
        start();
        use();
    });
    std::thread destroyer([&] {
        start();
        destroy();
    });
    while (ready.load() < 2) std::this_thread::yield();
    go = true;
    user.join();
    destroyer.join();
}

// An 8-d view over data: the first phase has the most to read from it.
aclTensor* eight_d_tensor(void* data) {
    const std::vector<int64_t> dims = {2, 2, 2, 2, 2, 2, 2, 2};
    std::vector<int64_t> strides(dims.size());
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= dims[i];
    }
    return aclCreateTensor(dims.data(), dims.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, dims.data(),
                           dims.size(), data);
}

TEST_F(HandleRace, ATensorDestroyedDuringAFirstPhaseIsEitherUsedOrReportedNeverRead) {
    const std::vector<float> ones(256, 0.5f);
    const DeviceTensor data(ones, {256});
    const DeviceTensor target(ones, {2, 2, 2, 2, 2, 2, 2, 2});
    const DeviceTensor out(ones, {2, 2, 2, 2, 2, 2, 2, 2});
    std::set<aclnnStatus> seen;
    for (int round = 0; round < kRounds; ++round) {
        aclTensor* self = eight_d_tensor(data.data());
        ASSERT_NE(self, nullptr) << aclGetRecentErrMsg();
        aclnnStatus status = -1;
        aclnnStatus destroyed = -1;
        std::string text;
        race(
            [&] {
                uint64_t workspace = 0;
                aclOpExecutor* executor = nullptr;
                status = aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 0, out, &workspace,
                                                                 &executor);
                if (status == ACLNN_SUCCESS) aclDestroyAclOpExecutor(executor);
                text = aclGetRecentErrMsg();
            },
            [&] { destroyed = aclDestroyTensor(self); });
        ASSERT_EQ(destroyed, ACLNN_SUCCESS);
        ASSERT_TRUE(status == ACLNN_SUCCESS || status == ACLNN_ERR_PARAM_INVALID) << status;
        if (status != ACLNN_SUCCESS) {
            ASSERT_NE(text.find("self is not a live tensor"), std::string::npos) << text;
        }
        seen.insert(status);
    }
    // After the race, the tensor is gone for good: the next use is refused by name.
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    aclTensor* self = eight_d_tensor(data.data());
    ASSERT_EQ(aclDestroyTensor(self), ACLNN_SUCCESS);
    EXPECT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 0, out, &workspace, &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(aclDestroyTensor(self), ACLNN_ERR_PARAM_INVALID) << "a held tensor is destroyed only once";
}

TEST_F(HandleRace, ARepeatableExecutorDestroyedDuringItsRunIsFreedAfterIt) {
    const std::vector<float> halves(4096, 0.5f);
    const DeviceTensor self(halves, {4096}), target(halves, {4096});
    const DeviceTensor out(std::vector<float>{0.0f}, {});
    for (int round = 0; round < kRounds / 4; ++round) {
        uint64_t workspace_size = 0;
        aclOpExecutor* executor = nullptr;
        ASSERT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 2, out, &workspace_size,
                                                          &executor),
                  ACLNN_SUCCESS)
            << aclGetRecentErrMsg();
        ASSERT_EQ(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS);
        void* workspace = nullptr;
        if (workspace_size > 0) {
            ASSERT_EQ(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        }
        std::vector<aclnnStatus> runs;
        aclnnStatus destroyed = -1;
        race(
            [&] {
                for (int i = 0; i < 4; ++i)
                    runs.push_back(aclnnBinaryCrossEntropy(workspace, workspace_size, executor, nullptr));
            },
            [&] { destroyed = aclDestroyAclOpExecutor(executor); });
        ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS) << aclGetRecentErrMsg();
        EXPECT_EQ(destroyed, ACLNN_SUCCESS);
        bool refused = false;
        for (const aclnnStatus status : runs) {
            // Once refused, every later run is refused too: the executor is gone.
            if (refused) {
                EXPECT_EQ(status, ACLNN_ERR_PARAM_INVALID);
            }
            EXPECT_TRUE(status == ACLNN_SUCCESS || status == ACLNN_ERR_PARAM_INVALID) << status;
            refused = refused || status != ACLNN_SUCCESS;
        }
        if (runs.front() == ACLNN_SUCCESS) {
            EXPECT_NEAR(out.storage()[0], 4096 * 0.6931472, 4096 * 0.6931472 * 1e-5);
        }
        if (workspace != nullptr) aclrtFree(workspace);
    }
}

TEST_F(HandleRace, AStreamDestroyedDuringALaunchOrSynchronizeNeitherHangsNorCrashes) {
    const std::vector<float> halves(1 << 14, 0.5f);
    const DeviceTensor self(halves, {1 << 14}), target(halves, {1 << 14}), out(halves, {1 << 14});
    for (int round = 0; round < kRounds / 4; ++round) {
        aclrtStream stream = nullptr;
        ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS) << aclGetRecentErrMsg();
        std::vector<int> statuses;
        aclError destroyed = -1;
        race(
            [&] {
                for (int i = 0; i < 3; ++i) {
                    uint64_t workspace = 0;
                    aclOpExecutor* executor = nullptr;
                    if (aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 0, out, &workspace,
                                                                &executor) != ACLNN_SUCCESS)
                        return;
                    statuses.push_back(aclnnBinaryCrossEntropy(nullptr, 0, executor, stream));
                    statuses.push_back(aclrtSynchronizeStream(stream));
                }
            },
            [&] { destroyed = aclrtDestroyStream(stream); });
        EXPECT_EQ(destroyed, ACL_SUCCESS) << aclGetRecentErrMsg();
        for (const int status : statuses)
            EXPECT_TRUE(status == ACL_SUCCESS || status == ACLNN_ERR_PARAM_INVALID ||
                        status == ACL_ERROR_INVALID_PARAM || status == ACLNN_ERR_RUNTIME_ERROR ||
                        status == ACL_ERROR_INVALID_RESOURCE_HANDLE)
                << status << " " << aclGetRecentErrMsg();
    }
    ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << aclGetRecentErrMsg();
}

TEST_F(HandleRace, AContextThatWasNeverCreatedIsRefused) {
    for (const uintptr_t bogus : {uintptr_t{0x10}, uintptr_t{0x100000001}, ~uintptr_t{0}}) {
        EXPECT_EQ(aclrtDestroyContext(reinterpret_cast<aclrtContext>(bogus)), ACL_ERROR_INVALID_PARAM);
        EXPECT_NE(std::string(aclGetRecentErrMsg()).find("is not a context from aclrtCreateContext"),
                  std::string::npos);
        EXPECT_EQ(aclrtSetCurrentContext(reinterpret_cast<aclrtContext>(bogus)), ACL_ERROR_INVALID_PARAM);
    }
    aclrtContext context = nullptr;
    ASSERT_EQ(aclrtCreateContext(&context, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetCurrentContext(context), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(context), ACL_SUCCESS);
}

}  // namespace
}  // namespace nnplug::test
