// The runtime calls: init/finalize order, devices, streams, memory and copies.
#include <acl/acl.h>
#include <gtest/gtest.h>

#include <vector>

#include "acl_test_support.h"

namespace {

std::string message() {
    return aclGetRecentErrMsg();
}

TEST(RuntimeLifecycle, CallsBeforeInitAreRefused) {
    void* pointer = nullptr;
    EXPECT_EQ(aclrtMalloc(&pointer, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE);
    EXPECT_NE(message().find("aclInit has not been called"), std::string::npos) << message();
    EXPECT_EQ(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
}

// A config value holding a newline and an escape sequence comes back in the message with
// those bytes as \xNN: one line, no terminal control.
TEST(RuntimeLifecycle, ControlBytesFromAConfigAreEscapedInTheMessage) {
    nnplug::test::TempFolder folder;
    const auto config = folder.write("config.yaml", "log_level: \"de\\e[2J\\nbug\"\n");
    EXPECT_EQ(aclInit(config.c_str()), ACL_ERROR_PARSE_FILE);
    const std::string message = aclGetRecentErrMsg();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
    EXPECT_NE(message.find("has value 'de\\x1b[2J\\x0abug'"), std::string::npos) << message;
}

TEST(RuntimeLifecycle, SecondInitIsRepeatInitialize) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << message();
    EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_NE(message().find("already initialized"), std::string::npos);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << "init again after finalize works";
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

class RuntimeCalls : public nnplug::test::RuntimeTest {};

TEST_F(RuntimeCalls, DevicesExistAsCounted) {
    uint32_t count = 0;
    ASSERT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    int32_t device = -1;
    EXPECT_EQ(aclrtGetDevice(&device), ACL_SUCCESS);
    EXPECT_EQ(device, 0);
    aclrtContext context = nullptr;
    ASSERT_EQ(aclrtCreateContext(&context, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetCurrentContext(context), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(context), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
}

TEST_F(RuntimeCalls, CopiesRoundTripAndRespectDestMax) {
    std::vector<float> host = {1, 2, 3, 4}, back(4, 0);
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(device, 16, host.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(back.data(), 8, device, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("exceeds destMax"), std::string::npos) << message();
    EXPECT_EQ(back, std::vector<float>(4, 0)) << "nothing copied";
    ASSERT_EQ(aclrtMemcpy(back.data(), 16, device, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(back, host);
    EXPECT_EQ(aclrtMemcpy(back.data(), 16, device, 16, static_cast<aclrtMemcpyKind>(7)),
              ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclrtMemset(device, 16, 0, 16), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(back.data(), 16, device, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(back, std::vector<float>(4, 0));
    EXPECT_EQ(aclrtMemset(device, 8, 0, 16), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(device), ACL_SUCCESS);
}

TEST_F(RuntimeCalls, FreeingTwiceOrForeignPointersIsAnError) {
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(device), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(device), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(message().find("aclrtFree"), std::string::npos) << message();
    int local = 0;
    EXPECT_EQ(aclrtFree(&local), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMalloc(&device, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
}

TEST_F(RuntimeCalls, HostMemoryIsTracked) {
    void* host = nullptr;
    ASSERT_EQ(aclrtMallocHost(&host, 100), ACL_SUCCESS);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 64, 0u);
    EXPECT_EQ(aclrtFreeHost(host), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(host), ACL_ERROR_INVALID_PARAM);
}

TEST_F(RuntimeCalls, StreamsAreCreatedSynchronizedAndDestroyed) {
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS) << "the default stream";
    std::vector<float> host = {1, 2}, back(2, 0);
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(device, 8, host.data(), 8, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(back.data(), 8, device, 8, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    EXPECT_EQ(back, host);
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_RESOURCE_HANDLE);
    aclrtFree(device);
}

TEST_F(RuntimeCalls, FinalizeReleasesWhatTheProgramForgot) {
    // Leaked buffers, streams and executors are freed by aclFinalize (checked under valgrind).
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 1024, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    void* host = nullptr;
    ASSERT_EQ(aclrtMallocHost(&host, 64), ACL_SUCCESS);
}

}  // namespace
