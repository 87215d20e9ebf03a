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
#include <cmath>
#include <functional>
#include <initializer_list>
#include <mutex>
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

// aclSetOutputTensorAddr racing runs of the executor: a move is refused while a run is in
// its second phase and takes effect between runs, so each run writes one whole buffer.
TEST_F(HandleRace, AnOutputMovedWhileTheExecutorRunsIsMovedBetweenRuns) {
    const std::vector<float> halves(4096, 0.5f);
    const DeviceTensor self(halves, {4096}), target(halves, {4096});
    const DeviceTensor first(std::vector<float>{0.0f}, {}), second(std::vector<float>{0.0f}, {});
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(
        aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 2, first, &workspace_size, &executor),
        ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(executor), ACLNN_SUCCESS);
    void* workspace = nullptr;
    if (workspace_size > 0) {
        ASSERT_EQ(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    }
    const double expected = 4096 * 0.6931472;
    for (int round = 0; round < kRounds / 4; ++round) {
        first.upload(std::vector<uint8_t>(4, 0));
        second.upload(std::vector<uint8_t>(4, 0));
        std::vector<aclnnStatus> runs, moves;
        race(
            [&] {
                for (int i = 0; i < 4; ++i)
                    runs.push_back(aclnnBinaryCrossEntropy(workspace, workspace_size, executor, nullptr));
            },
            [&] {
                for (int i = 0; i < 4; ++i)
                    moves.push_back(
                        aclSetOutputTensorAddr(executor, 0, first, i % 2 ? first.data() : second.data()));
            });
        ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS) << aclGetRecentErrMsg();
        for (const aclnnStatus status : runs) EXPECT_EQ(status, ACLNN_SUCCESS);
        for (const aclnnStatus status : moves)
            EXPECT_TRUE(status == ACLNN_SUCCESS || status == ACLNN_ERR_PARAM_INVALID) << status;
        // Each buffer holds the sum or was never written; one of them was.
        const float a = first.storage()[0], b = second.storage()[0];
        for (const float value : {a, b})
            EXPECT_TRUE(value == 0.0f || std::fabs(value - expected) < expected * 1e-5) << value;
        EXPECT_TRUE(a != 0.0f || b != 0.0f);
    }
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    if (workspace != nullptr) aclrtFree(workspace);
}

TEST_F(HandleRace, AStreamDestroyedDuringALaunchOrSynchronizeNeitherHangsNorCrashes) {
    const std::vector<float> halves(1 << 14, 0.5f);
    const DeviceTensor self(halves, {1 << 14}), target(halves, {1 << 14}), out(halves, {1 << 14});
    const std::vector<uint8_t> unwritten = out.storage_bytes();
    for (int round = 0; round < kRounds / 4; ++round) {
        out.upload(unwritten);
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
                        status == ACL_ERROR_INVALID_RESOURCE_HANDLE)
                << status << " " << aclGetRecentErrMsg();
        // Work accepted on the stream ran to the end: its destroy waits, it drops nothing.
        ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << aclGetRecentErrMsg();
        if (!statuses.empty() && statuses.front() == ACL_SUCCESS) {
            const std::vector<float> written = out.storage();
            for (const float value : written) ASSERT_NEAR(value, 0.6931472f, 1e-6f) << "round " << round;
        }
    }
    ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << aclGetRecentErrMsg();
}

TEST_F(HandleRace, AContextThatWasNeverCreatedIsRefused) {
    for (const uintptr_t bogus : {uintptr_t{0x1}, uintptr_t{0x10}, uintptr_t{0x100000001}, ~uintptr_t{0}}) {
        EXPECT_EQ(aclrtDestroyContext(reinterpret_cast<aclrtContext>(bogus)), ACL_ERROR_INVALID_PARAM);
        EXPECT_NE(std::string(aclGetRecentErrMsg()).find("is not a context from aclrtCreateContext"),
                  std::string::npos);
        EXPECT_EQ(aclrtSetCurrentContext(reinterpret_cast<aclrtContext>(bogus)), ACL_ERROR_INVALID_PARAM);
    }
    aclrtContext context = nullptr, again = nullptr, current = nullptr;
    ASSERT_EQ(aclrtCreateContext(&context, 0), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateContext(&again, 0), ACL_SUCCESS);
    EXPECT_NE(context, again) << "two contexts share a handle";
    EXPECT_EQ(aclrtSetCurrentContext(context), ACL_SUCCESS);
    ASSERT_EQ(aclrtGetCurrentContext(&current), ACL_SUCCESS);
    EXPECT_EQ(current, context);
    EXPECT_EQ(aclrtDestroyContext(context), ACL_SUCCESS);
    // Destroyed once: refused by every call, as a handle never made.
    EXPECT_EQ(aclrtDestroyContext(context), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(std::string(aclGetRecentErrMsg()).find("destroyed already"), std::string::npos);
    EXPECT_EQ(aclrtSetCurrentContext(context), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclrtGetCurrentContext(&current), ACL_SUCCESS);
    EXPECT_NE(current, context) << "a destroyed context is still current";
    // The device's default context is current again, usable, and never destroyed.
    EXPECT_EQ(aclrtSetCurrentContext(current), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(current), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(std::string(aclGetRecentErrMsg()).find("default context"), std::string::npos);
    EXPECT_EQ(aclrtDestroyContext(again), ACL_SUCCESS);
}

}  // namespace
}  // namespace nnplug::test

namespace nnplug::test {
namespace {

// Slots of handles shared between threads: a thread may take a handle out and destroy it
// while another has just read it from the slot and is using it.
template <typename Handle>
class Slots {
public:
    Handle peek(size_t i) const { return slots_[i % kCount].load(); }
    Handle swap(size_t i, Handle handle) { return slots_[i % kCount].exchange(handle); }
    static constexpr size_t kCount = 4;

private:
    std::atomic<Handle> slots_[kCount] = {};
};

bool one_of(int status, std::initializer_list<int> allowed) {
    for (const int each : allowed)
        if (status == each) return true;
    return false;
}

// For a second or more, threads create and destroy tensors, executors, streams and contexts while
// others run first phases, runs and synchronizations on whatever the slots hold. Each call
// either succeeds or returns the error of a handle that is not live; nothing crashes,
// deadlocks or (under the sanitizers) touches freed memory.
TEST_F(HandleRace, EveryHandleCreatedAndDestroyedWhileCallsRunOnIt) {
    const std::vector<float> halves(1024, 0.5f);
    const DeviceTensor data(halves, {1024}), target(halves, {1024}), out(halves, {1024});
    const DeviceTensor sum_out(std::vector<float>{0.0f}, {});
    Slots<aclTensor*> tensors;
    Slots<aclOpExecutor*> executors;
    Slots<aclrtStream> streams;
    std::atomic<bool> stop{false};
    std::atomic<int> unexpected{0}, runs{0};
    std::string first_unexpected;
    std::mutex first_mutex;
    const auto expect = [&](int status, std::initializer_list<int> allowed, const char* call) {
        if (one_of(status, allowed)) return;
        if (unexpected++ == 0) {
            std::lock_guard lock(first_mutex);
            first_unexpected =
                std::string(call) + " returned " + std::to_string(status) + ": " + aclGetRecentErrMsg();
        }
    };
    const int64_t dims[] = {1024}, strides[] = {1};
    // One workspace for every run of the repeatable executors below (one runner uses it).
    uint64_t workspace_size = 0;
    aclOpExecutor* sizing = nullptr;
    ASSERT_EQ(
        aclnnBinaryCrossEntropyGetWorkspaceSize(data, target, nullptr, 2, sum_out, &workspace_size, &sizing),
        ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    aclDestroyAclOpExecutor(sizing);
    void* workspace_block = nullptr;
    if (workspace_size > 0) {
        ASSERT_EQ(aclrtMalloc(&workspace_block, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    }
    std::vector<std::thread> threads;
    // Tensors: made and destroyed by one thread, used by first phases on two others.
    threads.emplace_back([&] {
        aclrtSetDevice(0);
        for (size_t i = 0; !stop.load(); ++i) {
            aclTensor* made =
                aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 1, data.data());
            expect(aclDestroyTensor(tensors.swap(i, made)), {ACLNN_SUCCESS}, "aclDestroyTensor");
        }
    });
    for (int user = 0; user < 2; ++user)
        threads.emplace_back([&, user] {
            aclrtSetDevice(0);
            for (size_t i = user; !stop.load(); ++i) {
                aclTensor* self = tensors.peek(i);
                if (self == nullptr) continue;
                uint64_t workspace = 0;
                aclOpExecutor* executor = nullptr;
                const aclnnStatus status = aclnnBinaryCrossEntropyGetWorkspaceSize(
                    self, target, nullptr, 0, out, &workspace, &executor);
                expect(status, {ACLNN_SUCCESS, ACLNN_ERR_PARAM_INVALID}, "first phase");
                if (status == ACLNN_SUCCESS) aclDestroyAclOpExecutor(executor);
            }
        });
    // Repeatable executors: made and destroyed by one thread, run by another (the only
    // writer of sum_out) on its own stream.
    threads.emplace_back([&] {
        aclrtSetDevice(0);
        for (size_t i = 0; !stop.load(); ++i) {
            uint64_t workspace = 0;
            aclOpExecutor* executor = nullptr;
            if (aclnnBinaryCrossEntropyGetWorkspaceSize(data, target, nullptr, 2, sum_out, &workspace,
                                                        &executor) != ACLNN_SUCCESS)
                continue;
            if (workspace != workspace_size) {
                aclDestroyAclOpExecutor(executor);
                continue;  // not the size of the shared workspace
            }
            // The runner's handle may be stale and name this new executor (addresses are
            // reused): its run then consumes the executor before it is repeatable, and the
            // executor is gone. Only a repeatable one goes into the slots.
            if (aclSetAclOpExecutorRepeatable(executor) != ACLNN_SUCCESS) continue;
            if (aclOpExecutor* old = executors.swap(i, executor))
                expect(aclDestroyAclOpExecutor(old), {ACLNN_SUCCESS}, "aclDestroyAclOpExecutor");
        }
    });
    threads.emplace_back([&] {
        aclrtSetDevice(0);
        aclrtStream own = nullptr;
        if (aclrtCreateStream(&own) != ACL_SUCCESS) return;
        for (size_t i = 0; !stop.load(); ++i) {
            if (aclOpExecutor* executor = executors.peek(i)) {
                const aclnnStatus status =
                    aclnnBinaryCrossEntropy(workspace_block, workspace_size, executor, own);
                expect(status, {ACLNN_SUCCESS, ACLNN_ERR_PARAM_INVALID}, "second phase");
                runs += status == ACLNN_SUCCESS;
            }
            expect(aclrtSynchronizeStream(own), {ACL_SUCCESS}, "aclrtSynchronizeStream(own)");
        }
        aclrtDestroyStream(own);
    });
    // Streams and contexts: made and destroyed by one thread, synchronized by another.
    threads.emplace_back([&] {
        aclrtSetDevice(0);
        for (size_t i = 0; !stop.load(); ++i) {
            aclrtStream made = nullptr;
            expect(aclrtCreateStream(&made), {ACL_SUCCESS}, "aclrtCreateStream");
            if (aclrtStream old = streams.swap(i, made))
                expect(aclrtDestroyStream(old), {ACL_SUCCESS}, "aclrtDestroyStream");
            aclrtContext context = nullptr;
            expect(aclrtCreateContext(&context, 0), {ACL_SUCCESS}, "aclrtCreateContext");
            expect(aclrtSetCurrentContext(context), {ACL_SUCCESS}, "aclrtSetCurrentContext");
            expect(aclrtDestroyContext(context), {ACL_SUCCESS}, "aclrtDestroyContext");
        }
    });
    threads.emplace_back([&] {
        aclrtSetDevice(0);
        for (size_t i = 0; !stop.load(); ++i) {
            if (aclrtStream stream = streams.peek(i))
                expect(aclrtSynchronizeStream(stream), {ACL_SUCCESS, ACL_ERROR_INVALID_RESOURCE_HANDLE},
                       "aclrtSynchronizeStream");
            expect(aclrtSynchronizeDevice(), {ACL_SUCCESS}, "aclrtSynchronizeDevice");
        }
    });
    // A second at least, and on until some run got through (on a loaded machine the executors
    // may be destroyed under every run for a while): the race must have been run.
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::steady_clock::now() - start; };
    while (elapsed() < std::chrono::seconds(1) || (runs.load() == 0 && elapsed() < std::chrono::seconds(30)))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop = true;
    for (std::thread& thread : threads) thread.join();
    for (size_t i = 0; i < Slots<aclTensor*>::kCount; ++i) {
        aclDestroyTensor(tensors.swap(i, nullptr));
        if (aclOpExecutor* executor = executors.swap(i, nullptr)) aclDestroyAclOpExecutor(executor);
        if (aclrtStream stream = streams.swap(i, nullptr)) aclrtDestroyStream(stream);
    }
    EXPECT_EQ(unexpected.load(), 0) << first_unexpected;
    ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << aclGetRecentErrMsg();
    // Runs raced their executors' destruction and some got through; the last one's sum
    // is the right one.
    EXPECT_GT(runs.load(), 0);
    EXPECT_NEAR(sum_out.storage()[0], 1024 * 0.6931472, 1024 * 0.6931472 * 1e-5);
    if (workspace_block != nullptr) aclrtFree(workspace_block);
}

}  // namespace
}  // namespace nnplug::test
