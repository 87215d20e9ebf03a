// Misuse a careless or hostile caller can try: sizes that wrap, outputs that overlap
// their inputs or themselves, tensors used after aclDestroyTensor, enum arguments out of
// range. Each is refused with a status and a message, and nothing is written; the
// aliasing the ops do allow (an output that is exactly an input's view) gives the same
// result as a separate output. Run once per backend.
#include <acl/acl.h>
#include <aclnnop/aclnn_mse_loss.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "acl_test_support.h"
#include "op_catalog.h"

namespace nnplug::test {
namespace {

std::string message() {
    return aclGetRecentErrMsg();
}

class Misuse : public RuntimeTest {};

// A second aclTensor over another tensor's device memory; destroyed with the object.
class View {
public:
    View(void* data, const std::vector<int64_t>& view, const std::vector<int64_t>& strides, int64_t offset,
         const std::vector<int64_t>& storage, aclDataType dtype = ACL_FLOAT)
        : tensor_(aclCreateTensor(view.data(), view.size(), dtype, strides.data(), offset, ACL_FORMAT_ND,
                                  storage.data(), storage.size(), data)) {}
    ~View() { aclDestroyTensor(tensor_); }
    View(const View&) = delete;
    View& operator=(const View&) = delete;
    aclTensor* get() const { return tensor_; }

private:
    aclTensor* tensor_;
};

std::vector<float> ramp(size_t count, float first, float step) {
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = first + step * static_cast<float>(i % 97);
    return values;
}

// Every op's tensors for reduction none over one shape (weights absent), with the
// output replaced by `out`.
std::vector<const aclTensor*> arguments(const OpUnderTest& op, const DeviceTensor& grad,
                                        const DeviceTensor& self, const DeviceTensor& target,
                                        const aclTensor* out) {
    std::vector<const aclTensor*> tensors;
    for (const std::string& role : op.operands) {
        if (role == "gradOutput")
            tensors.push_back(grad);
        else if (role == "self")
            tensors.push_back(self);
        else if (role == "target")
            tensors.push_back(target);
        else if (role == op.output)
            tensors.push_back(out);
        else
            tensors.push_back(nullptr);  // weight, posWeight
    }
    return tensors;
}

TEST_F(Misuse, AllocationSizesThatWouldWrapAreRefused) {
    for (const size_t bytes : {SIZE_MAX, SIZE_MAX - 10, SIZE_MAX / 2 + 1, size_t{1} << 60}) {
        void* pointer = nullptr;
        EXPECT_EQ(aclrtMalloc(&pointer, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_BAD_ALLOC) << bytes;
        EXPECT_NE(message().find("aclrtMalloc: size"), std::string::npos) << message();
        EXPECT_EQ(pointer, nullptr);
        EXPECT_EQ(aclrtMallocHost(&pointer, bytes), ACL_ERROR_BAD_ALLOC) << bytes;
        EXPECT_NE(message().find("aclrtMallocHost: size"), std::string::npos) << message();
        EXPECT_EQ(pointer, nullptr);
    }
}

TEST_F(Misuse, OutOfRangeEnumArgumentsAreRefused) {
    void* pointer = nullptr;
    EXPECT_EQ(aclrtMalloc(&pointer, 64, static_cast<aclrtMemMallocPolicy>(99)), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("policy 99"), std::string::npos) << message();
    ASSERT_EQ(aclrtMalloc(&pointer, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::vector<uint8_t> host(64, 7);
    EXPECT_EQ(aclrtMemcpy(pointer, 64, host.data(), 64, static_cast<aclrtMemcpyKind>(-3)),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("kind -3"), std::string::npos) << message();
    const int64_t dims[] = {4, 4}, strides[] = {4, 1};
    EXPECT_EQ(
        aclCreateTensor(dims, 2, static_cast<aclDataType>(1000), strides, 0, ACL_FORMAT_ND, dims, 2, pointer),
        nullptr);
    EXPECT_NE(message().find("dataType 1000"), std::string::npos) << message();
    EXPECT_EQ(aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, static_cast<aclFormat>(77), dims, 2, pointer),
              nullptr);
    EXPECT_NE(message().find("format 77"), std::string::npos) << message();
    EXPECT_EQ(aclrtFree(pointer), ACL_SUCCESS);
}

// Device memory is host memory on cpu_tbb, so only its block list stops a memset or copy
// from running into the neighbouring blocks: every backend refuses it, nothing is written.
TEST_F(Misuse, MemsetOrCopyPastAnAllocationIsRefusedAndNothingWritten) {
    void* block = nullptr;
    void* neighbour = nullptr;
    ASSERT_EQ(aclrtMalloc(&block, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&neighbour, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(neighbour, 64, 0x5a, 64), ACL_SUCCESS);
    std::vector<uint8_t> host(4096, 0x11);

    EXPECT_EQ(aclrtMemset(block, 4096, 0, 4096), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(std::string(aclGetRecentErrMsg()).find("aclrtMemset") == 0) << aclGetRecentErrMsg();
    // A 64-byte request is a 96-byte block (CANN's padding: a multiple of 32, plus 32).
    EXPECT_EQ(aclrtMemset(static_cast<char*>(block) + 64, 64, 0, 33), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(block, 4096, host.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(std::string(aclGetRecentErrMsg()).find("aclrtMemcpy: dst ") == 0) << aclGetRecentErrMsg();
    EXPECT_EQ(aclrtMemcpy(host.data(), 4096, block, 4096, ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(std::string(aclGetRecentErrMsg()).find("aclrtMemcpy: src ") == 0) << aclGetRecentErrMsg();
    EXPECT_EQ(aclrtMemcpy(neighbour, 97, block, 97, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpyAsync(block, 4096, host.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemset(host.data(), 64, 0, 64), ACL_ERROR_INVALID_PARAM) << "not an aclrtMalloc block";
    EXPECT_EQ(host, std::vector<uint8_t>(4096, 0x11));

    // What fits is done, the padding included, which aclrtMalloc zeroed; the neighbour was never
    // touched.
    EXPECT_EQ(aclrtMemcpy(host.data(), 96, block, 96, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(std::vector<uint8_t>(host.begin() + 64, host.begin() + 96), std::vector<uint8_t>(32, 0));
    EXPECT_EQ(aclrtMemset(static_cast<char*>(block) + 64, 32, 0, 32), ACL_SUCCESS) << aclGetRecentErrMsg();
    EXPECT_EQ(aclrtMemcpy(host.data(), 64, neighbour, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(std::vector<uint8_t>(host.begin(), host.begin() + 64), std::vector<uint8_t>(64, 0x5a));
    EXPECT_EQ(aclrtFree(block), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(neighbour), ACL_SUCCESS);
}

// A workspace or a tensor that starts in an aclrtMalloc block and runs past its end is
// refused by the runtime, on every backend, naming the operand and both sizes, and nothing
// is written: cpu_tbb took a 64-byte block as a larger workspace (SIGSEGV) and as a 16 KiB
// out (heap corruption), atlas_emu refused both in its own words.
TEST_F(Misuse, AWorkspaceOrTensorPastItsBlockIsRefusedAndNothingWritten) {
    constexpr int64_t kCount = 4096;
    DeviceTensor self(ramp(kCount, 0.1f, 0.008f), {kCount}), target(ramp(kCount, 0.2f, 0.005f), {kCount});
    void* block = nullptr;
    void* neighbour = nullptr;
    ASSERT_EQ(aclrtMalloc(&block, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&neighbour, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(neighbour, 64, 0x5a, 64), ACL_SUCCESS);
    const std::vector<int64_t> shape = {kCount}, strides = {1};
    aclTensor* big_out =
        aclCreateTensor(shape.data(), 1, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(), 1, block);
    ASSERT_NE(big_out, nullptr) << message();
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnMseLossGetWorkspaceSize(self, target, 0, big_out, &workspace, &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(message().find("aclnnMseLoss: out of 16384 bytes at "), std::string::npos) << message();
    EXPECT_NE(message().find(" runs past the end of its 64-byte aclrtMalloc block (96 bytes from "),
              std::string::npos)
        << message();
    aclDestroyTensor(big_out);

    // A workspace is checked for the size the caller gives, whatever the backend asked for.
    DeviceTensor out(std::vector<float>{7.0f}, {});
    ASSERT_EQ(aclnnMseLossGetWorkspaceSize(self, target, 1, out, &workspace, &executor), ACLNN_SUCCESS)
        << message();
    const uint64_t claimed = std::max<uint64_t>(workspace, 512);
    EXPECT_EQ(aclnnMseLoss(block, claimed, executor, nullptr), ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(message().find("aclnnMseLoss: workspace of " + std::to_string(claimed) + " bytes at "),
              std::string::npos)
        << message();
    EXPECT_NE(message().find("runs past the end of its 64-byte aclrtMalloc block"), std::string::npos)
        << message();
    aclDestroyAclOpExecutor(executor);  // refused before it ran: still live
    EXPECT_EQ(out.storage(), std::vector<float>{7.0f}) << "out was written";
    std::vector<uint8_t> host(64);
    EXPECT_EQ(aclrtMemcpy(host.data(), 64, neighbour, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(host, std::vector<uint8_t>(64, 0x5a)) << "the neighbouring block was written";
    EXPECT_EQ(aclrtFree(block), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(neighbour), ACL_SUCCESS);
}

// Stream handles never repeat in a process, across aclFinalize and aclInit too: atlas_emu
// handed out a new stream at an old one's address, so a stale handle synchronized or
// destroyed the new stream. A stale one is refused by name; the new one is untouched.
TEST_F(Misuse, AStreamHandleIsNeverGivenOutTwice) {
    std::set<aclrtStream> seen;
    aclrtStream stale = nullptr;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 50; ++i) {
            aclrtStream stream = nullptr;
            ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS) << message();
            EXPECT_TRUE(seen.insert(stream).second) << "stream " << stream << " given out twice";
            ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS) << message();
            stale = stream;
        }
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS) << message();
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << message();
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS) << message();
    }
    aclrtStream fresh = nullptr;
    ASSERT_EQ(aclrtCreateStream(&fresh), ACL_SUCCESS) << message();
    EXPECT_EQ(seen.count(fresh), 0u);
    EXPECT_EQ(aclrtSynchronizeStream(stale), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    EXPECT_NE(message().find("was not created by aclrtCreateStream or is destroyed"), std::string::npos)
        << message();
    EXPECT_EQ(aclrtDestroyStream(stale), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    EXPECT_EQ(aclrtSynchronizeStream(fresh), ACL_SUCCESS) << message();
    EXPECT_EQ(aclrtDestroyStream(fresh), ACL_SUCCESS) << message();
}

// The mean squared error of self and target through aclnnMseLoss on the default stream, or
// NaN when a call fails (its message on stderr).
float mse_mean(const DeviceTensor& self, const DeviceTensor& target) {
    DeviceTensor out(std::vector<float>{0.0f}, {});
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    void* workspace = nullptr;
    if (aclnnMseLossGetWorkspaceSize(self, target, 1, out, &workspace_size, &executor) != ACLNN_SUCCESS ||
        (workspace_size > 0 &&
         aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) ||
        aclnnMseLoss(workspace, workspace_size, executor, nullptr) != ACLNN_SUCCESS ||
        aclrtSynchronizeStream(nullptr) != ACL_SUCCESS) {
        std::fprintf(stderr, "%s\n", aclGetRecentErrMsg());
        return std::nanf("");
    }
    if (workspace != nullptr) aclrtFree(workspace);
    return out.storage()[0];
}

// After aclInit and an op, an op in a child of fork() fails at once saying to call aclInit
// again (atlas_emu's child waited forever for stream threads it does not have); after
// aclInit in the child it computes, and aclFinalize there ends only the child's runtime.
TEST_F(Misuse, AForkedChildIsToldToInitializeAgainAndThenComputes) {
    const std::vector<float> a = {1, 2, 3, 4}, b = {2, 2, 2, 2};
    {
        DeviceTensor self(a, {4}), target(b, {4});
        ASSERT_FLOAT_EQ(mse_mean(self, target), 1.5f) << message();
    }
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child == 0) {
        int failures = 0;
        const auto expect = [&](bool ok, const char* what) {
            if (!ok) std::fprintf(stderr, "child: %s: %s\n", what, aclGetRecentErrMsg());
            failures += ok ? 0 : 1;
        };
        void* memory = nullptr;
        expect(aclrtMalloc(&memory, 64, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_ERROR_UNINITIALIZE,
               "malloc refused");
        expect(std::string(aclGetRecentErrMsg())
                       .find("this is a child of it made by fork(); call aclInit again "
                             "in the child") != std::string::npos,
               "the message says why");
        expect(aclrtSynchronizeStream(nullptr) == ACL_ERROR_UNINITIALIZE, "synchronize refused");
        expect(aclInit(nullptr) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS, "aclInit in the child");
        {
            DeviceTensor self(a, {4}), target(b, {4});
            expect(mse_mean(self, target) == 1.5f, "the op computes");
        }
        expect(aclFinalize() == ACL_SUCCESS, "aclFinalize in the child");
        std::fflush(nullptr);
        _exit(failures);
    }
    ASSERT_GT(child, 0);
    int status = 0;
    for (int waited = 0; waited < 2000 && waitpid(child, &status, WNOHANG) == 0; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (kill(child, 0) == 0 && waitpid(child, &status, WNOHANG) == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        FAIL() << "the forked child hung";
    }
    ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0) << "failed checks in the child (on stderr)";
    // The parent's runtime is untouched.
    DeviceTensor self(a, {4}), target(b, {4});
    EXPECT_FLOAT_EQ(mse_mean(self, target), 1.5f) << message();
}

TEST_F(Misuse, DestroyedTensorIsReportedNotRead) {
    const std::vector<int64_t> shape = {3, 5};
    DeviceTensor grad(ramp(15, 1.0f, 0.0f), shape), self(ramp(15, 0.1f, 0.01f), shape),
        target(ramp(15, 0.0f, 0.01f), shape), out(std::vector<float>(15, 0.0f), shape);
    View doomed(self.data(), shape, {5, 1}, 0, shape);
    aclTensor* stale = doomed.get();
    ASSERT_EQ(aclDestroyTensor(stale), ACLNN_SUCCESS);
    EXPECT_EQ(aclDestroyTensor(stale), ACLNN_ERR_PARAM_INVALID) << "destroyed twice";
    EXPECT_NE(message().find("aclDestroyTensor"), std::string::npos) << message();
    EXPECT_NE(message().find("not a live tensor"), std::string::npos) << message();
    EXPECT_EQ(aclDestroyTensor(nullptr), ACLNN_SUCCESS) << "like free(nullptr)";

    int64_t* dims = nullptr;
    uint64_t count = 0;
    EXPECT_NE(aclGetViewShape(stale, &dims, &count), ACLNN_SUCCESS);
    for (const OpUnderTest& op : op_catalog()) {
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(op.first_phase(arguments(op, grad, self, target, stale), call_attrs(op, 0), &workspace,
                                 &executor),
                  ACLNN_ERR_PARAM_INVALID)
            << op.api;
        EXPECT_NE(message().find(op.output + " is not a live tensor"), std::string::npos) << message();
        EXPECT_EQ(executor, nullptr);
    }
    // The View's destructor destroys it a third time: refused again, harmlessly.
}

TEST_F(Misuse, OutputExactlyAnInputsViewGivesTheSameResultAsASeparateOutput) {
    // Contiguous [6, 7], and the transposed view [7, 6] of the same storage.
    struct Layout {
        std::vector<int64_t> view, strides;
    };
    const std::vector<int64_t> storage = {6, 7};
    for (const Layout& layout : {Layout{{6, 7}, {7, 1}}, Layout{{7, 6}, {1, 7}}}) {
        for (const OpUnderTest& op : op_catalog()) {
            for (const std::string aliased : {"gradOutput", "self", "target"}) {
                const bool has_role =
                    std::find(op.operands.begin(), op.operands.end(), aliased) != op.operands.end();
                if (!has_role) continue;
                SCOPED_TRACE(op.api + std::string(", out is ") + aliased + ", view " +
                             std::to_string(layout.view[0]) + "x" + std::to_string(layout.view[1]));
                auto make = [&](const std::vector<float>& values) {
                    return std::make_unique<DeviceTensor>(values, storage, layout.view, layout.strides, 0,
                                                          ACL_FLOAT);
                };
                auto grad = make(ramp(42, 0.5f, 0.02f)), self = make(ramp(42, 0.05f, 0.009f)),
                     target = make(ramp(42, 0.0f, 0.01f)), separate = make(std::vector<float>(42, 0.0f));
                ASSERT_EQ(run_op(op, arguments(op, *grad, *self, *target, *separate), call_attrs(op, 0)),
                          ACLNN_SUCCESS)
                    << message();
                const DeviceTensor& input = aliased == "gradOutput" ? *grad
                                            : aliased == "self"     ? *self
                                                                    : *target;
                View out(input.data(), layout.view, layout.strides, 0, storage);
                ASSERT_NE(out.get(), nullptr) << message();
                ASSERT_EQ(run_op(op, arguments(op, *grad, *self, *target, out.get()), call_attrs(op, 0)),
                          ACLNN_SUCCESS)
                    << message();
                EXPECT_EQ(input.storage_bytes(), separate->storage_bytes());
            }
        }
    }
}

TEST_F(Misuse, OutputPartlyOverlappingAnInputIsRefusedAndNothingWritten) {
    const std::vector<int64_t> shape = {6, 6};
    DeviceTensor grad(ramp(36, 1.0f, 0.0f), shape),
        self(ramp(36, 0.05f, 0.009f), {6, 7}, shape, {7, 1}, 1, ACL_FLOAT),
        target(ramp(36, 0.0f, 0.01f), shape);
    struct Overlap {
        const char* what;
        std::vector<int64_t> strides;
        int64_t offset;
    };
    // self is [6, 6] at offset 1 in a [6, 7] storage.
    for (const Overlap& overlap : {Overlap{"transposed", {1, 7}, 1}, Overlap{"shifted by one", {7, 1}, 0},
                                   Overlap{"other row pitch", {6, 1}, 1}}) {
        SCOPED_TRACE(overlap.what);
        View out(self.data(), shape, overlap.strides, overlap.offset, {6, 7});
        ASSERT_NE(out.get(), nullptr) << message();
        const std::vector<uint8_t> before = self.storage_bytes();
        for (const OpUnderTest& op : op_catalog()) {
            uint64_t workspace = 0;
            aclOpExecutor* executor = nullptr;
            EXPECT_EQ(op.first_phase(arguments(op, grad, self, target, out.get()), call_attrs(op, 0),
                                     &workspace, &executor),
                      ACLNN_ERR_PARAM_INVALID)
                << op.api;
            EXPECT_NE(message().find(op.output + " and self share memory but are not the same view"),
                      std::string::npos)
                << message();
        }
        EXPECT_EQ(self.storage_bytes(), before);
    }
}

TEST_F(Misuse, OutputOverlappingItselfIsRefused) {
    const std::vector<int64_t> shape = {4, 5};
    DeviceTensor grad(ramp(20, 1.0f, 0.0f), shape), self(ramp(20, 0.05f, 0.009f), shape),
        target(ramp(20, 0.0f, 0.01f), shape), storage(std::vector<float>(20, 0.0f), shape);
    for (const std::vector<int64_t>& strides :
         std::vector<std::vector<int64_t>>{{0, 1}, {1, 1}, {5, 0}, {3, 1}}) {
        View out(storage.data(), shape, strides, 0, shape);
        ASSERT_NE(out.get(), nullptr) << message();
        for (const OpUnderTest& op : op_catalog()) {
            uint64_t workspace = 0;
            aclOpExecutor* executor = nullptr;
            EXPECT_EQ(op.first_phase(arguments(op, grad, self, target, out.get()), call_attrs(op, 0),
                                     &workspace, &executor),
                      ACLNN_ERR_PARAM_INVALID)
                << op.api << " strides " << strides[0] << "," << strides[1];
            EXPECT_NE(message().find("an output must not overlap itself"), std::string::npos) << message();
        }
    }
    // A stride 0 along a dimension of size 1 reaches one element per index: allowed.
    DeviceTensor one_row(std::vector<float>(5, 0.0f), {1, 5});
    DeviceTensor grad1(ramp(5, 1.0f, 0.0f), {1, 5}), self1(ramp(5, 0.1f, 0.1f), {1, 5}),
        target1(ramp(5, 0.0f, 0.2f), {1, 5});
    View out(one_row.data(), {1, 5}, {0, 1}, 0, {1, 5});
    EXPECT_EQ(run_backward(grad1, self1, target1, nullptr, 0, out.get()), ACLNN_SUCCESS) << message();
}

}  // namespace
}  // namespace nnplug::test
