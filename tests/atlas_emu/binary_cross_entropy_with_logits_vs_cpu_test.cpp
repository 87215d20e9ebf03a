// The three ops on logits through the aclnn API on cpu_tbb (1 and 2 threads) and atlas_emu
// (1 and 2 host threads): random cases with broadcast weight and posWeight ([C] against
// [N, C], one element, full), a scalar gradOutput after a reduction, transposed and
// strided views, in every dtype. Both gradients and the per-element loss must be the
// same bytes everywhere; the reduced loss within rtol 1e-6 (one ulp of a 16-bit out), as
// the backends sum in different orders. Float32 target gradients without posWeight are
// (-x) * g * w * scale exactly.
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>
#include <gtest/gtest.h>
#include <nnplug/dtype_convert.h>
#include <nnplug/ops/binary_cross_entropy_math.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;

enum class Op { kForward, kBackward, kTargetBackward };

// One tensor argument as host data: its storage and the view over it.
struct HostTensor {
    bool present = false;
    aclDataType dtype = ACL_FLOAT;
    std::vector<float> storage;
    std::vector<int64_t> storage_shape, view, strides;
};

struct Case {
    std::string name;
    Op op = Op::kBackward;
    int64_t reduction = 0;
    HostTensor grad, self, target, weight, pos_weight, out;
};

HostTensor random_view(const std::vector<int64_t>& storage_shape, const std::vector<int64_t>& view,
                       const std::vector<int64_t>& strides, aclDataType dtype, float low, float high,
                       std::mt19937& generator) {
    HostTensor t;
    t.present = true;
    t.dtype = dtype;
    t.storage_shape = storage_shape;
    t.view = view;
    t.strides = strides;
    std::uniform_real_distribution<float> values(low, high);
    t.storage.resize(static_cast<size_t>(nnplug::test::element_count(storage_shape)));
    for (float& v : t.storage) v = values(generator);
    return t;
}

HostTensor random_tensor(const std::vector<int64_t>& shape, aclDataType dtype, float low, float high,
                         std::mt19937& generator) {
    return random_view(shape, shape, nnplug::test::contiguous_strides(shape), dtype, low, high, generator);
}

// weight and posWeight: absent, one element, a [C] row or every element.
enum class Spread { kAbsent, kOne, kRow, kFull };

HostTensor spread_tensor(Spread spread, const std::vector<int64_t>& shape, aclDataType dtype, float low,
                         float high, std::mt19937& generator) {
    if (spread == Spread::kAbsent) return HostTensor{};
    if (spread == Spread::kOne) return random_tensor({1}, dtype, low, high, generator);
    if (spread == Spread::kRow) return random_tensor({shape.back()}, dtype, low, high, generator);
    return random_tensor(shape, dtype, low, high, generator);
}

std::vector<Case> random_cases() {
    std::vector<Case> cases;
    std::mt19937 generator(77);
    const std::vector<std::vector<int64_t>> shapes = {{1}, {65}, {4097}, {37, 531}, {3, 5, 1021}, {3, 40009}};
    const Spread spreads[] = {Spread::kAbsent, Spread::kOne, Spread::kRow, Spread::kFull};
    int k = 0;
    for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16})
        for (const auto& shape : shapes)
            for (const Op op : {Op::kForward, Op::kBackward, Op::kTargetBackward})
                for (const int64_t reduction : {0, 1, 2}) {
                    Case c;
                    c.op = op;
                    c.reduction = reduction;
                    // Every (weight, posWeight) pair over the cases, in turn.
                    const Spread weight = spreads[k % 4], pos_weight = spreads[(k / 4) % 4];
                    ++k;
                    c.name = "random " + std::to_string(k);
                    if (op != Op::kForward)
                        c.grad = reduction != 0 ? random_tensor({}, dtype, -2, 2, generator)
                                                : random_tensor(shape, dtype, -2, 2, generator);
                    c.self = random_tensor(shape, dtype, -15, 15, generator);
                    c.target = random_tensor(shape, dtype, 0, 1, generator);
                    c.weight = spread_tensor(weight, shape, dtype, 0, 2, generator);
                    c.pos_weight = spread_tensor(pos_weight, shape, dtype, 0.5f, 4, generator);
                    const bool reduced = op == Op::kForward && reduction != 0;
                    c.out = random_tensor(reduced ? std::vector<int64_t>{} : shape, dtype, 0, 0, generator);
                    cases.push_back(c);
                }
    // Transposed self and target, a strided out, mixed dtypes, posWeight a [C] row.
    for (const Op op : {Op::kForward, Op::kBackward, Op::kTargetBackward}) {
        Case c;
        c.name = "strided";
        c.op = op;
        const int64_t rows = 300, columns = 257;
        if (op != Op::kForward) c.grad = random_tensor({rows, columns}, ACL_FLOAT16, -1, 1, generator);
        c.self = random_view({columns, rows}, {rows, columns}, {1, rows}, ACL_FLOAT16, -10, 10, generator);
        c.target = random_view({columns, rows}, {rows, columns}, {1, rows}, ACL_FLOAT, 0, 1, generator);
        c.weight = random_tensor({rows, 1}, ACL_BF16, 0, 2, generator);
        c.pos_weight = random_tensor({columns}, ACL_FLOAT, 0.5f, 3, generator);
        c.out =
            random_view({rows, 2 * columns}, {rows, columns}, {2 * columns, 2}, ACL_FLOAT, 0, 0, generator);
        cases.push_back(c);
    }
    return cases;
}

struct Outcome {
    aclnnStatus status = ACLNN_SUCCESS;
    std::string message;
    std::vector<uint8_t> out;  // the output's whole storage
};

std::unique_ptr<DeviceTensor> to_device(const HostTensor& t) {
    if (!t.present) return nullptr;
    return std::make_unique<DeviceTensor>(t.storage, t.storage_shape, t.view, t.strides, 0, t.dtype);
}

aclTensor* get(const std::unique_ptr<DeviceTensor>& t) {
    return t ? t->get() : nullptr;
}

Outcome run_case(const Case& c) {
    const auto grad = to_device(c.grad), self = to_device(c.self), target = to_device(c.target),
               weight = to_device(c.weight), pos_weight = to_device(c.pos_weight), out = to_device(c.out);
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    Outcome outcome;
    if (c.op == Op::kForward)
        outcome.status = aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
            get(self), get(target), get(weight), get(pos_weight), c.reduction, get(out), &workspace_size,
            &executor);
    else if (c.op == Op::kBackward)
        outcome.status = aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
            get(grad), get(self), get(target), get(weight), get(pos_weight), c.reduction, get(out),
            &workspace_size, &executor);
    else
        outcome.status = aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
            get(grad), get(self), get(target), get(weight), get(pos_weight), c.reduction, get(out),
            &workspace_size, &executor);
    if (outcome.status == ACLNN_SUCCESS) {
        void* workspace = nullptr;
        if (workspace_size > 0) {
            EXPECT_EQ(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        }
        if (c.op == Op::kForward)
            outcome.status = aclnnBinaryCrossEntropyWithLogits(workspace, workspace_size, executor, nullptr);
        else if (c.op == Op::kBackward)
            outcome.status =
                aclnnBinaryCrossEntropyWithLogitsBackward(workspace, workspace_size, executor, nullptr);
        else
            outcome.status =
                aclnnBinaryCrossEntropyWithLogitsTargetBackward(workspace, workspace_size, executor, nullptr);
        if (outcome.status == ACLNN_SUCCESS && aclrtSynchronizeStream(nullptr) != ACL_SUCCESS)
            outcome.status = ACLNN_ERR_RUNTIME_ERROR;
        if (workspace != nullptr) aclrtFree(workspace);
    }
    if (outcome.status != ACLNN_SUCCESS) outcome.message = aclGetRecentErrMsg();
    outcome.out = out->storage_bytes();
    return outcome;
}

std::vector<Outcome> run_on(const std::string& config, const std::vector<Case>& cases) {
    nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
    nnplug::test::TempFolder folder;
    const auto path = folder.write("config.yaml", config);
    std::vector<Outcome> outcomes;
    EXPECT_EQ(aclInit(path.c_str()), ACL_SUCCESS) << aclGetRecentErrMsg();
    for (const Case& c : cases) outcomes.push_back(run_case(c));
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    return outcomes;
}

float element(const std::vector<uint8_t>& bytes, aclDataType dtype, size_t i) {
    const int32_t abi = dtype == ACL_FLOAT16 ? NNPLUG_DTYPE_F16
                        : dtype == ACL_BF16  ? NNPLUG_DTYPE_BF16
                                             : NNPLUG_DTYPE_F32;
    return nnplug::load_as_f32(bytes.data(), abi, static_cast<int64_t>(i));
}

// Float32 target gradients without posWeight, contiguous: (-x) * g * w * scale exactly.
void expect_exact_target_gradient(const Case& c, const std::vector<uint8_t>& out, const std::string& where) {
    const size_t n = c.self.storage.size();
    const float scale = c.reduction == 1 ? nnplug::bce_mean_scale(static_cast<int64_t>(n)) : 1.0f;
    const size_t columns = static_cast<size_t>(c.self.view.empty() ? 1 : c.self.view.back());
    for (size_t i = 0; i < n; ++i) {
        const float g = c.grad.storage.size() == 1 ? c.grad.storage[0] : c.grad.storage[i];
        float r = (-c.self.storage[i]) * g;
        if (c.weight.present) {
            const size_t count = c.weight.storage.size();
            r = r * c.weight.storage[count == 1 ? 0 : count == n ? i : i % columns];
        }
        const float expected = r * scale;
        const float result = element(out, ACL_FLOAT, i);
        ASSERT_EQ(nnplug::float_bits(result), nnplug::float_bits(expected)) << where << " element " << i;
    }
}

TEST(BceWithLogitsAcrossBackends, GradientsAndLossesAreTheSameBytesOnCpuTbbAndAtlasEmuForAnyThreadCount) {
    const std::vector<Case> cases = random_cases();
    const char* const configs[] = {
        "backend: cpu_tbb\nbackends:\n  cpu_tbb:\n    threads: 1\n",
        "backend: cpu_tbb\nbackends:\n  cpu_tbb:\n    threads: 2\n    grain: 1024\n",
        "backend: atlas_emu\nbackends:\n  atlas_emu:\n    host_threads: 1\n",
        "backend: atlas_emu\nbackends:\n  atlas_emu:\n    host_threads: 2\n    vector_cores: 7\n",
    };
    std::vector<std::vector<Outcome>> runs;
    for (const char* config : configs) runs.push_back(run_on(config, cases));
    size_t exact_checked = 0;
    for (size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        const std::string where = c.name + " (case " + std::to_string(k) + ", op " +
                                  std::to_string(static_cast<int>(c.op)) + ", reduction " +
                                  std::to_string(c.reduction) + ")";
        const Outcome& reference = runs[0][k];
        ASSERT_EQ(reference.status, ACLNN_SUCCESS) << where << ": " << reference.message;
        const bool reduced = c.op == Op::kForward && c.reduction != 0;
        for (size_t r = 1; r < runs.size(); ++r) {
            const Outcome& other = runs[r][k];
            ASSERT_EQ(other.status, ACLNN_SUCCESS) << where << " on config " << r << ": " << other.message;
            if (!reduced) {
                EXPECT_EQ(other.out, reference.out)
                    << where << ": config " << r << " differs from cpu_tbb, 1 thread";
                continue;
            }
            const float a = element(reference.out, c.out.dtype, 0), b = element(other.out, c.out.dtype, 0);
            if (!std::isfinite(a)) {  // a float16 sum past 65504
                EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << where << ": " << a << " vs " << b;
                continue;
            }
            const double tolerance = c.out.dtype == ACL_FLOAT     ? 1e-6
                                     : c.out.dtype == ACL_FLOAT16 ? 1e-3
                                                                  : 8e-3;
            EXPECT_NEAR(b, a, tolerance * std::abs(a)) << where << ": the reduced loss on config " << r;
        }
        if (c.op == Op::kTargetBackward && c.self.dtype == ACL_FLOAT && !c.pos_weight.present &&
            c.name != "strided") {
            expect_exact_target_gradient(c, reference.out, where);
            ++exact_checked;
        }
        // Nothing left as it was: out started as zeros.
        bool written = false;
        for (size_t i = 0; !written && i < c.out.storage.size(); ++i)
            written = element(reference.out, c.out.dtype, i) != 0.0f;
        EXPECT_TRUE(written) << where;
    }
    EXPECT_GE(exact_checked, 5u);
}

}  // namespace
