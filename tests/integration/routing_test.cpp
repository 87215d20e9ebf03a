// Per-op routing: an op listed under `ops:` runs on its own backend while the others stay
// on `backend`; a backend that lacks the op, refuses the call or did not load hands the
// call to `fallback`, or fails it with the reason under `fallback: none`; memory of one
// backend is never handed to a backend with a separate memory space. The "constant" fake
// plugin writes 42 to every element of out, which tells where a call ran.
#include <acl/acl.h>
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::ScopedEnvironment;
using nnplug::test::TempFolder;

std::string message() {
    return aclGetRecentErrMsg();
}

// Four float32 elements of device memory behind a 1-d tensor.
class Buffer {
public:
    explicit Buffer(const std::vector<float>& values) {
        const size_t bytes = values.size() * sizeof(float);
        EXPECT_EQ(aclrtMalloc(&data_, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) << message();
        EXPECT_EQ(aclrtMemcpy(data_, bytes, values.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        const int64_t dims[] = {static_cast<int64_t>(values.size())};
        const int64_t strides[] = {1};
        tensor_ = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 1, data_);
        size_ = values.size();
    }
    ~Buffer() {
        aclDestroyTensor(tensor_);
        aclrtFree(data_);
    }
    aclTensor* tensor() const { return tensor_; }
    std::vector<float> values() const {
        std::vector<float> host(size_);
        EXPECT_EQ(aclrtMemcpy(host.data(), size_ * sizeof(float), data_, size_ * sizeof(float),
                              ACL_MEMCPY_DEVICE_TO_HOST),
                  ACL_SUCCESS);
        return host;
    }

private:
    void* data_ = nullptr;
    aclTensor* tensor_ = nullptr;
    size_t size_ = 0;
};

// The first phase, then the second on stream; the first failing status.
aclnnStatus forward(const Buffer& self, const Buffer& target, int64_t reduction, const Buffer& out,
                    aclrtStream stream = nullptr) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status = aclnnBinaryCrossEntropyGetWorkspaceSize(
        self.tensor(), target.tensor(), nullptr, reduction, out.tensor(), &workspace_size, &executor);
    if (status != ACLNN_SUCCESS) return status;
    void* workspace = nullptr;
    if (workspace_size > 0) {
        EXPECT_EQ(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    }
    status = aclnnBinaryCrossEntropy(workspace, workspace_size, executor, stream);
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << message();
    if (workspace != nullptr) aclrtFree(workspace);
    return status;
}

aclnnStatus backward(const Buffer& grad, const Buffer& self, const Buffer& target, const Buffer& out) {
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status = aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
        grad.tensor(), self.tensor(), target.tensor(), nullptr, 0, out.tensor(), &workspace_size, &executor);
    if (status != ACLNN_SUCCESS) return status;
    EXPECT_EQ(workspace_size, 0u);
    status = aclnnBinaryCrossEntropyBackward(nullptr, 0, executor, nullptr);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS) << message();
    return status;
}

const std::vector<float> kSelf = {0.25f, 0.5f, 0.75f, 0.9f};
const std::vector<float> kTarget = {0.0f, 1.0f, 1.0f, 0.0f};
const std::vector<float> kMarked(4, 42.0f);

class Routing : public ::testing::Test {
protected:
    // Starts the runtime on config (the fake plugins' folder on the search path).
    aclError init(const std::string& config) {
        const aclError status = aclInit(folder_.write("config.yaml", config).c_str());
        initialized_ = status == ACL_SUCCESS;
        return status;
    }
    void TearDown() override {
        if (initialized_) {
            EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << message();
        }
    }
    // The per-element forward loss cpu_tbb computes, for comparison.
    static std::vector<float> reference_loss() {
        std::vector<float> loss;
        for (size_t i = 0; i < kSelf.size(); ++i)
            loss.push_back(kTarget[i] == 1.0f ? -std::log(kSelf[i]) : -std::log(1.0f - kSelf[i]));
        return loss;
    }

    ScopedEnvironment path_{"NNPLUG_PLUGIN_PATH", NNPLUG_FAKE_PLUGIN_DIR};
    ScopedEnvironment backend_{"NNPLUG_BACKEND", nullptr};
    TempFolder folder_;
    bool initialized_ = false;
};

void expect_near(const std::vector<float>& actual, const std::vector<float>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-6f) << "element " << i;
}

TEST_F(Routing, ARoutedOpRunsOnItsBackendAndTheOthersStayOnTheDeviceBackend) {
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\n"), ACL_SUCCESS)
        << message();
    Buffer self(kSelf), target(kTarget), out(std::vector<float>(4, 0.0f)), grad(std::vector<float>(4, 1.0f)),
        gradient(std::vector<float>(4, 0.0f));
    ASSERT_EQ(forward(self, target, 0, out), ACLNN_SUCCESS) << message();
    EXPECT_EQ(out.values(), kMarked);
    ASSERT_EQ(backward(grad, self, target, gradient), ACLNN_SUCCESS) << message();
    const auto values = gradient.values();
    EXPECT_NEAR(values[0], 1.0f / 0.75f, 1e-5f) << "the backward ran on cpu_tbb";
}

TEST_F(Routing, ARoutedOpRunsInStreamOrderOnACreatedStream) {
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\n"), ACL_SUCCESS)
        << message();
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    Buffer self(kSelf), target(kTarget), out(std::vector<float>(4, 0.0f));
    for (int run = 0; run < 3; ++run) {
        ASSERT_EQ(forward(self, target, 0, out, stream), ACLNN_SUCCESS) << message();
        EXPECT_EQ(out.values(), kMarked);
    }
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

TEST_F(Routing, ARefusedCallFailsWithTheRefusalWhenThereIsNoFallback) {
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\nfallback: none\n"),
              ACL_SUCCESS)
        << message();
    Buffer self(kSelf), target(kTarget), out(std::vector<float>(1, -1.0f));
    EXPECT_EQ(forward(self, target, 1, out), ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(message(), "aclnnBinaryCrossEntropy: the constant backend only runs reduction none");
    EXPECT_EQ(out.values(), std::vector<float>(1, -1.0f)) << "nothing written";
}

TEST_F(Routing, ARefusedCallGoesToTheFallback) {
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\nfallback: cpu_tbb\n"),
              ACL_SUCCESS)
        << message();
    Buffer self(kSelf), target(kTarget), sum(std::vector<float>(1, 0.0f)), each(std::vector<float>(4, 0.0f));
    ASSERT_EQ(forward(self, target, 2, sum), ACLNN_SUCCESS) << message();
    float expected = 0.0f;
    for (float value : reference_loss()) expected += value;
    EXPECT_NEAR(sum.values()[0], expected, 1e-5f);
    ASSERT_EQ(forward(self, target, 0, each), ACLNN_SUCCESS) << message();
    EXPECT_EQ(each.values(), kMarked) << "a call the routed backend accepts still runs there";
}

TEST_F(Routing, AnOpTheRoutedBackendLacksFailsOrFallsBack) {
    const std::string routes = "backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropyBackward: constant\n";
    {
        ASSERT_EQ(init(routes), ACL_SUCCESS) << message();
        Buffer grad(std::vector<float>(4, 1.0f)), self(kSelf), target(kTarget),
            out(std::vector<float>(4, 0.0f));
        EXPECT_EQ(backward(grad, self, target, out), ACLNN_ERR_PARAM_INVALID);
        EXPECT_EQ(message(),
                  "aclnnBinaryCrossEntropyBackward: backend 'constant' does not implement this op");
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    }
    ASSERT_EQ(init(routes + "fallback: cpu_tbb\n"), ACL_SUCCESS) << message();
    Buffer grad(std::vector<float>(4, 1.0f)), self(kSelf), target(kTarget), out(std::vector<float>(4, 0.0f));
    ASSERT_EQ(backward(grad, self, target, out), ACLNN_SUCCESS) << message();
    EXPECT_NEAR(out.values()[1], -1.0f / 0.5f, 1e-5f);
}

TEST_F(Routing, ABackendThatDoesNotLoadLeavesTheOthersWorking) {
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: missing\n"
                   "  aclnnBinaryCrossEntropyBackward: constant\n"),
              ACL_SUCCESS)
        << message();
    Buffer self(kSelf), target(kTarget), out(std::vector<float>(4, 0.0f));
    EXPECT_EQ(forward(self, target, 0, out), ACLNN_ERR_RUNTIME_ERROR);
    EXPECT_NE(
        message().find("aclnnBinaryCrossEntropy: backend 'missing' is not available: backend 'missing' not "
                       "found"),
        std::string::npos)
        << message();
    EXPECT_EQ(message().find('\n'), std::string::npos) << message();
}

// A routed plugin that is no plugin at all, or one of another ABI, is reported with its
// path and reason, and the routed backend next to it keeps working.
TEST_F(Routing, ABrokenRoutedPluginIsReportedAndTheOthersKeepWorking) {
    folder_.write("libnnplug_text.so", "this is not an ELF file\n");
    const std::string fakes = NNPLUG_FAKE_PLUGIN_DIR;
    const std::vector<std::pair<std::string, std::string>> broken = {
        {"noentry", "'" + fakes +
                        "/libnnplug_noentry.so' is not an nnplug plugin: it does not export "
                        "'nnplug_plugin_entry'"},
        {"oldabi", "'" + fakes +
                       "/libnnplug_oldabi.so' was built for plugin ABI version 1, this runtime speaks "
                       "version 2"},
        {"./libnnplug_text.so", "is not a loadable plugin"},
    };
    for (const auto& [reference, reason] : broken) {
        SCOPED_TRACE(reference);
        ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\n"
                       "  aclnnBinaryCrossEntropyBackward: " +
                       reference + "\n"),
                  ACL_SUCCESS)
            << message();
        Buffer grad(std::vector<float>(4, 1.0f)), self(kSelf), target(kTarget),
            out(std::vector<float>(4, 0.0f));
        EXPECT_EQ(backward(grad, self, target, out), ACLNN_ERR_RUNTIME_ERROR);
        EXPECT_EQ(message().rfind("aclnnBinaryCrossEntropyBackward: backend '", 0), 0u) << message();
        EXPECT_NE(message().find("' is not available: "), std::string::npos) << message();
        EXPECT_NE(message().find(reason), std::string::npos) << message();
        EXPECT_EQ(message().find('\n'), std::string::npos) << message();
        Buffer marked(std::vector<float>(4, 0.0f));
        ASSERT_EQ(forward(self, target, 0, marked), ACLNN_SUCCESS) << message();
        EXPECT_EQ(marked.values(), kMarked);
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
        initialized_ = false;
    }
}

TEST_F(Routing, ABackendWhoseCreateFailsIsReportedAndFallenBackFrom) {
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\nfallback: cpu_tbb\n"
                   "backends:\n  constant: {fail: true}\n"),
              ACL_SUCCESS)
        << message();
    Buffer self(kSelf), target(kTarget), out(std::vector<float>(4, 0.0f));
    ASSERT_EQ(forward(self, target, 0, out), ACLNN_SUCCESS) << message();
    expect_near(out.values(), reference_loss());
}

TEST_F(Routing, TwoPluginsWithOneNameAreRefused) {
    // A second copy of the constant plugin, in a folder of its own.
    const auto copy = folder_.path() / "copy";
    std::filesystem::create_directories(copy);
    std::filesystem::permissions(copy, std::filesystem::perms::owner_all);
    std::filesystem::copy_file(std::string(NNPLUG_FAKE_PLUGIN_DIR) + "/libnnplug_constant.so",
                               copy / "libnnplug_constant.so");
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\n"
                   "  aclnnBinaryCrossEntropyBackward: copy/libnnplug_constant.so\n"),
              ACL_SUCCESS)
        << message();
    Buffer grad(std::vector<float>(4, 1.0f)), self(kSelf), target(kTarget), out(std::vector<float>(4, 0.0f));
    EXPECT_EQ(backward(grad, self, target, out), ACLNN_ERR_RUNTIME_ERROR);
    EXPECT_NE(message().find("it is named 'constant', like the plugin '" +
                             std::string(NNPLUG_FAKE_PLUGIN_DIR) + "/libnnplug_constant.so' already loaded"),
              std::string::npos)
        << message();
    Buffer marked(std::vector<float>(4, 0.0f));
    ASSERT_EQ(forward(self, target, 0, marked), ACLNN_SUCCESS) << message();
    EXPECT_EQ(marked.values(), kMarked);
}

TEST_F(Routing, MemoryOfADeviceWithItsOwnMemoryIsNeverHandedToAnotherBackend) {
    ASSERT_EQ(init("backend: atlas_emu\nops:\n  aclnnBinaryCrossEntropy: constant\nfallback: atlas_emu\n"),
              ACL_SUCCESS)
        << message();
    Buffer self(kSelf), target(kTarget), out(std::vector<float>(4, -1.0f));
    EXPECT_EQ(forward(self, target, 0, out), ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(message(),
              "aclnnBinaryCrossEntropy: routed to backend 'constant', but the tensors are memory of "
              "backend 'atlas_emu', and atlas_emu keeps its own device memory; an op runs on another "
              "backend only when both use host memory");
    EXPECT_EQ(out.values(), std::vector<float>(4, -1.0f));
}

TEST_F(Routing, RoutedCallsFromSeveralThreadsEachGetTheirResult) {
    ASSERT_EQ(init("backend: cpu_tbb\nops:\n  aclnnBinaryCrossEntropy: constant\nfallback: cpu_tbb\n"),
              ACL_SUCCESS)
        << message();
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            aclrtSetDevice(0);
            aclrtStream stream = nullptr;
            if (aclrtCreateStream(&stream) != ACL_SUCCESS) ++wrong;
            Buffer self(kSelf), target(kTarget), out(std::vector<float>(4, 0.0f)),
                sum(std::vector<float>(1, 0.0f));
            for (int run = 0; run < 50; ++run) {
                // Even threads run on the routed backend, odd ones fall back to cpu_tbb.
                if (t % 2 == 0) {
                    if (forward(self, target, 0, out, stream) != ACLNN_SUCCESS || out.values() != kMarked)
                        ++wrong;
                } else if (forward(self, target, 2, sum, stream) != ACLNN_SUCCESS || sum.values()[0] < 1.0f) {
                    ++wrong;
                }
            }
            aclrtDestroyStream(stream);
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(wrong.load(), 0);
}

TEST(RoutingConfig, AnUnknownOpNameIsAParseErrorWithASuggestion) {
    TempFolder folder;
    const auto file = folder.write("config.yaml", "ops:\n  aclnnBinaryCrossEntropyBackwards: cpu_tbb\n");
    ASSERT_EQ(aclInit(file.c_str()), ACL_ERROR_PARSE_FILE);
    EXPECT_EQ(message(),
              "aclInit: " + file.string() +
                  ":2:3: key 'ops' names 'aclnnBinaryCrossEntropyBackwards', which is not an op of this "
                  "runtime (did you mean 'aclnnBinaryCrossEntropyBackward'?)");
}

TEST(RoutingConfig, AnEmptyFallbackIsAParseError) {
    TempFolder folder;
    const auto file = folder.write("config.yaml", "fallback: ''\n");
    ASSERT_EQ(aclInit(file.c_str()), ACL_ERROR_PARSE_FILE);
    EXPECT_NE(message().find("key 'fallback' is empty; name a backend, or none"), std::string::npos)
        << message();
}

}  // namespace
