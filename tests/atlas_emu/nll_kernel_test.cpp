// atlas_emu's NLLLoss kernel against cpu_tbb: the four NLL ops with a Unified Buffer small
// enough for several tiles per core and per row, every reduction, dtype, target dtype, with
// and without weights and ignored rows, bit for bit; its spans and tiling in the trace; an
// out-of-range target refused at synchronize; and tilings a wrong tile walk would fail.
#include <acl/acl.h>
#include <aclnnop/aclnn_nll_loss.h>
#include <aclnnop/aclnn_nll_loss2d.h>
#include <aclnnop/aclnn_nll_loss2d_backward.h>
#include <aclnnop/aclnn_nll_loss_backward.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;
using nnplug::test::ScopedEnvironment;
using nnplug::test::TempFolder;

constexpr float kSentinel = 1234.5f;

// One NLL problem: self (shape), its targets, weights (all 1 when unweighted), ignoreIndex.
struct Problem {
    std::string name;
    std::vector<int64_t> shape;  // (C), (N, C) or (N, C, H, W)
    aclDataType dtype = ACL_FLOAT;
    aclDataType target_dtype = ACL_INT64;
    std::vector<float> self, weights, target;
    int64_t ignore_index = -100;
    bool transposed = false;  // self a transposed view of a (C, N) storage

    std::vector<int64_t> target_shape() const {
        std::vector<int64_t> shape_of = shape;
        shape_of.erase(shape_of.begin() + (shape.size() == 1 ? 0 : 1));
        return shape_of;
    }
    int64_t classes() const { return shape.size() == 1 ? shape[0] : shape[1]; }
    int64_t rows() const { return static_cast<int64_t>(target.size()); }
    bool planes() const { return shape.size() == 4; }
};

// Random log-probabilities, targets (every eighth row ignored) and weights; the target of the
// first rows pinned to the classes given (tile edges).
Problem make_problem(std::string name, std::vector<int64_t> shape, aclDataType dtype,
                     aclDataType target_dtype, bool weighted, const std::vector<int64_t>& pinned = {}) {
    Problem p;
    p.name = std::move(name);
    p.shape = std::move(shape);
    p.dtype = dtype;
    p.target_dtype = target_dtype;
    std::mt19937 random(static_cast<uint32_t>(p.name.size() * 131 + p.shape.back()));
    std::uniform_real_distribution<float> value(-6.0f, 0.0f), weight(0.25f, 2.0f);
    int64_t numel = 1;
    for (const int64_t d : p.shape) numel *= d;
    p.self.resize(static_cast<size_t>(numel));
    for (float& v : p.self) v = value(random);
    p.weights.assign(static_cast<size_t>(p.classes()), 1.0f);  // the weight operand is required
    if (weighted)
        for (float& v : p.weights) v = weight(random);
    const int64_t rows = numel / p.classes();
    std::uniform_int_distribution<int64_t> cls(0, p.classes() - 1);
    p.ignore_index = p.classes() / 3;  // a class, so ignoring is what leaves it out
    for (int64_t r = 0; r < rows; ++r) {
        int64_t t = cls(random);
        if (r < static_cast<int64_t>(pinned.size()))
            t = pinned[static_cast<size_t>(r)];
        else if (r % 8 == 5)
            t = p.ignore_index;
        p.target.push_back(static_cast<float>(t));
    }
    return p;
}

// The self operand: contiguous, or an (N, C) view of a (C, N) storage.
std::unique_ptr<DeviceTensor> self_tensor(const Problem& p) {
    if (!p.transposed) return std::make_unique<DeviceTensor>(p.self, p.shape, p.dtype);
    const int64_t n = p.shape[0], c = p.shape[1];
    return std::make_unique<DeviceTensor>(p.self, std::vector<int64_t>{c, n}, p.shape,
                                          std::vector<int64_t>{1, n}, 0, p.dtype);
}

std::vector<float> filled(int64_t count) {
    return std::vector<float>(static_cast<size_t>(count), kSentinel);
}

using Outputs = std::vector<std::vector<uint8_t>>;

// The forward's out and totalWeight, then the backward's out (fed the forward's totalWeight).
aclnnStatus run_problem(const Problem& p, int64_t reduction, Outputs& outputs) {
    auto self = self_tensor(p);
    DeviceTensor target(p.target, p.target_shape(), p.target_dtype);
    DeviceTensor weight(p.weights, {p.classes()}, p.dtype);
    const std::vector<int64_t> loss_shape = reduction == 0 ? p.target_shape() : std::vector<int64_t>{};
    DeviceTensor out(filled(reduction == 0 ? p.rows() : 1), loss_shape, p.dtype);
    DeviceTensor total(filled(1), {}, p.dtype);
    uint64_t size = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus first = p.planes()
                            ? aclnnNLLLoss2dGetWorkspaceSize(*self, target, weight, reduction, p.ignore_index,
                                                             out, total, &size, &executor)
                            : aclnnNLLLossGetWorkspaceSize(*self, target, weight, reduction, p.ignore_index,
                                                           out, total, &size, &executor);
    aclnnStatus status =
        nnplug::test::run_executor(first, size, executor, p.planes() ? aclnnNLLLoss2d : aclnnNLLLoss);
    outputs.push_back(out.storage_bytes());
    outputs.push_back(total.storage_bytes());
    if (status != ACLNN_SUCCESS) return status;
    std::vector<float> grads(reduction == 0 ? static_cast<size_t>(p.rows()) : 1);
    for (size_t i = 0; i < grads.size(); ++i) grads[i] = 0.5f + 0.25f * static_cast<float>(i % 7);
    DeviceTensor grad(grads, loss_shape, p.dtype);
    DeviceTensor grad_in(filled(static_cast<int64_t>(p.self.size())), p.shape, p.dtype);
    first = p.planes()
                ? aclnnNLLLoss2dBackwardGetWorkspaceSize(grad, *self, target, weight, reduction,
                                                         p.ignore_index, total, grad_in, &size, &executor)
                : aclnnNLLLossBackwardGetWorkspaceSize(grad, *self, target, weight, reduction, p.ignore_index,
                                                       total, grad_in, &size, &executor);
    status = nnplug::test::run_executor(first, size, executor,
                                        p.planes() ? aclnnNLLLoss2dBackward : aclnnNLLLossBackward);
    outputs.push_back(grad_in.storage_bytes());
    return status;
}

// Every problem with every reduction between aclInit(config) and aclFinalize.
Outputs run_all(const std::string& config, const std::vector<Problem>& problems) {
    ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
    TempFolder folder;
    EXPECT_EQ(aclInit(folder.write("c.yaml", config).c_str()), ACL_SUCCESS) << aclGetRecentErrMsg();
    Outputs outputs;
    for (const Problem& p : problems)
        for (const int64_t reduction : {0, 1, 2})
            EXPECT_EQ(run_problem(p, reduction, outputs), ACLNN_SUCCESS)
                << p.name << " reduction " << reduction << ": " << aclGetRecentErrMsg();
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    return outputs;
}

std::string emu_config(const std::string& options) {
    return "backend: atlas_emu\nbackends:\n  atlas_emu:\n" + options;
}

std::string read_text(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// atlas_emu with options (and a trace) against cpu_tbb; returns the trace.
std::string expect_same_bits(const std::vector<Problem>& problems, const std::string& options) {
    const Outputs cpu = run_all("backend: cpu_tbb\n", problems);
    TempFolder folder;
    const std::string trace = (folder.path() / "trace.json").string();
    const Outputs emu = run_all(emu_config(options + "    trace: " + trace + "\n"), problems);
    EXPECT_EQ(emu.size(), cpu.size());
    const char* names[] = {"out", "totalWeight", "gradient"};
    for (size_t i = 0; i < std::min(cpu.size(), emu.size()); ++i) {
        const size_t call = i / 3;
        EXPECT_EQ(emu[i], cpu[i]) << problems[call / 3].name << " reduction " << call % 3 << ": "
                                  << names[i % 3] << " differs from cpu_tbb";
    }
    return read_text(trace);
}

// Whether float32 output bytes still hold the sentinel everywhere.
bool untouched(const std::vector<uint8_t>& bytes) {
    for (size_t at = 0; at + 4 <= bytes.size(); at += 4) {
        float value;
        std::memcpy(&value, bytes.data() + at, 4);
        if (value != kSentinel) return false;
    }
    return !bytes.empty();
}

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::vector<Problem> tiled_problems() {
    std::vector<Problem> problems;
    for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        problems.push_back(make_problem("rows", {300, 700}, dtype, ACL_INT64, true));
        problems.push_back(make_problem("rows_i32", {97, 301}, dtype, ACL_INT32, false));
        problems.push_back(make_problem("rows_u8", {130, 250}, dtype, ACL_UINT8, true));
        problems.push_back(make_problem("one_row", {1000}, dtype, ACL_INT64, true));
        problems.push_back(make_problem("narrow_rows", {1000, 5}, dtype, ACL_INT32, true));
        problems.push_back(make_problem("planes", {3, 5, 7, 11}, dtype, ACL_INT64, true));
        problems.push_back(make_problem("planes_u8", {2, 19, 9, 30}, dtype, ACL_UINT8, false));
    }
    Problem transposed = make_problem("transposed", {90, 70}, ACL_FLOAT, ACL_INT64, true);
    transposed.transposed = true;
    problems.push_back(transposed);
    return problems;
}

// 1 KiB of UB on three cores: several target tiles per core, rows of 250 or more float32
// classes in several tiles along the classes, planes in several runs of positions.
TEST(AtlasEmuNllKernel, ASmallUnifiedBufferGivesCpuTbbsBits) {
    const std::string trace = expect_same_bits(tiled_problems(), "    ub_kib: 1\n    vector_cores: 3\n");
    EXPECT_FALSE(mentions(trace, "\"rowModel\":true")) << "a contiguous NLL call ran in the row model";
}

// The trace names the kernels and shows their tiling: the (1000, 700) float32 backward on 1 KiB
// takes 4 tiles of 192 classes per row, the 2d backward runs of positions, one tile per class.
TEST(AtlasEmuNllKernel, TheTraceShowsTheNllTiling) {
    const std::vector<Problem> problems = {make_problem("rows", {6, 700}, ACL_FLOAT, ACL_INT64, true),
                                           make_problem("planes", {2, 5, 8, 10}, ACL_FLOAT, ACL_INT64, true)};
    const std::string json = expect_same_bits(problems, "    ub_kib: 1\n    vector_cores: 2\n");
    for (const char* part :
         {"\"name\":\"aclnnNLLLoss\"", "\"name\":\"NLLLoss\"", "\"name\":\"NLLLossGrad\"",
          "\"name\":\"NLLLoss2d\"", "\"name\":\"NLLLoss2dGrad\"", "\"blockDim\":2", "\"rowsPerCore\":3",
          "\"tileElements\":192", "\"tilesPerRow\":4", "\"layout\":\"rows\"", "\"layout\":\"planes\"",
          "\"tilesPerRow\":5", "\"tiles\":12"})
        EXPECT_TRUE(mentions(json, part)) << part << "\n" << json.substr(0, 3000);
}

// Tile walks a wrong kernel would get wrong: targets at the first and last class of a tile,
// in a last partial tile, classes not a whole number of 32-byte blocks, runs of positions
// split inside a plane and across cores.
TEST(AtlasEmuNllKernel, TargetsAtTileEdgesGiveCpuTbbsBits) {
    std::vector<Problem> problems;
    for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16}) {
        problems.push_back(
            make_problem("edges", {12, 21}, dtype, ACL_INT64, true, {0, 7, 8, 15, 16, 20, 19, 1}));
        problems.push_back(make_problem("edges_i32", {9, 13}, dtype, ACL_INT32, false, {7, 8, 12, 0, 6}));
        problems.push_back(make_problem("one_row", {21}, dtype, ACL_UINT8, true, {16}));
        problems.push_back(
            make_problem("planes", {2, 3, 5, 5}, dtype, ACL_INT64, true, {2, 2, 1, 0, 0, 2, 1, 2, 0}));
    }
    // Tiles of 8 elements: 21 classes are 8 + 8 + 5, 13 are 8 + 5; 25 positions are runs of
    // 8, 8, 8 and 1 (fewer where a core's rows begin inside a plane).
    expect_same_bits(problems, "    tile_elements: 8\n    vector_cores: 5\n");
    // Tiles of 3 float16 elements: copies of 6 bytes, not a whole 32-byte block.
    expect_same_bits(problems, "    tile_elements: 3\n    vector_cores: 2\n");
}

// A target outside the classes fails the stream at its synchronize with cpu_tbb's one-line
// refusal, and no output is written.
TEST(AtlasEmuNllKernel, AnOutOfRangeTargetIsRefusedAtSynchronize) {
    for (const bool planes : {false, true}) {
        std::vector<std::string> messages;
        for (const std::string& config : {std::string("backend: cpu_tbb\n"), emu_config("    ub_kib: 1\n")}) {
            ScopedEnvironment no_backend("NNPLUG_BACKEND", nullptr);
            TempFolder folder;
            ASSERT_EQ(aclInit(folder.write("c.yaml", config).c_str()), ACL_SUCCESS) << aclGetRecentErrMsg();
            Problem p = planes ? make_problem("planes", {2, 4, 3, 3}, ACL_FLOAT, ACL_INT64, true)
                               : make_problem("rows", {40, 9}, ACL_FLOAT, ACL_INT64, true);
            p.target[13] = static_cast<float>(p.classes());
            for (const int64_t reduction : {0, 1}) {
                Outputs outputs;
                EXPECT_NE(run_problem(p, reduction, outputs), ACLNN_SUCCESS);
                messages.emplace_back(aclGetRecentErrMsg());
                ASSERT_EQ(outputs.size(), 2u) << "the backward ran after a refused forward";
                for (const auto& bytes : outputs) EXPECT_TRUE(untouched(bytes)) << config;
            }
            EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
        }
        ASSERT_EQ(messages.size(), 4u);
        const std::string op = planes ? "aclnnNLLLoss2d" : "aclnnNLLLoss";
        const std::string refusal = op + ": target element 13 is " + (planes ? "4" : "9") +
                                    ", not a class index in [0, " + (planes ? "4" : "9") +
                                    ") nor ignoreIndex " + (planes ? "1" : "3");
        for (const std::string& message : messages) {
            EXPECT_TRUE(mentions(message, refusal)) << message;
            EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        }
        EXPECT_EQ(messages[2], "aclrtSynchronizeStream: " + refusal);
        EXPECT_EQ(messages[3], "aclrtSynchronizeStream: " + refusal);
    }
}

}  // namespace
