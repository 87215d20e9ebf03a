// cpu_tbb property for the ops with a class axis: every output, reductions and data-dependent
// divisors included, is bit-identical for 1 and 2 threads and for different grain sizes: rows
// of ten classes side by side in the lanes, long rows, a few vocabulary rows whose segments
// go across the threads, and the 2d NLLLoss. A call with bad targets names the lowest bad row
// and writes nothing, whether one thread checks its targets or several.
#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <aclnnop/aclnn_cross_entropy_loss_grad.h>
#include <aclnnop/aclnn_nll_loss2d.h>
#include <aclnnop/aclnn_nll_loss_backward.h>
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

// The cross-entropy step (mean, weights, label smoothing) of rows x classes, every output's bytes.
void cross_entropy_outputs(int64_t rows, int64_t classes, std::vector<std::vector<uint8_t>>& results) {
    std::mt19937 random(static_cast<uint32_t>(rows * 31 + classes));
    std::uniform_real_distribution<float> logit(-6.0f, 6.0f), weight(0.5f, 2.0f);
    std::uniform_int_distribution<int64_t> cls(0, classes - 1);
    std::vector<float> input(static_cast<size_t>(rows * classes)), weights(static_cast<size_t>(classes)),
        target;
    for (float& v : input) v = logit(random);
    for (float& v : weights) v = weight(random);
    for (int64_t n = 0; n < rows; ++n) target.push_back(static_cast<float>(cls(random)));
    DeviceTensor x(input, {rows, classes}), w(weights, {classes}), t(target, {rows}, ACL_INT64);
    DeviceTensor loss(std::vector<float>(1), {1}), lp(std::vector<float>(input.size()), {rows, classes});
    DeviceTensor zloss(std::vector<float>(1), {1}),
        lse(std::vector<float>(static_cast<size_t>(rows)), {rows});
    DeviceTensor grad_loss(std::vector<float>{1.0f}, {}),
        out(std::vector<float>(input.size()), {rows, classes});
    char mean[] = "mean";
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus first = aclnnCrossEntropyLossGetWorkspaceSize(x, t, w, mean, -100, 0.1, 0.0, false, loss, lp,
                                                              zloss, lse, &size, &executor);
    ASSERT_EQ(nnplug::test::run_executor(first, size, executor, aclnnCrossEntropyLoss), ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    first = aclnnCrossEntropyLossGradGetWorkspaceSize(grad_loss, lp, t, w, nullptr, nullptr, mean, -100, 0.1,
                                                      0.0, out, &size, &executor);
    ASSERT_EQ(nnplug::test::run_executor(first, size, executor, aclnnCrossEntropyLossGrad), ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    for (const DeviceTensor* o : {&loss, &lp, &out}) results.push_back(o->storage_bytes());
}

// NLLLoss2d (mean) with some pixels ignored: the loss and the total weight.
void nll2d_outputs(std::vector<std::vector<uint8_t>>& results) {
    const std::vector<int64_t> shape = {4, 7, 33, 41};
    std::mt19937 random(5);
    std::uniform_real_distribution<float> value(-5.0f, 0.0f), weight(0.5f, 2.0f);
    std::uniform_int_distribution<int64_t> cls(0, 6);
    std::vector<float> self(static_cast<size_t>(4 * 7 * 33 * 41)), weights(7), target;
    for (float& v : self) v = value(random);
    for (float& v : weights) v = weight(random);
    for (int i = 0; i < 4 * 33 * 41; ++i) target.push_back(static_cast<float>(cls(random)));
    DeviceTensor s(self, shape), w(weights, {7}), t(target, {4, 33, 41}, ACL_INT64);
    DeviceTensor out(std::vector<float>(1), {}), total(std::vector<float>(1), {1});
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = aclnnNLLLoss2dGetWorkspaceSize(s, t, w, 1, 3, out, total, &size, &executor);
    ASSERT_EQ(nnplug::test::run_executor(first, size, executor, aclnnNLLLoss2d), ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    for (const DeviceTensor* o : {&out, &total}) results.push_back(o->storage_bytes());
}

std::vector<std::vector<uint8_t>> outputs_with(const Partitioning& partitioning) {
    nnplug::test::TempFolder folder;
    nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
    const std::string text =
        "backend: cpu_tbb\nbackends:\n  cpu_tbb:\n    threads: " + std::to_string(partitioning.threads) +
        "\n    grain: " + std::to_string(partitioning.grain) + "\n";
    EXPECT_EQ(aclInit(folder.write("partitioning.yaml", text).c_str()), ACL_SUCCESS) << aclGetRecentErrMsg();
    std::vector<std::vector<uint8_t>> results;
    cross_entropy_outputs(3000, 10, results);
    cross_entropy_outputs(600, 3000, results);
    cross_entropy_outputs(3, 129280, results);
    nll2d_outputs(results);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    return results;
}

TEST(ClassDeterminism, OutputsAreBitIdenticalForEveryPartitioning) {
    const auto reference = outputs_with({1, 16384});
    ASSERT_EQ(reference.size(), 11u);
    for (const Partitioning p : {Partitioning{2, 16384}, Partitioning{2, 1024}, Partitioning{3, 4096}}) {
        const auto results = outputs_with(p);
        ASSERT_EQ(results.size(), reference.size());
        for (size_t i = 0; i < results.size(); ++i)
            EXPECT_EQ(results[i], reference[i])
                << "output " << i << " with " << p.threads << " threads, grain " << p.grain;
    }
}

// An NLLLoss gradient of `rows` rows of 3 classes whose targets at rows 3 * rows / 4 and
// rows / 2 + 1 are not classes: refused, naming the lower, its output untouched.
void expect_lowest_bad_target(int64_t rows, const Partitioning& partitioning) {
    SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(partitioning.threads) +
                 " threads, grain " + std::to_string(partitioning.grain));
    std::vector<float> target(static_cast<size_t>(rows));
    for (int64_t n = 0; n < rows; ++n) target[static_cast<size_t>(n)] = static_cast<float>(n % 3);
    target[static_cast<size_t>(3 * rows / 4)] = 7.0f;
    target[static_cast<size_t>(rows / 2 + 1)] = -5.0f;
    DeviceTensor grad(std::vector<float>{1.0f}, {}),
        self(std::vector<float>(static_cast<size_t>(rows * 3), -1.0f), {rows, 3});
    DeviceTensor t(target, {rows}, ACL_INT64), w(std::vector<float>(3, 1.0f), {3});
    DeviceTensor total(std::vector<float>{static_cast<float>(rows)}, {});
    const std::vector<float> untouched(static_cast<size_t>(rows * 3), 42.0f);
    DeviceTensor out(untouched, {rows, 3});
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first =
        aclnnNLLLossBackwardGetWorkspaceSize(grad, self, t, w, 1, -100, total, out, &size, &executor);
    EXPECT_NE(nnplug::test::run_executor(first, size, executor, aclnnNLLLossBackward), ACLNN_SUCCESS);
    EXPECT_NE(
        std::string(aclGetRecentErrMsg()).find("target element " + std::to_string(rows / 2 + 1) + " is -5,"),
        std::string::npos)
        << aclGetRecentErrMsg();
    EXPECT_EQ(out.storage(), untouched);
}

TEST(ClassDeterminism, TheLowestBadTargetIsRefusedWhateverTheSplit) {
    for (const Partitioning p : {Partitioning{1, 16384}, Partitioning{2, 1024}, Partitioning{3, 4096}}) {
        nnplug::test::TempFolder folder;
        nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
        const std::string text =
            "backend: cpu_tbb\nbackends:\n  cpu_tbb:\n    threads: " + std::to_string(p.threads) +
            "\n    grain: " + std::to_string(p.grain) + "\n";
        ASSERT_EQ(aclInit(folder.write("partitioning.yaml", text).c_str()), ACL_SUCCESS)
            << aclGetRecentErrMsg();
        for (const int64_t rows : {int64_t{100}, int64_t{40000}})  // one thread's check, then several's
            expect_lowest_bad_target(rows, p);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    }
}

}  // namespace
