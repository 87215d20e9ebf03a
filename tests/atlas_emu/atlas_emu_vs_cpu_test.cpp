// atlas_emu against cpu_tbb on the same inputs: the golden case lists of every op (dtype
// mixes, broadcasting, strided views, 0-d to 8-d, empty tensors, edge values) plus random
// cases large enough for many cores, many tiles and ragged tails, in every dtype. The ops
// whose every element is one canonical expression (the BCE backward, both with-logits
// gradients; op_catalog.h) must match bit for bit; the losses within 4 float32 ulp per
// element (one ulp of a 16-bit out) and rtol 1e-6 for sums.
#include <gtest/gtest.h>
#include <nnplug/dtype_convert.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acl_test_support.h"
#include "golden_cases.h"
#include "op_catalog.h"

namespace {

using nnplug::test::bits_at;
using nnplug::test::GoldenCase;
using nnplug::test::GoldenRun;
using nnplug::test::GoldenTensor;
using nnplug::test::ulp_distance;
using nnplug::test::value_of;

GoldenTensor random_tensor(const std::vector<int64_t>& storage_shape, const std::vector<int64_t>& view,
                           const std::vector<int64_t>& strides, aclDataType dtype, float low, float high,
                           std::mt19937& generator) {
    GoldenTensor t;
    t.present = true;
    t.dtype = dtype;
    t.view = view;
    t.strides = strides;
    t.storage_shape = storage_shape;
    std::uniform_real_distribution<float> values(low, high);
    std::vector<float> storage(static_cast<size_t>(nnplug::test::element_count(storage_shape)));
    for (float& v : storage) v = values(generator);
    t.storage = nnplug::test::encode(storage, dtype);
    return t;
}

GoldenTensor contiguous(const std::vector<int64_t>& shape, aclDataType dtype, float low, float high,
                        std::mt19937& generator) {
    return random_tensor(shape, shape, nnplug::test::contiguous_strides(shape), dtype, low, high, generator);
}

// Sizes around the 64-element core blocks and the tiles, up to many tiles per core.
std::vector<GoldenCase> random_cases() {
    std::vector<GoldenCase> cases;
    std::mt19937 generator(2024);
    const std::vector<std::vector<int64_t>> shapes = {{1}, {65}, {4097}, {3, 100003}};
    for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16})
        for (const auto& shape : shapes)
            for (bool backward : {true, false})
                for (int64_t reduction : {0, 1, 2}) {
                    GoldenCase c;
                    c.name = "random";
                    c.op = backward ? "binary_cross_entropy_backward" : "binary_cross_entropy";
                    c.attrs = {reduction};
                    const bool scalar_grad = reduction != 0;
                    if (backward)
                        c.tensors["gradOutput"] = scalar_grad ? contiguous({}, dtype, -2, 2, generator)
                                                              : contiguous(shape, dtype, -2, 2, generator);
                    c.tensors["self"] = contiguous(shape, dtype, 0.001f, 0.999f, generator);
                    c.tensors["target"] = contiguous(shape, dtype, 0, 1, generator);
                    // A weight over the last dimension, broadcast over the others.
                    const std::vector<int64_t> row = {shape.back()};
                    c.tensors["weight"] = contiguous(row, dtype, 0, 2, generator);
                    const bool reduced = !backward && reduction != 0;
                    c.tensors["out"] = reduced ? contiguous({}, dtype, 0, 0, generator)
                                               : contiguous(shape, dtype, 0, 0, generator);
                    cases.push_back(c);
                }
    // A transposed self and a strided out in float16, large enough for every core.
    GoldenCase strided;
    strided.name = "strided";
    strided.op = "binary_cross_entropy_backward";
    strided.attrs = {0};
    strided.tensors["gradOutput"] = contiguous({700, 300}, ACL_FLOAT16, -1, 1, generator);
    strided.tensors["self"] =
        random_tensor({300, 700}, {700, 300}, {1, 700}, ACL_FLOAT16, 0.01f, 0.99f, generator);
    strided.tensors["target"] = contiguous({700, 300}, ACL_BF16, 0, 1, generator);
    strided.tensors["out"] = random_tensor({700, 600}, {700, 300}, {600, 2}, ACL_FLOAT, 0, 0, generator);
    cases.push_back(strided);
    return cases;
}

// The with-logits ops: logits over [-12, 12], weight and posWeight over the last dimension
// (posWeight [C] against [N, C]), present or absent by turns.
std::vector<GoldenCase> random_with_logits_cases() {
    std::vector<GoldenCase> cases;
    std::mt19937 generator(2025);
    const std::vector<std::vector<int64_t>> shapes = {{1}, {65}, {4097}, {3, 100003}};
    int turn = 0;
    for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16})
        for (const auto& shape : shapes)
            for (const char* op :
                 {"binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits_backward",
                  "binary_cross_entropy_with_logits_target_backward"})
                for (int64_t reduction : {0, 1, 2}) {
                    GoldenCase c;
                    c.name = std::string("random_") + op;
                    c.op = op;
                    c.attrs = {reduction};
                    const bool loss = c.op == "binary_cross_entropy_with_logits";
                    if (!loss)
                        c.tensors["gradOutput"] = reduction != 0 ? contiguous({}, dtype, -2, 2, generator)
                                                                 : contiguous(shape, dtype, -2, 2, generator);
                    c.tensors["self"] = contiguous(shape, dtype, -12, 12, generator);
                    c.tensors["target"] = contiguous(shape, dtype, 0, 1, generator);
                    const std::vector<int64_t> row = {shape.back()};
                    ++turn;
                    if (turn % 3 != 0) c.tensors["weight"] = contiguous(row, dtype, 0, 2, generator);
                    if (turn % 4 != 0) c.tensors["posWeight"] = contiguous(row, dtype, 0.25f, 4, generator);
                    const bool reduced = loss && reduction != 0;
                    c.tensors[nnplug::test::op_named(op).output] =
                        reduced ? contiguous({}, dtype, 0, 0, generator)
                                : contiguous(shape, dtype, 0, 0, generator);
                    cases.push_back(c);
                }
    // A transposed self, a bfloat16 posWeight broadcast over rows and a strided float16 out.
    for (const char* op :
         {"binary_cross_entropy_with_logits_backward", "binary_cross_entropy_with_logits_target_backward",
          "binary_cross_entropy_with_logits"}) {
        GoldenCase strided;
        strided.name = std::string("strided_") + op;
        strided.op = op;
        strided.attrs = {0};
        if (strided.op != "binary_cross_entropy_with_logits")
            strided.tensors["gradOutput"] = contiguous({700, 300}, ACL_FLOAT, -1, 1, generator);
        strided.tensors["self"] =
            random_tensor({300, 700}, {700, 300}, {1, 700}, ACL_FLOAT, -10, 10, generator);
        strided.tensors["target"] = contiguous({700, 300}, ACL_FLOAT16, 0, 1, generator);
        strided.tensors["posWeight"] = contiguous({300}, ACL_BF16, 0.5f, 3, generator);
        strided.tensors[nnplug::test::op_named(op).output] =
            random_tensor({700, 600}, {700, 300}, {600, 2}, ACL_FLOAT16, 0, 0, generator);
        cases.push_back(strided);
    }
    return cases;
}

std::vector<GoldenRun> run_on(const std::string& backend, const std::vector<GoldenCase>& cases) {
    nnplug::test::ScopedEnvironment no_override("NNPLUG_BACKEND", nullptr);
    nnplug::test::TempFolder folder;
    const auto config = folder.write("config.yaml", "backend: " + backend + "\n");
    std::vector<GoldenRun> outcomes;
    EXPECT_EQ(aclInit(config.c_str()), ACL_SUCCESS) << aclGetRecentErrMsg();
    for (const GoldenCase& c : cases) outcomes.push_back(nnplug::test::run_golden_case(c));
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    return outcomes;
}

TEST(AtlasEmuVersusCpu, SameResultsOnTheGoldenAndRandomCaseLists) {
    auto cases = nnplug::test::load_golden_folder(NNPLUG_GOLDEN_DIR);
    ASSERT_GE(cases.size(), 200u);
    for (const auto& extra : {random_cases(), random_with_logits_cases()})
        cases.insert(cases.end(), extra.begin(), extra.end());
    for (const auto& op : nnplug::test::op_catalog()) {
        EXPECT_TRUE(
            std::any_of(cases.begin(), cases.end(), [&](const GoldenCase& c) { return c.op == op.name; }))
            << op.api << " has no cases to compare";
    }
    const auto cpu = run_on("cpu_tbb", cases);
    const auto emu = run_on("atlas_emu", cases);
    ASSERT_EQ(cpu.size(), cases.size());
    ASSERT_EQ(emu.size(), cases.size());
    size_t compared = 0;
    for (size_t k = 0; k < cases.size(); ++k) {
        const GoldenCase& c = cases[k];
        const std::string where = c.name + " (case " + std::to_string(k) + ")";
        ASSERT_EQ(cpu[k].status, ACLNN_SUCCESS) << where << ": " << cpu[k].message;
        ASSERT_EQ(emu[k].status, ACLNN_SUCCESS) << where << ": " << emu[k].message;
        const aclDataType dtype = c.tensors.at(nnplug::test::op_named(c.op).output).dtype;
        if (!c.expect_bits.empty() || nnplug::test::op_named(c.op).same_bits_on_every_backend) {
            EXPECT_EQ(emu[k].output, cpu[k].output)
                << where << ": the canonical expression differs from cpu_tbb";
            ++compared;
            continue;
        }
        const size_t count = cpu[k].output.size() / (dtype == ACL_FLOAT ? 4 : 2);
        for (size_t i = 0; i < count; ++i) {
            const uint32_t a = bits_at(cpu[k].output, dtype, i), b = bits_at(emu[k].output, dtype, i);
            const float x = value_of(a, dtype), y = value_of(b, dtype);
            if (std::isnan(x) || std::isnan(y)) {
                EXPECT_TRUE(std::isnan(x) && std::isnan(y)) << where << " element " << i;
            } else if (std::isinf(x) || std::isinf(y)) {
                EXPECT_EQ(y, x) << where << " element " << i << ": an infinity differs";
            } else if (c.attr("reduction") != 0 && dtype == ACL_FLOAT) {
                EXPECT_NEAR(y, x, 1e-6 * std::abs(x)) << where << ": the reduced loss";
            } else {
                EXPECT_LE(ulp_distance(a, b, dtype), dtype == ACL_FLOAT ? 4 : 1)
                    << where << " element " << i << ": " << x << " vs " << y;
            }
        }
        ++compared;
    }
    EXPECT_EQ(compared, cases.size());
}

}  // namespace
