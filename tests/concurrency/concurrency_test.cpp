// Many threads using one runtime at once: two-phase calls of every op from 8 threads,
// each on its own stream, give the bytes a single thread gets (cpu_tbb's calls are large
// enough to be split across its workers; atlas_emu's streams run them asynchronously),
// and aclFinalize returns promptly while other threads keep calling, which then get
// ACL_ERROR_UNINITIALIZE. Run once per backend, and under ThreadSanitizer in CI.
#include <acl/acl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "acl_test_support.h"
#include "op_catalog.h"

namespace nnplug::test {
namespace {

constexpr int kThreads = 8;
constexpr int64_t kRows = 64, kColumns = 512;  // 32768 elements: 32 tasks at cpu_tbb's grain 1024

std::string message() {
    return aclGetRecentErrMsg();
}

std::string backend() {
    const char* name = std::getenv("NNPLUG_BACKEND");
    return name != nullptr && *name != '\0' ? name : "cpu_tbb";
}

// The backend under test with its parallel paths taken even for small calls.
std::string config_for_backend() {
    return "backend: " + backend() +
           "\nbackends:\n  cpu_tbb:\n    grain: 1024\n  atlas_emu:\n    host_threads: 2\n";
}

class Concurrency : public RuntimeTest {
protected:
    std::string config_text() const override { return config_for_backend(); }
};

std::vector<float> values(size_t count, float first, float step, unsigned period) {
    std::vector<float> result(count);
    for (size_t i = 0; i < count; ++i) result[i] = first + step * static_cast<float>(i % period);
    return result;
}

// One op's inputs over [kRows, kColumns], with weight [kColumns] (and posWeight where the op
// has one) broadcast along the rows.
struct Inputs {
    const std::vector<int64_t> shape = {kRows, kColumns};
    const size_t count = kRows * kColumns;
    DeviceTensor grad{values(count, 0.25f, 0.001f, 613), shape};
    DeviceTensor self{values(count, 0.01f, 0.0009f, 1009), shape};
    DeviceTensor target{values(count, 0.0f, 0.01f, 101), shape};
    DeviceTensor weight{values(kColumns, 0.5f, 0.003f, 509), {kColumns}};
    DeviceTensor pos_weight{values(kColumns, 0.75f, 0.002f, 499), {kColumns}};

    std::vector<const aclTensor*> arguments(const OpUnderTest& op, const aclTensor* out) const {
        std::vector<const aclTensor*> tensors;
        for (const std::string& role : op.operands) {
            if (role == "gradOutput")
                tensors.push_back(grad);
            else if (role == "self")
                tensors.push_back(self);
            else if (role == "target")
                tensors.push_back(target);
            else if (role == "weight")
                tensors.push_back(weight);
            else if (role == "posWeight")
                tensors.push_back(pos_weight);
            else
                tensors.push_back(out);
        }
        return tensors;
    }
};

// The output of op at reduction: the input's shape for none and for the gradients, a scalar
// for a reduced forward.
std::unique_ptr<DeviceTensor> output_for(const OpUnderTest& op, int64_t reduction) {
    const bool gradient = op.operands.front() == "gradOutput";
    if (reduction != 0 && !gradient)
        return std::make_unique<DeviceTensor>(std::vector<float>{0.0f}, std::vector<int64_t>{});
    return std::make_unique<DeviceTensor>(std::vector<float>(kRows * kColumns, 0.0f),
                                          std::vector<int64_t>{kRows, kColumns});
}

TEST_F(Concurrency, EveryOpFromEightThreadsGivesTheBytesOfOneThread) {
    const Inputs inputs;
    struct Call {
        const OpUnderTest* op;
        int64_t reduction;
        std::vector<uint8_t> expected;
    };
    std::vector<Call> calls;
    for (const OpUnderTest& op : op_catalog())
        for (const int64_t reduction : {0, 1, 2}) {
            if (op.operands.front() == "gradOutput" && reduction != 0)
                continue;  // gradOutput [N, C] is for none
            const auto out = output_for(op, reduction);
            ASSERT_EQ(run_op(op, inputs.arguments(op, *out), call_attrs(op, reduction)), ACLNN_SUCCESS)
                << op.api << message();
            calls.push_back({&op, reduction, out->storage_bytes()});
        }

    std::atomic<int> mismatches{0}, failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            aclrtStream stream = nullptr;
            if (aclrtSetDevice(0) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS) {
                ++failures;
                return;
            }
            for (int round = 0; round < 3; ++round)
                for (size_t c = 0; c < calls.size(); ++c) {
                    const Call& call =
                        calls[(c + static_cast<size_t>(t)) % calls.size()];  // threads out of step
                    const auto out = output_for(*call.op, call.reduction);
                    if (run_op(*call.op, inputs.arguments(*call.op, *out),
                               call_attrs(*call.op, call.reduction), stream) != ACLNN_SUCCESS)
                        ++failures;
                    else if (out->storage_bytes() != call.expected)
                        ++mismatches;
                }
            aclrtDestroyStream(stream);
        });
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0) << message();
    EXPECT_EQ(mismatches.load(), 0) << "of " << size_t{kThreads} * 3 * calls.size() << " calls";
}

// Not a RuntimeTest: this one finalizes in the middle.
TEST(ConcurrentFinalize, ReturnsWithinASecondWhileEightThreadsCallTheRuntime) {
    TempFolder folder;
    const std::string config = folder.write("config.yaml", config_for_backend()).string();
    ASSERT_EQ(aclInit(config.c_str()), ACL_SUCCESS) << message();
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS) << message();

    // Each thread synchronizes and allocates until the runtime turns it away: the threads
    // only end (and the join below only returns) once every one has seen ACL_ERROR_UNINITIALIZE.
    std::atomic<int> started{0}, unexpected{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            aclrtSetDevice(0);
            ++started;
            for (;;) {
                const aclError synced = aclrtSynchronizeStream(nullptr);
                void* pointer = nullptr;
                const aclError allocated = aclrtMalloc(&pointer, 256, ACL_MEM_MALLOC_HUGE_FIRST);
                if (allocated == ACL_SUCCESS) aclrtFree(pointer);
                if (synced == ACL_ERROR_UNINITIALIZE || allocated == ACL_ERROR_UNINITIALIZE) break;
                if (synced != ACL_SUCCESS || allocated != ACL_SUCCESS) ++unexpected;
            }
        });
    while (started.load() < kThreads) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the readers pile up

    const auto begin = std::chrono::steady_clock::now();
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << message();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    for (std::thread& thread : threads) thread.join();
    EXPECT_LT(seconds, 1.0) << "aclFinalize took " << seconds << " s";
    EXPECT_EQ(unexpected.load(), 0) << message();
}

}  // namespace
}  // namespace nnplug::test
