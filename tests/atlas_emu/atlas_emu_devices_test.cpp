// Several devices in one process, as on an Ascend server: atlas_emu with `devices: N`.
// The current device is per host thread; memory, streams and executors belong to the
// device current when they were made, and using one of them while another device is
// current is refused with a message, never silently done. Each device computes on its
// own memory.
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;

std::string message() {
    return aclGetRecentErrMsg();
}
bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

class FourDevices : public nnplug::test::RuntimeTest {
protected:
    std::string config_text() const override {
        return "backend: atlas_emu\nbackends:\n  atlas_emu:\n    devices: 4\n    memory_mib: 64\n";
    }
};

TEST_F(FourDevices, CountAndIdsFollowTheConfig) {
    uint32_t count = 0;
    ASSERT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS) << message();
    EXPECT_EQ(count, 4u);
    EXPECT_EQ(aclrtSetDevice(3), ACL_SUCCESS) << message();
    EXPECT_EQ(aclrtSetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_TRUE(mentions(message(),
                         "aclrtSetDevice: device 4 does not exist; backend 'atlas_emu' drives 4 device(s)"))
        << message();
    EXPECT_EQ(aclrtResetDevice(3), ACL_SUCCESS) << message();
}

TEST_F(FourDevices, TheCurrentDeviceIsPerHostThread) {
    ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
    int32_t other = -1;
    std::thread([&] { aclrtGetDevice(&other); }).join();
    EXPECT_EQ(other, 0) << "a new thread starts on device 0";
    int32_t mine = -1;
    ASSERT_EQ(aclrtGetDevice(&mine), ACL_SUCCESS);
    EXPECT_EQ(mine, 2);
    aclrtContext context = nullptr;
    ASSERT_EQ(aclrtCreateContext(&context, 1), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetCurrentContext(context), ACL_SUCCESS);
    ASSERT_EQ(aclrtGetDevice(&mine), ACL_SUCCESS);
    EXPECT_EQ(mine, 1);
}

TEST_F(FourDevices, EachDeviceHasItsOwnMemoryCapacity) {
    std::vector<void*> blocks(4, nullptr);
    for (int32_t device = 0; device < 4; ++device) {
        ASSERT_EQ(aclrtSetDevice(device), ACL_SUCCESS);
        ASSERT_EQ(aclrtMalloc(&blocks[device], size_t{48} << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS)
            << "device " << device << ": " << message();
    }
    for (int32_t device = 0; device < 4; ++device) {
        ASSERT_EQ(aclrtSetDevice(device), ACL_SUCCESS);
        EXPECT_EQ(aclrtFree(blocks[device]), ACL_SUCCESS) << message();
    }
}

TEST_F(FourDevices, MemoryOfAnotherDeviceIsRefused) {
    void* block = nullptr;
    ASSERT_EQ(aclrtMalloc(&block, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::vector<float> host(16, 1.0f);
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(block, 64, host.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "aclrtMemcpy: dst ")) << message();
    EXPECT_TRUE(mentions(message(), "is memory of device 0, but device 1 is current")) << message();
    EXPECT_EQ(aclrtMemcpy(host.data(), 64, block, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "aclrtMemcpy: src ")) << message();
    EXPECT_EQ(aclrtMemset(block, 64, 0, 64), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(block), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "aclrtFree: devPtr")) << message();
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(block), ACL_SUCCESS) << message();
}

TEST_F(FourDevices, StreamsBelongToTheirDevice) {
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    EXPECT_TRUE(mentions(message(), "belongs to device 0, but device 2 is current")) << message();
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS) << "destroying is allowed from any device";
}

TEST_F(FourDevices, TensorsAndExecutorsOfAnotherDeviceAreRefused) {
    const std::vector<int64_t> shape = {8};
    DeviceTensor grad(std::vector<float>(8, 1.0f), shape), self(std::vector<float>(8, 0.25f), shape);
    DeviceTensor target(std::vector<float>(8, 1.0f), shape), out(std::vector<float>(8, 0.0f), shape);
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(grad, self, target, nullptr, 0, out, &workspace,
                                                              &executor),
              ACLNN_SUCCESS)
        << message();
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclnnBinaryCrossEntropyBackward(nullptr, workspace, executor, nullptr),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(mentions(message(), "executor was made on device 0, but device 1 is current")) << message();
    aclOpExecutor* refused = nullptr;
    EXPECT_EQ(aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(grad, self, target, nullptr, 0, out, &workspace,
                                                              &refused),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(mentions(message(), "aclnnBinaryCrossEntropyBackward: gradOutput data")) << message();
    EXPECT_TRUE(mentions(message(), "is memory of device 0, but device 1 is current")) << message();
    EXPECT_EQ(refused, nullptr);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclnnBinaryCrossEntropyBackward(nullptr, workspace, executor, nullptr), ACLNN_SUCCESS)
        << message();
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS) << message();
    // (0.25 - 1) / (0.25 * 0.75) = -4
    EXPECT_EQ(out.storage(), std::vector<float>(8, -4.0f));
}

// One host thread per device, each computing on its own memory at the same time.
TEST_F(FourDevices, EveryDeviceComputesFromItsOwnThread) {
    std::vector<std::vector<float>> results(4);
    std::vector<std::string> errors(4);
    std::vector<std::thread> threads;
    for (int32_t device = 0; device < 4; ++device) {
        threads.emplace_back([&, device] {
            if (aclrtSetDevice(device) != ACL_SUCCESS) {
                errors[device] = message();
                return;
            }
            const std::vector<int64_t> shape = {1000};
            const float s = 0.1f * static_cast<float>(device + 1);
            DeviceTensor grad(std::vector<float>(1000, 1.0f), shape),
                self(std::vector<float>(1000, s), shape);
            DeviceTensor target(std::vector<float>(1000, 0.0f), shape),
                out(std::vector<float>(1000, 0.0f), shape);
            if (nnplug::test::run_backward(grad, self, target, nullptr, 0, out) != ACLNN_SUCCESS) {
                errors[device] = message();
                return;
            }
            results[device] = out.storage();
        });
    }
    for (auto& thread : threads) thread.join();
    for (int32_t device = 0; device < 4; ++device) {
        ASSERT_TRUE(errors[device].empty()) << "device " << device << ": " << errors[device];
        const float s = 0.1f * static_cast<float>(device + 1);
        EXPECT_EQ(results[device], std::vector<float>(1000, s / (s * (1.0f - s)))) << "device " << device;
    }
}

// Each device traces to its own file: trace.json for device 0, trace.dev<N>.json after.
TEST(DeviceTraces, EveryDeviceWritesItsOwnTraceFile) {
    nnplug::test::TempFolder folder;
    const std::string trace = (folder.path() / "trace.json").string();
    nnplug::test::ScopedEnvironment tracing("NNPLUG_TRACE", trace.c_str());
    nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
    const auto config = folder.write(
        "config.yaml", "backend: atlas_emu\nbackends:\n  atlas_emu:\n    devices: 2\n    memory_mib: 64\n");
    ASSERT_EQ(aclInit(config.c_str()), ACL_SUCCESS) << message();
    for (int32_t device = 0; device < 2; ++device) {
        ASSERT_EQ(aclrtSetDevice(device), ACL_SUCCESS);
        const std::vector<int64_t> shape = {64};
        DeviceTensor grad(std::vector<float>(64, 1.0f), shape), self(std::vector<float>(64, 0.5f), shape);
        DeviceTensor target(std::vector<float>(64, 1.0f), shape), out(std::vector<float>(64, 0.0f), shape);
        ASSERT_EQ(nnplug::test::run_backward(grad, self, target, nullptr, 0, out), ACLNN_SUCCESS)
            << message();
    }
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    for (const char* name : {"trace.json", "trace.dev1.json"}) {
        std::ifstream file(folder.path() / name);
        ASSERT_TRUE(file) << name << " was not written";
        const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        EXPECT_TRUE(mentions(text, "aclnnBinaryCrossEntropyBackward")) << name;
    }
}

TEST(ShippedServerConfig, EmulatesEightAscend910BDevices) {
    ASSERT_EQ(aclInit(NNPLUG_CONFIG_DIR "/atlas_emu_910b_x8.yaml"), ACL_SUCCESS) << message();
    uint32_t count = 0;
    EXPECT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    EXPECT_EQ(count, 8u);
    EXPECT_STREQ(aclrtGetSocName(), "Ascend910B");
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(CpuBackend, DrivesOneDevice) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << message();
    uint32_t count = 0;
    EXPECT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

}  // namespace
