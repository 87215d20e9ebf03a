// atlas_emu as a device: memory arena, copy kinds, host pointers in tensors, the
// SoC dtype rule, kernel faults surfacing at synchronize, asynchronous streams,
// per-launch statistics and the Chrome trace.
#include <acl/acl.h>
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nnplug/ops/binary_cross_entropy_math.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;
using nnplug::test::ScopedEnvironment;
using nnplug::test::TempFolder;

std::string message() {
    return aclGetRecentErrMsg();
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string emu_config(const std::string& options) {
    return "backend: atlas_emu\nbackends:\n  atlas_emu:\n" + options;
}

class AtlasEmuTest : public nnplug::test::RuntimeTest {
protected:
    std::string config_text() const override { return emu_config(options()); }
    virtual std::string options() const { return "    soc: Ascend910B\n"; }
};

// --- device memory ---------------------------------------------------------------

class SmallDeviceMemory : public AtlasEmuTest {
    std::string options() const override { return "    soc: Ascend910B\n    memory_mib: 64\n"; }
};

TEST_F(SmallDeviceMemory, RunningOutIsMemoryAllocationErrorAndFreeingGivesItBack) {
    void* too_big = nullptr;
    EXPECT_EQ(aclrtMalloc(&too_big, size_t{100} << 20, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_RT_MEMORY_ALLOCATION);
    // 100 MiB padded as CANN pads a block: 32 bytes more.
    EXPECT_TRUE(mentions(message(), "aclrtMalloc: cannot allocate 104857632 bytes of device memory"))
        << message();
    void* first = nullptr;
    void* second = nullptr;
    ASSERT_EQ(aclrtMalloc(&first, size_t{40} << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) << message();
    EXPECT_EQ(aclrtMalloc(&second, size_t{40} << 20, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_TRUE(mentions(message(), "of 67108864 bytes are free")) << message();
    ASSERT_EQ(aclrtFree(first), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&second, size_t{40} << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) << message();
    EXPECT_EQ(aclrtFree(second), ACL_SUCCESS);
}

TEST_F(AtlasEmuTest, AllocationsAreAlignedAndDisjoint) {
    std::vector<void*> blocks;
    const std::vector<size_t> sizes = {1, 31, 32, 33, 500, 4096, 100000};
    for (size_t size : sizes) {
        void* block = nullptr;
        ASSERT_EQ(aclrtMalloc(&block, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) << message();
        EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 512, 0u) << "size " << size;
        blocks.push_back(block);
    }
    for (size_t i = 0; i < blocks.size(); ++i)
        for (size_t j = 0; j < blocks.size(); ++j) {
            if (i == j) continue;
            const auto a = reinterpret_cast<uintptr_t>(blocks[i]), b = reinterpret_cast<uintptr_t>(blocks[j]);
            EXPECT_TRUE(a + sizes[i] + 32 <= b || b + sizes[j] + 32 <= a) << i << " and " << j << " overlap";
        }
    for (void* block : blocks) EXPECT_EQ(aclrtFree(block), ACL_SUCCESS);
}

TEST_F(AtlasEmuTest, DoubleFreeAndFreeingHostMemoryAreErrors) {
    void* block = nullptr;
    ASSERT_EQ(aclrtMalloc(&block, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtFree(block), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(block), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "aclrtFree: ")) << message();
    EXPECT_TRUE(mentions(message(), "double free")) << message();
    std::vector<float> host(16);
    EXPECT_EQ(aclrtFree(host.data()), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "is host memory, not device memory from aclrtMalloc")) << message();
}

TEST_F(AtlasEmuTest, CopiesCheckEachSideAgainstTheKind) {
    std::vector<float> host(8, 1.0f), back(8, 0.0f);
    void* device = nullptr;
    ASSERT_EQ(aclrtMalloc(&device, 32, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    // Pointers swapped: the classic mistake.
    EXPECT_EQ(aclrtMemcpy(host.data(), 32, device, 32, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "aclrtMemcpy: dst ")) << message();
    EXPECT_TRUE(mentions(message(), "is host memory, yet kind ACL_MEMCPY_HOST_TO_DEVICE needs device memory"))
        << message();
    EXPECT_EQ(aclrtMemcpy(device, 32, host.data(), 32, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "is device memory, yet kind ACL_MEMCPY_DEVICE_TO_HOST needs host memory"))
        << message();
    EXPECT_EQ(aclrtMemcpy(back.data(), 32, device, 32, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(back.data(), 32, host.data(), 32, ACL_MEMCPY_DEVICE_TO_DEVICE),
              ACL_ERROR_INVALID_PARAM);
    // Running past the block is caught too.
    std::vector<float> large(64);
    EXPECT_EQ(aclrtMemcpy(device, 256, large.data(), 256, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "are not inside one live aclrtMalloc block")) << message();
    EXPECT_EQ(aclrtMemcpyAsync(host.data(), 32, device, 32, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "aclrtMemcpyAsync: dst ")) << message();
    EXPECT_EQ(aclrtMemset(host.data(), 32, 0, 32), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "aclrtMemset: ")) << message();
    EXPECT_EQ(back, std::vector<float>(8, 0.0f)) << "nothing was copied";
    // The right kinds work.
    ASSERT_EQ(aclrtMemcpy(device, 32, host.data(), 32, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS) << message();
    ASSERT_EQ(aclrtMemcpy(back.data(), 32, device, 32, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS) << message();
    EXPECT_EQ(back, host);
    EXPECT_EQ(aclrtFree(device), ACL_SUCCESS);
}

// --- first-phase refusals ----------------------------------------------------------

TEST_F(AtlasEmuTest, HostPointerInATensorIsRefusedAtTheFirstPhase) {
    std::vector<float> host_self(6, 0.3f);
    const std::vector<int64_t> shape = {2, 3}, strides = {3, 1};
    aclTensor* self = aclCreateTensor(shape.data(), 2, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND,
                                      shape.data(), 2, host_self.data());
    ASSERT_NE(self, nullptr);
    DeviceTensor grad(std::vector<float>(6, 1.0f), shape), target(std::vector<float>(6, 0.5f), shape);
    DeviceTensor out(std::vector<float>(6, 0.0f), shape);
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(grad, self, target, nullptr, 0, out, &workspace,
                                                              &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(mentions(message(), "aclnnBinaryCrossEntropyBackward: self data")) << message();
    EXPECT_TRUE(mentions(message(),
                         "is host memory, not device memory: allocate it with aclrtMalloc and copy the "
                         "data in with aclrtMemcpy"))
        << message();
    aclDestroyTensor(self);
}

TEST_F(AtlasEmuTest, FreedDeviceMemoryInATensorIsRefused) {
    const std::vector<int64_t> shape = {4}, strides = {1};
    DeviceTensor self(std::vector<float>(4, 0.3f), shape), target(std::vector<float>(4, 0.5f), shape);
    void* freed = nullptr;
    ASSERT_EQ(aclrtMalloc(&freed, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtFree(freed), ACL_SUCCESS);
    aclTensor* out =
        aclCreateTensor(shape.data(), 1, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(), 1, freed);
    ASSERT_NE(out, nullptr) << message();
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 0, out, &workspace, &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(mentions(message(), "out data")) << message();
    EXPECT_TRUE(mentions(message(), "is not inside one live aclrtMalloc block")) << message();
    aclDestroyTensor(out);
}

TEST_F(AtlasEmuTest, HostWorkspaceIsRefusedAtTheSecondPhase) {
    DeviceTensor self(std::vector<float>(100, 0.3f), {100}), target(std::vector<float>(100, 0.5f), {100});
    DeviceTensor out(std::vector<float>{0.0f}, {});
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    ASSERT_EQ(aclnnBinaryCrossEntropyGetWorkspaceSize(self, target, nullptr, 1, out, &workspace, &executor),
              ACLNN_SUCCESS);
    ASSERT_GT(workspace, 0u) << "a reduction keeps its per-core partials in the workspace";
    std::vector<uint8_t> host(workspace);
    EXPECT_EQ(aclnnBinaryCrossEntropy(host.data(), workspace, executor, nullptr), ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(mentions(message(), "aclnnBinaryCrossEntropy: workspace ")) << message();
    EXPECT_TRUE(mentions(message(),
                         "is not " + std::to_string(workspace) + " bytes of device memory from aclrtMalloc"))
        << message();
    aclDestroyAclOpExecutor(executor);
}

struct SocCase {
    const char* soc;
    bool bfloat16;
};

class SocDtypeRule : public nnplug::test::RuntimeTest, public ::testing::WithParamInterface<SocCase> {
protected:
    std::string config_text() const override {
        return emu_config(std::string("    soc: ") + GetParam().soc + "\n");
    }
};

TEST_P(SocDtypeRule, Bfloat16IsRefusedAtTheFirstPhaseWhereTheSocLacksIt) {
    EXPECT_STREQ(aclrtGetSocName(), GetParam().soc);
    const std::vector<float> values = {0.25f, 0.5f, 0.75f, 0.125f};
    DeviceTensor grad(values, {4}, ACL_BF16), self(values, {4}, ACL_BF16), target(values, {4}, ACL_BF16);
    DeviceTensor out(std::vector<float>(4, 0.0f), {4}, ACL_BF16);
    const aclnnStatus status = nnplug::test::run_backward(grad, self, target, nullptr, 0, out);
    if (GetParam().bfloat16) {
        EXPECT_EQ(status, ACLNN_SUCCESS) << message();
    } else {
        EXPECT_EQ(status, ACLNN_ERR_PARAM_INVALID);
        EXPECT_TRUE(mentions(message(), std::string("which SoC ") + GetParam().soc + " does not support"))
            << message();
        EXPECT_TRUE(mentions(message(), "bfloat16")) << message();
    }
    // float16 runs everywhere.
    DeviceTensor g16(values, {4}, ACL_FLOAT16), s16(values, {4}, ACL_FLOAT16), t16(values, {4}, ACL_FLOAT16);
    DeviceTensor o16(std::vector<float>(4, 0.0f), {4}, ACL_FLOAT16);
    ASSERT_EQ(nnplug::test::run_backward(g16, s16, t16, nullptr, 0, o16), ACLNN_SUCCESS) << message();
    EXPECT_EQ(o16.storage()[1], 0.0f) << "self == target gives a zero gradient";
}

INSTANTIATE_TEST_SUITE_P(Socs, SocDtypeRule,
                         ::testing::Values(SocCase{"Ascend910", false}, SocCase{"Ascend910B", true},
                                           SocCase{"Ascend310P", false}),
                         [](const auto& info) { return std::string(info.param.soc); });

TEST(AtlasEmuOptions, BadOptionsAreRefusedAtInit) {
    TempFolder folder;
    EXPECT_EQ(aclInit(folder.write("a.yaml", emu_config("    soc: Ascend920\n")).c_str()),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(),
                         "option soc = 'Ascend920' is not an emulated SoC; choose one of Ascend910 "
                         "Ascend910B Ascend310P"))
        << message();
    EXPECT_EQ(aclInit(folder.write("b.yaml", emu_config("    ub_kib: lots\n")).c_str()),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(mentions(message(), "option ub_kib = 'lots' is not a whole number")) << message();
    EXPECT_EQ(aclInit(folder.write("c.yaml", emu_config("    tile_element: 64\n")).c_str()),
              ACL_ERROR_PARSE_FILE);
    EXPECT_TRUE(mentions(message(), "did you mean 'tile_elements'")) << message();
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE) << "nothing was initialized";
}

// --- kernel faults surface at synchronize ------------------------------------------

struct Problem {
    std::vector<float> grad, self, target;
};

Problem random_problem(int64_t count, uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> probability(0.01f, 0.99f), grad(-1.0f, 1.0f);
    Problem p;
    for (int64_t i = 0; i < count; ++i) {
        p.grad.push_back(grad(generator));
        p.self.push_back(probability(generator));
        p.target.push_back(probability(generator));
    }
    return p;
}

float expected_backward(const Problem& p, size_t i) {
    return nnplug::bce_backward(p.grad[i], 1.0f, p.self[i], p.target[i], 1.0f);
}

// Launches a backward without synchronizing; returns the second phase's status.
aclnnStatus launch_backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                            aclTensor* out, aclrtStream stream) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(grad, self, target, nullptr, 0,
                                                                              out, &workspace, &executor);
    if (first != ACLNN_SUCCESS) return first;
    EXPECT_EQ(workspace, 0u) << "contiguous operands need no staging";
    return aclnnBinaryCrossEntropyBackward(nullptr, 0, executor, stream);
}

class OversizedTiles : public AtlasEmuTest {
    std::string options() const override { return "    soc: Ascend910B\n    tile_elements: 100000\n"; }
};

TEST_F(OversizedTiles, UnifiedBufferOverflowIsAKernelErrorAtSynchronize) {
    const Problem p = random_problem(1000, 1);
    DeviceTensor g(p.grad, {1000}), s(p.self, {1000}), t(p.target, {1000}),
        out(std::vector<float>(1000), {1000});
    ASSERT_EQ(launch_backward(g, s, t, out, nullptr), ACLNN_SUCCESS)
        << "the launch only enqueues: " << message();
    ASSERT_EQ(launch_backward(g, s, t, out, nullptr), ACLNN_SUCCESS) << message();
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_ERROR_RT_FAILURE);
    // float32 backward without weight: 2 slots x (3 inputs + out) x 4 bytes per element.
    EXPECT_TRUE(mentions(message(),
                         "aclrtSynchronizeStream: aclnnBinaryCrossEntropyBackward: kernel used 3200000 "
                         "bytes of Unified Buffer, Ascend910B has 196608"))
        << message();
    EXPECT_TRUE(mentions(message(), "1 later task(s) on this stream were skipped")) << message();
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS) << "the error is reported once";
}

class MisalignedTiles : public AtlasEmuTest {
    // 100 float32 elements are 400 bytes: the second slot starts off the 32-byte grid.
    std::string options() const override {
        return "    soc: Ascend910B\n    vector_cores: 1\n    tile_elements: 100\n";
    }
};

TEST_F(MisalignedTiles, UnalignedDataCopyIsAKernelErrorAtSynchronize) {
    const Problem p = random_problem(1000, 2);
    DeviceTensor g(p.grad, {1000}), s(p.self, {1000}), t(p.target, {1000}),
        out(std::vector<float>(1000), {1000});
    ASSERT_EQ(launch_backward(g, s, t, out, nullptr), ACLNN_SUCCESS) << message();
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_ERROR_RT_FAILURE);
    EXPECT_TRUE(mentions(message(),
                         "aclnnBinaryCrossEntropyBackward: DataCopy copy-in at Unified Buffer offset 400 "
                         "is not 32-byte aligned (core 0)"))
        << message();
}

class CheckedInputs : public AtlasEmuTest {
    std::string options() const override { return "    soc: Ascend910B\n    check_inputs: true\n"; }
};

TEST_F(CheckedInputs, SelfOutsideTheUnitIntervalIsReportedAtSynchronize) {
    std::vector<float> self(300, 0.5f);
    self[200] = 1.5f;
    self[250] = -0.5f;
    DeviceTensor s(self, {300}), t(std::vector<float>(300, 0.5f), {300}), out(std::vector<float>{0.0f}, {});
    EXPECT_EQ(nnplug::test::run_forward(s, t, nullptr, 2, out), ACLNN_ERR_RUNTIME_ERROR);
    EXPECT_TRUE(mentions(message(), "aclnnBinaryCrossEntropy: self element 200 is 1.500000, outside [0, 1]"))
        << message();
}

// --- streams ---------------------------------------------------------------------

// A backward over device buffers the test fills itself, run on one stream.
struct StreamJob {
    explicit StreamJob(int64_t count, uint32_t seed)
        : problem(random_problem(count, seed)), result(count, -1.0f) {
        const size_t bytes = static_cast<size_t>(count) * sizeof(float);
        for (void** buffer : {&grad, &self, &target, &out})
            EXPECT_EQ(aclrtMalloc(buffer, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        const std::vector<int64_t> shape = {count}, strides = {1};
        const auto tensor = [&](void* data) {
            return aclCreateTensor(shape.data(), 1, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape.data(),
                                   1, data);
        };
        tg = tensor(grad);
        ts = tensor(self);
        tt = tensor(target);
        to = tensor(out);
    }
    ~StreamJob() {
        for (aclTensor* t : {tg, ts, tt, to}) aclDestroyTensor(t);
        for (void* buffer : {grad, self, target, out}) aclrtFree(buffer);
    }
    // Copy in, compute, copy out: all enqueued on stream, in that order.
    void enqueue(aclrtStream stream) {
        const size_t bytes = problem.self.size() * sizeof(float);
        ASSERT_EQ(
            aclrtMemcpyAsync(grad, bytes, problem.grad.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_SUCCESS);
        ASSERT_EQ(
            aclrtMemcpyAsync(self, bytes, problem.self.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_SUCCESS);
        ASSERT_EQ(
            aclrtMemcpyAsync(target, bytes, problem.target.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_SUCCESS);
        ASSERT_EQ(launch_backward(tg, ts, tt, to, stream), ACLNN_SUCCESS) << message();
        ASSERT_EQ(aclrtMemcpyAsync(result.data(), bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream),
                  ACL_SUCCESS);
    }
    size_t mismatches() const {
        size_t wrong = 0;
        for (size_t i = 0; i < result.size(); ++i) wrong += result[i] != expected_backward(problem, i);
        return wrong;
    }
    Problem problem;
    std::vector<float> result;
    void *grad = nullptr, *self = nullptr, *target = nullptr, *out = nullptr;
    aclTensor *tg = nullptr, *ts = nullptr, *tt = nullptr, *to = nullptr;
};

TEST_F(AtlasEmuTest, StreamsRunCopiesAndKernelsInOrderAndConcurrently) {
    constexpr int kStreams = 3;
    std::vector<aclrtStream> streams(kStreams);
    for (auto& stream : streams) ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    std::vector<std::unique_ptr<StreamJob>> jobs;
    for (int i = 0; i < 2 * kStreams; ++i)
        jobs.push_back(std::make_unique<StreamJob>(300000 + 7 * i, 10 + i));
    for (int i = 0; i < 2 * kStreams; ++i) jobs[i]->enqueue(streams[i % kStreams]);
    for (auto& stream : streams) EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << message();
    for (int i = 0; i < 2 * kStreams; ++i) EXPECT_EQ(jobs[i]->mismatches(), 0u) << "job " << i;
    for (auto& stream : streams) EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

TEST_F(AtlasEmuTest, DestroyingAStreamWaitsForItsPendingWork) {
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    StreamJob job(2000000, 99);
    job.enqueue(stream);
    ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS) << message();
    EXPECT_EQ(job.mismatches(), 0u) << "the copy back had finished when destroy returned";
}

// --- statistics and trace ------------------------------------------------------------

TEST(AtlasEmuObservability, DebugLevelPrintsPerLaunchStatistics) {
    ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
    ScopedEnvironment debug("NNPLUG_LOG_LEVEL", "debug");
    TempFolder folder;
    ASSERT_EQ(aclInit(folder.write("c.yaml", emu_config("    soc: Ascend910\n")).c_str()), ACL_SUCCESS)
        << message();
    {
        const Problem p = random_problem(100000, 3);
        DeviceTensor g(p.grad, {100000}), s(p.self, {100000}), t(p.target, {100000});
        DeviceTensor out(std::vector<float>(100000), {100000});
        ::testing::internal::CaptureStderr();
        const aclnnStatus status = nnplug::test::run_backward(g, s, t, nullptr, 0, out);
        const std::string printed = ::testing::internal::GetCapturedStderr();
        ASSERT_EQ(status, ACLNN_SUCCESS) << message();
        // 100000 elements in 64-element blocks over 32 cores: 3136 elements per core.
        EXPECT_TRUE(mentions(printed,
                             "[debug] atlas_emu: aclnnBinaryCrossEntropyBackward on Ascend910 stream 1: "
                             "blockDim 32, 1 tile(s) per core of 3136 elements, UB 100352 of 262144 bytes"))
            << printed;
        EXPECT_TRUE(mentions(printed, "moved 1600000 bytes, estimated device time 1.333 us at 1200.0 GB/s"))
            << printed;
    }
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(AtlasEmuObservability, TheConfigsTopLevelLogLevelReachesThePlugin) {
    ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
    ScopedEnvironment no_level("NNPLUG_LOG_LEVEL", nullptr);
    TempFolder folder;
    ASSERT_EQ(
        aclInit(folder.write("c.yaml", "log_level: debug\n" + emu_config("    soc: Ascend910B\n")).c_str()),
        ACL_SUCCESS)
        << message();
    {
        DeviceTensor g(std::vector<float>(64, 0.1f), {64}), s(std::vector<float>(64, 0.3f), {64});
        DeviceTensor t(std::vector<float>(64, 0.5f), {64}), out(std::vector<float>(64), {64});
        ::testing::internal::CaptureStderr();
        const aclnnStatus status = nnplug::test::run_backward(g, s, t, nullptr, 0, out);
        const std::string printed = ::testing::internal::GetCapturedStderr();
        ASSERT_EQ(status, ACLNN_SUCCESS) << message();
        EXPECT_TRUE(mentions(printed, "[debug] atlas_emu: aclnnBinaryCrossEntropyBackward on Ascend910B"))
            << printed;
    }
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(AtlasEmuObservability, TraceIsChromeTraceEventJson) {
    ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
    TempFolder folder;
    const std::string trace = (folder.path() / "trace.json").string();
    ScopedEnvironment tracing("NNPLUG_TRACE", trace.c_str());
    ASSERT_EQ(aclInit(folder.write("c.yaml", emu_config("    soc: Ascend910B\n")).c_str()), ACL_SUCCESS)
        << message();
    {
        aclrtStream stream = nullptr;
        ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
        StreamJob job(100000, 5);
        job.enqueue(stream);
        ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << message();
        EXPECT_EQ(job.mismatches(), 0u);
        // A broadcast gradOutput is first made contiguous by its own kernel.
        DeviceTensor g(std::vector<float>{0.5f}, {}), s(job.problem.self, {100000}),
            t(job.problem.target, {100000});
        DeviceTensor out(std::vector<float>(100000), {100000});
        ASSERT_EQ(nnplug::test::run_backward(g, s, t, nullptr, 1, out), ACLNN_SUCCESS) << message();
        EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    }
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    // JSON is YAML 1.2's flow style: yaml-cpp parses the file as the structure Perfetto reads.
    YAML::Node parsed;
    ASSERT_NO_THROW(parsed = YAML::LoadFile(trace)) << "not valid JSON: " << trace;
    ASSERT_TRUE(parsed["traceEvents"].IsSequence()) << trace;
    EXPECT_GT(parsed["traceEvents"].size(), 10u);
    for (const auto& event : parsed["traceEvents"]) {
        ASSERT_TRUE(event["ph"].IsScalar() && event["name"].IsScalar() && event["pid"].IsScalar()) << trace;
    }
    std::ifstream file(trace);
    std::stringstream text;
    text << file.rdbuf();
    const std::string json = text.str();
    for (const char* part :
         {"\"traceEvents\"", "\"name\":\"stream 1\"", "\"name\":\"stream 2\"", "\"name\":\"core 0\"",
          "\"name\":\"core 47\"", "\"name\":\"BinaryCrossEntropyGrad\"", "\"name\":\"Contiguous\"",
          "\"name\":\"aclnnBinaryCrossEntropyBackward\"", "\"blockDim\":48",
          "aclrtMemcpyAsync ACL_MEMCPY_HOST_TO_DEVICE", "\"ph\":\"X\""})
        EXPECT_TRUE(mentions(json, part)) << part;
}

// Whether text from `at` on is one strict JSON value (RFC 8259: no inf, nan or bare words,
// numbers in JSON's grammar); at moves past it.
bool json_value(const std::string& text, size_t& at) {
    const auto skip = [&] {
        while (at < text.size() && std::strchr(" \t\r\n", text[at]) != nullptr && text[at] != '\0') ++at;
    };
    const auto string = [&] {
        if (at >= text.size() || text[at] != '"') return false;
        for (++at; at < text.size() && text[at] != '"'; ++at) {
            if (static_cast<unsigned char>(text[at]) < 0x20) return false;
            if (text[at] == '\\') ++at;
        }
        return at++ < text.size();
    };
    skip();
    if (at >= text.size()) return false;
    const char c = text[at];
    if (c == '{' || c == '[') {
        const char close = c == '{' ? '}' : ']';
        ++at;
        skip();
        if (at < text.size() && text[at] == close) return ++at, true;
        for (;;) {
            if (c == '{') {
                skip();
                if (!string()) return false;
                skip();
                if (at >= text.size() || text[at++] != ':') return false;
            }
            if (!json_value(text, at)) return false;
            skip();
            if (at < text.size() && text[at] == ',') {
                ++at;
                continue;
            }
            return at < text.size() && text[at++] == close;
        }
    }
    if (c == '"') return string();
    for (const char* word : {"true", "false", "null"})
        if (text.compare(at, std::strlen(word), word) == 0) return at += std::strlen(word), true;
    static const std::regex number(R"(^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
    std::smatch match;
    const std::string rest = text.substr(at, 64);
    if (!std::regex_search(rest, match, number) || match.length(0) == 0 || match.length(0) >= 64)
        return false;
    at += static_cast<size_t>(match.length(0));
    return true;
}

// atlas_emu's bandwidth_gbps is bounded (1e-300 made the trace's time estimate 300 digits,
// cut by a fixed buffer into a file that was not JSON), and the trace is strict JSON for any
// options it accepts: the bounds, the SoCs, random bandwidths, cores and UB sizes.
TEST(AtlasEmuObservability, OptionsAreBoundedAndTheTraceIsStrictJsonForAnyAccepted) {
    ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
    TempFolder folder;
    for (const char* bad : {"1e-300", "0.001", "1e7", "-1", "nan", "inf"}) {
        ASSERT_NE(
            aclInit(folder.write("bad.yaml", emu_config(std::string("    bandwidth_gbps: ") + bad + "\n"))
                        .c_str()),
            ACL_SUCCESS)
            << bad;
        EXPECT_TRUE(mentions(message(), std::string("option bandwidth_gbps = '") + bad +
                                            "' is not 0 (the SoC's) or a number from 0.01 to 1e+06"))
            << message();
    }
    std::mt19937 random(20261207);
    std::vector<std::string> options = {"    bandwidth_gbps: 0.01\n", "    bandwidth_gbps: 1e6\n",
                                        "    soc: Ascend310P\n    bandwidth_gbps: 0\n"};
    for (int draw = 0; draw < 5; ++draw)
        options.push_back(fmt::format("    bandwidth_gbps: {}\n    vector_cores: {}\n    ub_kib: {}\n",
                                      std::pow(10.0, std::uniform_real_distribution<double>(-2, 6)(random)),
                                      random() % 65, 16 + random() % 512));
    for (const std::string& option : options) {
        const std::string trace = (folder.path() / "trace.json").string();
        ScopedEnvironment tracing("NNPLUG_TRACE", trace.c_str());
        ASSERT_EQ(aclInit(folder.write("c.yaml", emu_config(option)).c_str()), ACL_SUCCESS)
            << option << message();
        {
            const Problem p = random_problem(4096, 3);
            DeviceTensor g(p.grad, {4096}), s(p.self, {4096}), t(p.target, {4096});
            DeviceTensor out(std::vector<float>(4096), {4096});
            EXPECT_EQ(nnplug::test::run_backward(g, s, t, nullptr, 0, out), ACLNN_SUCCESS) << message();
        }
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
        std::ifstream file(trace);
        std::stringstream text;
        text << file.rdbuf();
        size_t at = 0;
        EXPECT_TRUE(json_value(text.str(), at) &&
                    text.str().find_first_not_of(" \n", at) == std::string::npos)
            << option << " gives a trace that is not JSON near byte " << at << ": "
            << text.str().substr(at > 80 ? at - 80 : 0, 160);
        EXPECT_TRUE(mentions(text.str(), "\"estimatedDeviceUs\":")) << option;
    }
}

// CrossEntropyLoss's kernel in the trace: rows over the cores, a vocabulary row in several
// Unified Buffer tiles.
TEST(AtlasEmuObservability, TheTraceShowsTheCrossEntropyTiling) {
    ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
    TempFolder folder;
    const std::string trace = (folder.path() / "trace.json").string();
    ScopedEnvironment tracing("NNPLUG_TRACE", trace.c_str());
    ASSERT_EQ(aclInit(folder.write("c.yaml", emu_config("    soc: Ascend910B\n")).c_str()), ACL_SUCCESS)
        << message();
    {
        const int64_t classes = 129280;
        DeviceTensor x(std::vector<float>(2 * classes, 0.5f), {2, classes}), t({1, 7}, {2}, ACL_INT64);
        DeviceTensor loss(std::vector<float>(1), {1}), lp(std::vector<float>(2 * classes), {2, classes});
        DeviceTensor zloss(std::vector<float>(1), {1}), lse(std::vector<float>(2), {2});
        char mean[] = "mean";
        uint64_t size = 0;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus first = aclnnCrossEntropyLossGetWorkspaceSize(
            x, t, nullptr, mean, -100, 0.0, 0.0, false, loss, lp, zloss, lse, &size, &executor);
        ASSERT_EQ(nnplug::test::run_executor(first, size, executor, aclnnCrossEntropyLoss), ACLNN_SUCCESS)
            << message();
        // Every logit equal: the loss is ln C.
        EXPECT_NEAR(loss.storage()[0], std::log(static_cast<double>(classes)), 1e-5);
    }
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    std::ifstream file(trace);
    std::stringstream text;
    text << file.rdbuf();
    const std::string json = text.str();
    // 192 KiB of UB holds 14 blocks of 1024 float32 classes with their output, weights and
    // alignment room: a row of 129,280 takes 10 tiles; 2 rows run on 2 cores.
    for (const char* part : {"\"name\":\"aclnnCrossEntropyLoss\"", "\"blockDim\":2", "\"tileElements\":14336",
                             "\"tilesPerRow\":10", "\"name\":\"CrossEntropyLoss\"", "\"tiles\":10"})
        EXPECT_TRUE(mentions(json, part)) << part << "\n" << json.substr(0, 2000);
}

// A link planted at the trace's name is replaced by the trace, never written through, and
// no temporary is left beside it.
TEST(AtlasEmuObservability, ATraceNeverFollowsALinkPlantedAtItsName) {
    ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
    TempFolder folder;
    const auto victim = folder.write("victim.txt", "precious\n");
    const auto trace = folder.path() / "trace.json";
    std::filesystem::create_symlink(victim, trace);
    ScopedEnvironment tracing("NNPLUG_TRACE", trace.c_str());
    ASSERT_EQ(aclInit(folder.write("c.yaml", emu_config("    soc: Ascend910B\n")).c_str()), ACL_SUCCESS)
        << message();
    {
        DeviceTensor g(std::vector<float>(64, 0.1f), {64}), s(std::vector<float>(64, 0.3f), {64});
        DeviceTensor t(std::vector<float>(64, 0.5f), {64}), out(std::vector<float>(64), {64});
        ASSERT_EQ(nnplug::test::run_backward(g, s, t, nullptr, 0, out), ACLNN_SUCCESS) << message();
    }
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    std::ifstream kept(victim);
    std::stringstream text;
    text << kept.rdbuf();
    EXPECT_EQ(text.str(), "precious\n");
    EXPECT_FALSE(std::filesystem::is_symlink(trace));
    EXPECT_NO_THROW(YAML::LoadFile(trace.string())) << "not valid JSON";
    size_t entries = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder.path())) ++entries;
    EXPECT_EQ(entries, 3u);  // victim.txt, c.yaml, trace.json
}

}  // namespace
