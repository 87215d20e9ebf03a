// aclnnCrossEntropyLoss and aclnnCrossEntropyLossGrad on the backend under test: loss and
// logProb against the float64 reference (every reduction word, weights, ignored rows, label
// smoothing, 16-bit inputs, logits large enough to overflow exp without the max), the
// gradient with label smoothing, the typed attributes' checks (the reduction word, the
// smoothing range) with CANN's codes, and a target outside the classes refused at run time.
#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <aclnnop/aclnn_cross_entropy_loss_grad.h>
#include <cross_entropy_loss_reference.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;
using nnplug::test::filled;
using nnplug::test::message;

constexpr float kSentinel = 1234.5f;

// The op's arguments, with CANN's defaults.
struct Call {
    const aclTensor* weight = nullptr;
    const char* reduction = "mean";
    int64_t ignore = -100;
    double smoothing = 0.0;
};

aclnnStatus forward(const aclTensor* input, const aclTensor* target, const Call& c, const aclTensor* loss,
                    const aclTensor* log_prob, const aclTensor* zloss, const aclTensor* lse) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = aclnnCrossEntropyLossGetWorkspaceSize(
        input, target, c.weight, const_cast<char*>(c.reduction), c.ignore, c.smoothing, 0.0, false, loss,
        log_prob, zloss, lse, &size, &executor);
    return nnplug::test::run_executor(first, size, executor, aclnnCrossEntropyLoss);
}

aclnnStatus grad(const aclTensor* grad_loss, const aclTensor* log_prob, const aclTensor* target,
                 const Call& c, const aclTensor* out) {
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = aclnnCrossEntropyLossGradGetWorkspaceSize(
        grad_loss, log_prob, target, c.weight, nullptr, nullptr, const_cast<char*>(c.reduction), c.ignore,
        c.smoothing, 0.0, out, &size, &executor);
    return nnplug::test::run_executor(first, size, executor, aclnnCrossEntropyLossGrad);
}

int64_t reduction_of(const std::string& word) {
    return word == "none" ? 0 : word == "mean" ? 1 : 2;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double rtol, double atol) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], rtol * std::abs(want[i]) + atol) << "element " << i;
}

using CrossEntropyLoss = nnplug::test::RuntimeTest;

TEST_F(CrossEntropyLoss, MatchesTheFloat64ReferenceWithWeightsIgnoredRowsAndSmoothing) {
    const int64_t rows = 300, classes = 37;  // more rows than one chunk, a class count no vector divides
    std::mt19937 random(7);
    std::uniform_real_distribution<float> logit(-8.0f, 8.0f), weight(0.25f, 3.0f);
    std::uniform_int_distribution<int64_t> cls(0, classes - 1);
    std::vector<float> input, weights;
    std::vector<int64_t> target;
    for (int64_t i = 0; i < rows * classes; ++i) input.push_back(logit(random));
    for (int64_t c = 0; c < classes; ++c) weights.push_back(weight(random));
    for (int64_t n = 0; n < rows; ++n) target.push_back(n % 9 == 4 ? 5 : cls(random));
    DeviceTensor x(input, {rows, classes}), w(weights, {classes});
    DeviceTensor t(std::vector<float>(target.begin(), target.end()), {rows}, ACL_INT64);
    const std::vector<double> x64(input.begin(), input.end()), w64(weights.begin(), weights.end());
    for (const char* word : {"none", "mean", "sum"})
        for (const bool weighted : {false, true})
            for (const int64_t ignore : {int64_t{-100}, int64_t{5}})
                for (const double smoothing : {0.0, 0.2}) {
                    SCOPED_TRACE(testing::Message() << word << " weighted " << weighted << " ignore "
                                                    << ignore << " smoothing " << smoothing);
                    Call c;
                    c.weight = weighted ? w.get() : nullptr;
                    c.reduction = word;
                    c.ignore = ignore;
                    c.smoothing = smoothing;
                    const int64_t reduction = reduction_of(word);
                    const auto expected = nnplug::reference::cross_entropy_loss(
                        x64, target, weighted ? w64 : std::vector<double>{}, classes, reduction, ignore,
                        smoothing);
                    DeviceTensor loss(filled(expected.loss.size(), kSentinel),
                                      reduction == 0 ? std::vector<int64_t>{rows} : std::vector<int64_t>{1});
                    DeviceTensor log_prob(filled(rows * classes, kSentinel), {rows, classes});
                    DeviceTensor zloss(filled(1, kSentinel), {1}), lse(filled(rows, kSentinel), {rows});
                    ASSERT_EQ(forward(x, t, c, loss, log_prob, zloss, lse), ACLNN_SUCCESS) << message();
                    expect_near(loss.storage(), expected.loss, 2e-5, 1e-5);
                    expect_near(log_prob.storage(), expected.log_prob, 1e-5, 1e-5);
                    EXPECT_EQ(zloss.storage(), filled(1, kSentinel)) << "CANN never writes zlossOut";

                    const std::vector<float> g =
                        reduction == 0 ? std::vector<float>(rows, 0.5f) : std::vector<float>{2.0f};
                    DeviceTensor grad_loss(
                        g, reduction == 0 ? std::vector<int64_t>{rows} : std::vector<int64_t>{});
                    DeviceTensor out(filled(rows * classes, kSentinel), {rows, classes});
                    ASSERT_EQ(grad(grad_loss, log_prob, t, c, out), ACLNN_SUCCESS) << message();
                    const std::vector<float> lp = log_prob.storage();
                    const auto expected_grad = nnplug::reference::cross_entropy_loss_grad(
                        std::vector<double>(g.begin(), g.end()), std::vector<double>(lp.begin(), lp.end()),
                        target, weighted ? w64 : std::vector<double>{}, classes, reduction, ignore,
                        smoothing);
                    expect_near(out.storage(), expected_grad, 1e-5, 1e-6);
                }
}

// A row of a real vocabulary (CANN's own case lists use C = 129,280): larger than atlas_emu's
// Unified Buffer, so its kernel tiles it along the class axis with the log-sum-exp carried
// from tile to tile; the values are those of the whole row.
TEST_F(CrossEntropyLoss, AVocabularyRowLargerThanTheUnifiedBufferGivesTheWholeRowsValues) {
    const int64_t rows = 3, classes = 129280;
    std::mt19937 random(11);
    std::uniform_real_distribution<float> logit(-10.0f, 10.0f), weight(0.5f, 2.0f);
    std::vector<float> input, weights;
    for (int64_t i = 0; i < rows * classes; ++i) input.push_back(logit(random));
    for (int64_t c = 0; c < classes; ++c) weights.push_back(weight(random));
    input[static_cast<size_t>(classes + 100000)] = 60.0f;  // the row's maximum in a late tile
    const std::vector<int64_t> target = {5, 100000, 129279};
    DeviceTensor x(input, {rows, classes}), w(weights, {classes});
    DeviceTensor t(std::vector<float>(target.begin(), target.end()), {rows}, ACL_INT64);
    DeviceTensor loss(filled(rows, kSentinel), {rows}),
        log_prob(filled(rows * classes, kSentinel), {rows, classes});
    DeviceTensor zloss(filled(1, kSentinel), {1}), lse(filled(rows, kSentinel), {rows});
    Call c;
    c.weight = w;
    c.reduction = "none";
    c.smoothing = 0.1;
    ASSERT_EQ(forward(x, t, c, loss, log_prob, zloss, lse), ACLNN_SUCCESS) << message();
    const std::vector<double> x64(input.begin(), input.end()), w64(weights.begin(), weights.end());
    const auto expected = nnplug::reference::cross_entropy_loss(x64, target, w64, classes, 0, -100, 0.1);
    expect_near(loss.storage(), expected.loss, 1e-5, 1e-5);
    expect_near(log_prob.storage(), expected.log_prob, 1e-5, 1e-5);
    DeviceTensor grad_loss(filled(rows, 1.0f), {rows}),
        out(filled(rows * classes, kSentinel), {rows, classes});
    ASSERT_EQ(grad(grad_loss, log_prob, t, c, out), ACLNN_SUCCESS) << message();
    const std::vector<float> lp = log_prob.storage();
    const auto expected_grad = nnplug::reference::cross_entropy_loss_grad(
        std::vector<double>(rows, 1.0), std::vector<double>(lp.begin(), lp.end()), target, w64, classes, 0,
        -100, 0.1);
    expect_near(out.storage(), expected_grad, 1e-5, 1e-7);
}

// Logits and logProb as views whose classes are not contiguous (a transposed storage): the
// row model's scalar path gives the values of the contiguous call.
TEST_F(CrossEntropyLoss, ViewsWhoseClassesAreNotContiguousGiveTheSameValues) {
    const int64_t rows = 6, classes = 5;
    std::mt19937 random(3);
    std::uniform_real_distribution<float> logit(-4.0f, 4.0f);
    std::vector<float> input(rows * classes), transposed(rows * classes);
    for (float& v : input) v = logit(random);
    for (int64_t n = 0; n < rows; ++n)
        for (int64_t c = 0; c < classes; ++c)
            transposed[static_cast<size_t>(c * rows + n)] = input[static_cast<size_t>(n * classes + c)];
    const std::vector<int64_t> target = {0, 4, 2, 2, 1, 3};
    DeviceTensor x(transposed, {classes, rows}, {rows, classes}, {1, rows}, 0, ACL_FLOAT);
    DeviceTensor t(std::vector<float>(target.begin(), target.end()), {rows}, ACL_INT64);
    DeviceTensor loss(filled(rows, kSentinel), {rows}), zloss(filled(1, kSentinel), {1});
    DeviceTensor lp(filled(rows * classes, kSentinel), {classes, rows}, {rows, classes}, {1, rows}, 0,
                    ACL_FLOAT);
    DeviceTensor lse(filled(rows, kSentinel), {rows});
    Call c;
    c.reduction = "none";
    c.smoothing = 0.1;
    ASSERT_EQ(forward(x, t, c, loss, lp, zloss, lse), ACLNN_SUCCESS) << message();
    const auto expected = nnplug::reference::cross_entropy_loss(
        std::vector<double>(input.begin(), input.end()), target, {}, classes, 0, -100, 0.1);
    expect_near(loss.storage(), expected.loss, 1e-5, 1e-6);
    std::vector<double> expected_lp(transposed.size());
    for (int64_t n = 0; n < rows; ++n)
        for (int64_t k = 0; k < classes; ++k)
            expected_lp[static_cast<size_t>(k * rows + n)] =
                expected.log_prob[static_cast<size_t>(n * classes + k)];
    expect_near(lp.storage(), expected_lp, 1e-5, 1e-6);
    DeviceTensor grad_loss(filled(rows, 1.0f), {rows});
    DeviceTensor out(filled(rows * classes, kSentinel), {classes, rows}, {rows, classes}, {1, rows}, 0,
                     ACL_FLOAT);
    ASSERT_EQ(grad(grad_loss, lp, t, c, out), ACLNN_SUCCESS) << message();
    const auto expected_grad = nnplug::reference::cross_entropy_loss_grad(
        std::vector<double>(rows, 1.0), expected.log_prob, target, {}, classes, 0, -100, 0.1);
    std::vector<double> expected_out(transposed.size());
    for (int64_t n = 0; n < rows; ++n)
        for (int64_t k = 0; k < classes; ++k)
            expected_out[static_cast<size_t>(k * rows + n)] =
                expected_grad[static_cast<size_t>(n * classes + k)];
    expect_near(out.storage(), expected_out, 1e-5, 1e-6);
}

// exp(100) overflows float32: a log-sum-exp without its running max gives inf or NaN.
TEST_F(CrossEntropyLoss, LogitsNearAHundredDoNotOverflow) {
    DeviceTensor x({100, 99, 98, -100, 0, 100}, {2, 3}), t({0, 2}, {2}, ACL_INT64);
    DeviceTensor loss(filled(2, kSentinel), {2}), log_prob(filled(6, kSentinel), {2, 3});
    DeviceTensor zloss(filled(1, kSentinel), {1}), lse(filled(2, kSentinel), {2});
    Call c;
    c.reduction = "none";
    ASSERT_EQ(forward(x, t, c, loss, log_prob, zloss, lse), ACLNN_SUCCESS) << message();
    const auto expected =
        nnplug::reference::cross_entropy_loss({100, 99, 98, -100, 0, 100}, {0, 2}, {}, 3, 0, -100, 0);
    expect_near(loss.storage(), expected.loss, 1e-5, 1e-6);
    expect_near(log_prob.storage(), expected.log_prob, 1e-5, 1e-6);
}

// A NaN logit makes its whole row NaN: logProb and the row's loss. Short rows run side by side
// in the vector lanes, where a maximum taken with x86's Max dropped a NaN followed by numbers.
TEST_F(CrossEntropyLoss, ANanLogitMakesItsRowNanWhereverItIs) {
    const float nan = std::nanf("");
    const std::vector<float> values = {-7.5f, -8, nan, nan, -8, 1.5f, 0, 0.5f, -1, 2, 0.25f, -3, 1.5f, 0};
    DeviceTensor x(values, {2, 7}), t({0, 3}, {2}, ACL_INT64);
    DeviceTensor loss(filled(2, kSentinel), {2}), log_prob(filled(14, kSentinel), {2, 7});
    DeviceTensor zloss(filled(1, kSentinel), {1}), lse(filled(2, kSentinel), {2});
    Call c;
    c.reduction = "none";
    ASSERT_EQ(forward(x, t, c, loss, log_prob, zloss, lse), ACLNN_SUCCESS) << message();
    const std::vector<float> got = log_prob.storage();
    for (size_t i = 0; i < 7; ++i)
        EXPECT_TRUE(std::isnan(got[i])) << "logProb element " << i << " is " << got[i];
    EXPECT_TRUE(std::isnan(loss.storage()[0])) << loss.storage()[0];
    const auto expected = nnplug::reference::cross_entropy_loss(
        std::vector<double>(values.begin() + 7, values.end()), {3}, {}, 7, 0, -100, 0);
    expect_near({loss.storage()[1]}, expected.loss, 1e-5, 1e-6);
    expect_near(std::vector<float>(got.begin() + 7, got.end()), expected.log_prob, 1e-5, 1e-6);
}

TEST_F(CrossEntropyLoss, SixteenBitInputsComputeInFloat32AndRoundOnce) {
    const std::vector<float> values = {0.5f, -1.25f, 2.0f, 0.0f, 3.5f, -2.0f, 1.0f, 1.0f};
    for (const aclDataType dtype : {ACL_FLOAT16, ACL_BF16}) {
        DeviceTensor x(values, {2, 4}, dtype), t({3, 0}, {2}, ACL_INT64);
        DeviceTensor loss(filled(1, kSentinel), {1}, dtype), log_prob(filled(8, kSentinel), {2, 4}, dtype);
        DeviceTensor zloss(filled(1, kSentinel), {1}, dtype), lse(filled(2, kSentinel), {2}, dtype);
        Call c;
        const aclnnStatus status = forward(x, t, c, loss, log_prob, zloss, lse);
        if (status != ACLNN_SUCCESS && dtype == ACL_BF16) continue;  // a SoC without bfloat16
        ASSERT_EQ(status, ACLNN_SUCCESS) << message();
        const std::vector<float> stored = nnplug::test::decode(nnplug::test::encode(values, dtype), dtype);
        const auto expected = nnplug::reference::cross_entropy_loss(
            std::vector<double>(stored.begin(), stored.end()), {3, 0}, {}, 4, 1, -100, 0);
        const double ulp = dtype == ACL_FLOAT16 ? 0x1p-10 : 0x1p-7;
        expect_near(loss.storage(), expected.loss, ulp, 0);
        expect_near(log_prob.storage(), expected.log_prob, ulp, ulp);
    }
}

// A negative ignoreIndex ignores nothing: a target equal to it is out of range and refused.
TEST_F(CrossEntropyLoss, ANegativeIgnoreIndexIgnoresNothing) {
    DeviceTensor x(filled(6, 0), {2, 3}), t({0, -1}, {2}, ACL_INT64);
    DeviceTensor loss(filled(1, kSentinel), {1}), log_prob(filled(6, kSentinel), {2, 3});
    DeviceTensor zloss(filled(1, kSentinel), {1}), lse(filled(2, kSentinel), {2});
    Call c;
    c.ignore = -1;
    EXPECT_NE(forward(x, t, c, loss, log_prob, zloss, lse), ACLNN_SUCCESS);
    EXPECT_NE(message().find("target element 1 is -1, not a class index in [0, 3)"), std::string::npos)
        << message();
    EXPECT_EQ(log_prob.storage(), filled(6, kSentinel));
    EXPECT_EQ(loss.storage(), filled(1, kSentinel));
}

void expect_refused(aclnnStatus status, aclnnStatus expected, const std::string& text) {
    EXPECT_EQ(status, expected) << message();
    EXPECT_EQ(message(), "aclnnCrossEntropyLoss: " + text);
}

TEST_F(CrossEntropyLoss, TheFirstPhaseRefusesWhatCannDoesWithItsCodes) {
    DeviceTensor x(filled(6, 0), {2, 3}), t({0, 1}, {2}, ACL_INT64);
    DeviceTensor loss(filled(1, kSentinel), {1}), log_prob(filled(6, kSentinel), {2, 3});
    DeviceTensor zloss(filled(1, kSentinel), {1}), lse(filled(2, kSentinel), {2});
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    char mean[] = "mean", bad[] = "average";
    auto first = [&](const aclTensor* weight, char* reduction, double smoothing, const aclTensor* z) {
        return aclnnCrossEntropyLossGetWorkspaceSize(x, t, weight, reduction, -100, smoothing, 0.0, false,
                                                     loss, log_prob, z, lse, &size, &executor);
    };
    expect_refused(first(nullptr, mean, 0.0, nullptr), ACLNN_ERR_PARAM_NULLPTR, "zlossOut is null");
    expect_refused(first(nullptr, bad, 0.0, zloss), ACLNN_ERR_INNER_TILING_ERROR,
                   "reductionOptional \"average\" is not \"none\", \"mean\" or \"sum\"");
    expect_refused(first(nullptr, mean, 1.5, zloss), ACLNN_ERR_INNER_TILING_ERROR,
                   "labelSmoothing 1.5 is not in [0, 1]");
    expect_refused(first(nullptr, mean, std::nan(""), zloss), ACLNN_ERR_INNER_TILING_ERROR,
                   "labelSmoothing nan is not in [0, 1]");
    DeviceTensor w16({1, 1, 1}, {3}, ACL_FLOAT16);
    expect_refused(first(w16, mean, 0.0, zloss), ACLNN_ERR_PARAM_INVALID,
                   "weightOptional has dtype float16; expected float32");
    // A null reduction is the default, mean.
    EXPECT_EQ(first(nullptr, nullptr, 0.0, zloss), ACLNN_SUCCESS) << message();
    aclDestroyAclOpExecutor(executor);
    executor = nullptr;
    DeviceTensor t32({0, 1}, {2}, ACL_INT32), t8({0, 1}, {2}, ACL_UINT8);
    EXPECT_EQ(aclnnCrossEntropyLossGetWorkspaceSize(x, t8, nullptr, mean, -100, 0.0, 0.0, false, loss,
                                                    log_prob, zloss, lse, &size, &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(message(), "aclnnCrossEntropyLoss: target has dtype uint8; expected int32 or int64");
    EXPECT_EQ(executor, nullptr);
}

// atlas_emu emulating `soc`, whatever NNPLUG_BACKEND says.
template <const char* kSoc>
class CrossEntropyOnSoc : public nnplug::test::RuntimeTest {
protected:
    std::string config_text() const override {
        return std::string("backend: atlas_emu\nbackends:\n  atlas_emu:\n    soc: ") + kSoc + "\n";
    }
    nnplug::test::ScopedEnvironment no_override_{"NNPLUG_BACKEND", nullptr};

    // Both first phases with a target of `target_dtype`: their statuses, the last message kept.
    std::pair<aclnnStatus, aclnnStatus> first_phases(aclDataType target_dtype, std::string& text) {
        DeviceTensor x(filled(6, 0), {2, 3}), t({0, 1}, {2}, target_dtype), g(filled(1, 1), {1});
        DeviceTensor loss(filled(1, kSentinel), {1}), log_prob(filled(6, kSentinel), {2, 3});
        DeviceTensor zloss(filled(1, kSentinel), {1}), lse(filled(2, kSentinel), {2});
        DeviceTensor out(filled(6, kSentinel), {2, 3});
        uint64_t size = 0;
        aclOpExecutor* executor = nullptr;
        char mean[] = "mean";
        const aclnnStatus forward = aclnnCrossEntropyLossGetWorkspaceSize(
            x, t, nullptr, mean, -100, 0.0, 0.0, false, loss, log_prob, zloss, lse, &size, &executor);
        text = forward != ACLNN_SUCCESS ? message() : "";
        if (executor != nullptr) aclDestroyAclOpExecutor(executor);
        executor = nullptr;
        const aclnnStatus gradient = aclnnCrossEntropyLossGradGetWorkspaceSize(
            g, log_prob, t, nullptr, nullptr, nullptr, mean, -100, 0.0, 0.0, out, &size, &executor);
        if (gradient != ACLNN_SUCCESS) text += "\n" + message();
        if (executor != nullptr) aclDestroyAclOpExecutor(executor);
        return {forward, gradient};
    }
};

constexpr char kAscend910B[] = "Ascend910B";
constexpr char kAscend310P[] = "Ascend310P";
using CrossEntropyOnAscend910B = CrossEntropyOnSoc<kAscend910B>;
using CrossEntropyOnAscend310P = CrossEntropyOnSoc<kAscend310P>;

// CANN registers int32 targets for these kernels on Ascend950 only.
TEST_F(CrossEntropyOnAscend910B, Int32TargetsAreRefusedInt64OnesRun) {
    std::string text;
    EXPECT_EQ(first_phases(ACL_INT64, text), std::make_pair(ACLNN_SUCCESS, ACLNN_SUCCESS)) << text;
    const auto [forward, gradient] = first_phases(ACL_INT32, text);
    EXPECT_NE(forward, ACLNN_SUCCESS);
    EXPECT_NE(gradient, ACLNN_SUCCESS);
    EXPECT_EQ(
        text,
        "aclnnCrossEntropyLoss: target has dtype int32; the CrossEntropyLoss kernels of Ascend910B take "
        "int64 targets, as in CANN\naclnnCrossEntropyLossGrad: target has dtype int32; the "
        "CrossEntropyLoss kernels of Ascend910B take int64 targets, as in CANN");
}

TEST_F(CrossEntropyOnAscend310P, NeitherOpIsAvailable) {
    std::string text;
    const auto [forward, gradient] = first_phases(ACL_INT64, text);
    EXPECT_NE(forward, ACLNN_SUCCESS);
    EXPECT_NE(gradient, ACLNN_SUCCESS);
    EXPECT_NE(text.find("aclnnCrossEntropyLossGrad: is not available on Ascend310P, as in CANN"),
              std::string::npos)
        << text;
}

}  // namespace
