// cpu_tbb property: results are bit-identical for 1 and 2 threads and for different grain
// sizes, for elementwise ops (contiguous, strided, broadcast, 16-bit) and for reductions.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;

struct Partitioning {
    int threads;
    int grain;
};

// Every output of the case list, as raw bytes, computed under one partitioning.
std::vector<std::vector<uint8_t>> outputs_with(const Partitioning& partitioning) {
    nnplug::test::TempFolder folder;
    nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
    const std::string text =
        "backend: cpu_tbb\nbackends:\n  cpu_tbb:\n    threads: " + std::to_string(partitioning.threads) +
        "\n    grain: " + std::to_string(partitioning.grain) + "\n";
    EXPECT_EQ(aclInit(folder.write("partitioning.yaml", text).c_str()), ACL_SUCCESS) << aclGetRecentErrMsg();
    std::vector<std::vector<uint8_t>> results;
    {
        const int64_t rows = 301, cols = 1001, count = rows * cols;
        std::mt19937 generator(42);
        std::uniform_real_distribution<float> probability(0.001f, 0.999f), unit(0.0f, 1.0f);
        std::vector<float> self(count), target(count), weight(cols), grad(count);
        for (auto* values : {&self})
            for (float& v : *values) v = probability(generator);
        for (auto* values : {&target, &weight, &grad})
            for (float& v : *values) v = unit(generator);
        const std::vector<int64_t> shape = {rows, cols};
        DeviceTensor s(self, shape), t(target, shape), g(grad, shape), row(weight, {cols});
        DeviceTensor s16(self, shape, ACL_FLOAT16), t_bf16(target, shape, ACL_BF16);
        // A transposed self: storage [cols, rows] seen as [rows, cols].
        DeviceTensor s_transposed(self, {cols, rows}, shape, {1, rows}, 0, ACL_FLOAT);
        DeviceTensor scalar(std::vector<float>{0.5f}, {});
        const auto run_backward = [&](const aclTensor* gr, const aclTensor* se, const aclTensor* ta,
                                      const aclTensor* we, int64_t reduction, aclDataType out_dtype) {
            DeviceTensor out(std::vector<float>(count, 0.0f), shape, out_dtype);
            EXPECT_EQ(nnplug::test::run_backward(gr, se, ta, we, reduction, out), ACLNN_SUCCESS)
                << aclGetRecentErrMsg();
            results.push_back(out.storage_bytes());
        };
        run_backward(g, s, t, nullptr, 0, ACL_FLOAT);
        run_backward(scalar, s16, t_bf16, row, 1, ACL_BF16);
        run_backward(g, s_transposed, t, row, 0, ACL_FLOAT16);
        for (int64_t reduction : {0, 1, 2}) {
            for (const aclTensor* se : {s.get(), s16.get(), s_transposed.get()}) {
                const bool reduced = reduction != 0;
                DeviceTensor out(std::vector<float>(reduced ? 1 : count, 0.0f),
                                 reduced ? std::vector<int64_t>{} : shape);
                EXPECT_EQ(nnplug::test::run_forward(se, t, row, reduction, out), ACLNN_SUCCESS)
                    << aclGetRecentErrMsg();
                results.push_back(out.storage_bytes());
            }
        }
    }
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    return results;
}

TEST(CpuDeterminism, ThreadsAndGrainSizesGiveIdenticalBits) {
    const auto reference = outputs_with({1, 16384});
    ASSERT_EQ(reference.size(), 12u);
    for (const Partitioning partitioning :
         {Partitioning{2, 16384}, Partitioning{2, 1024}, Partitioning{2, 65536}}) {
        const auto other = outputs_with(partitioning);
        ASSERT_EQ(other.size(), reference.size());
        for (size_t i = 0; i < reference.size(); ++i) {
            EXPECT_TRUE(other[i] == reference[i])
                << "output " << i << " differs with " << partitioning.threads << " threads and grain "
                << partitioning.grain;
        }
    }
}

}  // namespace
