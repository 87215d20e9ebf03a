// The first-phase checks of the three with-logits ops in their order
// (docs/ops/binary_cross_entropy_with_logits.md, "First-phase checks"), each with its status
// code and its exact message; empty tensors; bfloat16 on a SoC without it. A refused call
// hands out no executor and writes nothing into its output.
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "acl_test_support.h"
#include "op_catalog.h"

namespace {

using nnplug::test::DeviceTensor;

constexpr float kSentinel = 1234.5f;
const std::string kLoss = "aclnnBinaryCrossEntropyWithLogits";
const std::string kBackward = "aclnnBinaryCrossEntropyWithLogitsBackward";
const std::string kTargetBackward = "aclnnBinaryCrossEntropyWithLogitsTargetBackward";

std::string message() {
    return aclGetRecentErrMsg();
}

std::vector<float> values(size_t count, float value) {
    return std::vector<float>(count, value);
}

// Device memory and a view over it with any dtype, format and shape (DeviceTensor makes
// floating ND tensors only).
class RawTensor {
public:
    RawTensor(const std::vector<int64_t>& shape, aclDataType dtype, aclFormat format = ACL_FORMAT_ND) {
        const auto strides = nnplug::test::contiguous_strides(shape);
        const int64_t count = nnplug::test::element_count(shape);
        EXPECT_EQ(aclrtMalloc(&device_, std::max<size_t>(64, static_cast<size_t>(count) * 8),
                              ACL_MEM_MALLOC_HUGE_FIRST),
                  ACL_SUCCESS);
        tensor_ = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, format, shape.data(),
                                  shape.size(), device_);
        EXPECT_NE(tensor_, nullptr) << message();
    }
    ~RawTensor() {
        aclDestroyTensor(tensor_);
        aclrtFree(device_);
    }
    RawTensor(const RawTensor&) = delete;
    RawTensor& operator=(const RawTensor&) = delete;
    operator aclTensor*() const { return tensor_; }

private:
    void* device_ = nullptr;
    aclTensor* tensor_ = nullptr;
};

enum class Op { kLoss, kBackward, kTargetBackward };

const std::string& api(Op op) {
    return op == Op::kLoss ? kLoss : op == Op::kBackward ? kBackward : kTargetBackward;
}

// The arguments of one call; the loss ignores grad.
struct Call {
    const aclTensor* grad;
    const aclTensor* self;
    const aclTensor* target;
    const aclTensor* weight;
    const aclTensor* pos_weight;
    int64_t reduction;
    aclTensor* out;
};

aclnnStatus first_phase(Op op, const Call& c, uint64_t* workspace, aclOpExecutor** executor) {
    switch (op) {
        case Op::kLoss:
            return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(c.self, c.target, c.weight, c.pos_weight,
                                                                     c.reduction, c.out, workspace, executor);
        case Op::kBackward:
            return aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
                c.grad, c.self, c.target, c.weight, c.pos_weight, c.reduction, c.out, workspace, executor);
        case Op::kTargetBackward:
            return aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
                c.grad, c.self, c.target, c.weight, c.pos_weight, c.reduction, c.out, workspace, executor);
    }
    return ACLNN_ERR_INNER;
}

aclnnStatus second_phase(Op op, void* workspace, uint64_t size, aclOpExecutor* executor) {
    switch (op) {
        case Op::kLoss:
            return aclnnBinaryCrossEntropyWithLogits(workspace, size, executor, nullptr);
        case Op::kBackward:
            return aclnnBinaryCrossEntropyWithLogitsBackward(workspace, size, executor, nullptr);
        case Op::kTargetBackward:
            return aclnnBinaryCrossEntropyWithLogitsTargetBackward(workspace, size, executor, nullptr);
    }
    return ACLNN_ERR_INNER;
}

// The first phase refuses the call with `status` and exactly `text` after the op's name;
// it hands out no executor and leaves every given output's storage as it was.
void expect_refused(Op op, const Call& call, aclnnStatus status, const std::string& text,
                    std::initializer_list<const DeviceTensor*> outputs = {}) {
    std::vector<std::vector<uint8_t>> before;
    for (const DeviceTensor* out : outputs) before.push_back(out->storage_bytes());
    uint64_t workspace = 77;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(first_phase(op, call, &workspace, &executor), status) << message();
    EXPECT_EQ(message(), api(op) + ": " + text);
    EXPECT_EQ(executor, nullptr) << "a refused call hands out no executor";
    size_t k = 0;
    for (const DeviceTensor* out : outputs)
        EXPECT_EQ(out->storage_bytes(), before[k++]) << "a refused call writes nothing";
}

// For both gradients: the name their output has in messages.
const char* output_name(Op op) {
    return op == Op::kTargetBackward ? "gradTarget" : "out";
}

// Valid [4,5] float32 operands: gradOutput, self, target, weight [5], posWeight [5], an out of
// self's shape (the gradients, the loss with none) and a 0-d one (the reduced loss).
struct Operands {
    DeviceTensor g{values(20, 0.5f), {4, 5}}, s{values(20, 0.3f), {4, 5}}, t{values(20, 0.25f), {4, 5}};
    DeviceTensor w{values(5, 2.0f), {5}}, p{values(5, 3.0f), {5}};
    DeviceTensor out{values(20, kSentinel), {4, 5}}, loss{values(1, kSentinel), {}};
};

class BceWithLogitsChecks : public nnplug::test::RuntimeTest {
protected:
    void SetUp() override {
        RuntimeTest::SetUp();
        operands_ = std::make_unique<Operands>();
    }
    void TearDown() override {
        operands_.reset();  // device memory goes before aclFinalize
        RuntimeTest::TearDown();
    }
    Operands& operands() { return *operands_; }

    // A valid call of op, out chosen by the reduction.
    Call full(Op op, int64_t reduction = 0) {
        Operands& o = *operands_;
        return Call{o.g,
                    o.s,
                    o.t,
                    o.w,
                    o.p,
                    reduction,
                    op == Op::kLoss && reduction != 0 ? o.loss.get() : o.out.get()};
    }

private:
    std::unique_ptr<Operands> operands_;
};

const Op kGradients[] = {Op::kBackward, Op::kTargetBackward};
const Op kAll[] = {Op::kLoss, Op::kBackward, Op::kTargetBackward};

// --- 1. null -------------------------------------------------------------------------

TEST_F(BceWithLogitsChecks, NullRequiredTensorsAreNullptrErrors) {
    auto& [g, s, t, w, p, out, loss] = operands();
    for (Op op : kAll) {
        Call c = full(op);
        c.self = nullptr;
        expect_refused(op, c, ACLNN_ERR_PARAM_NULLPTR, "self is null", {&out});
        c = full(op);
        c.target = nullptr;
        expect_refused(op, c, ACLNN_ERR_PARAM_NULLPTR, "target is null", {&out});
        c = full(op);
        c.out = nullptr;
        expect_refused(op, c, ACLNN_ERR_PARAM_NULLPTR, std::string(output_name(op)) + " is null");
    }
    for (Op op : kGradients) {
        Call c = full(op);
        c.grad = nullptr;
        expect_refused(op, c, ACLNN_ERR_PARAM_NULLPTR, "gradOutput is null", {&out});
    }
}

TEST_F(BceWithLogitsChecks, NullWorkspaceSizeOrExecutorIsNullptrError) {
    for (Op op : kAll) {
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(first_phase(op, full(op), nullptr, &executor), ACLNN_ERR_PARAM_NULLPTR);
        EXPECT_EQ(message(), api(op) + ": workspaceSize is null");
        EXPECT_EQ(first_phase(op, full(op), &workspace, nullptr), ACLNN_ERR_PARAM_NULLPTR);
        EXPECT_EQ(message(), api(op) + ": executor is null");
        EXPECT_EQ(executor, nullptr);
    }
}

TEST_F(BceWithLogitsChecks, OptionalWeightAndPosWeightMayBeNull) {
    for (Op op : kAll) {
        for (int absent = 0; absent < 4; ++absent) {
            Call c = full(op);
            if (absent & 1) c.weight = nullptr;
            if (absent & 2) c.pos_weight = nullptr;
            uint64_t workspace = 0;
            aclOpExecutor* executor = nullptr;
            EXPECT_EQ(first_phase(op, c, &workspace, &executor), ACLNN_SUCCESS) << message();
            EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
        }
    }
}

// --- dtypes --------------------------------------------------------------------------

TEST_F(BceWithLogitsChecks, DtypesOutsideFloat32Float16Bfloat16AreInvalid) {
    auto& [g, s, t, w, p, out, loss] = operands();
    RawTensor int_target({4, 5}, ACL_INT32), double_pos({5}, ACL_DOUBLE), int8_self({4, 5}, ACL_INT8);
    RawTensor int64_out({4, 5}, ACL_INT64), double_grad({4, 5}, ACL_DOUBLE), bool_weight({5}, ACL_BOOL);
    for (Op op : kAll) {
        Call c = full(op);
        c.target = int_target;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "target has dtype int32; expected float32, float16 or bfloat16", {&out});
        c = full(op);
        c.pos_weight = double_pos;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "posWeightOptional has dtype float64; expected float32, float16 or bfloat16", {&out});
        c = full(op);
        c.weight = bool_weight;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "weightOptional has dtype bool; expected float32, float16 or bfloat16", {&out});
        c = full(op);
        c.self = int8_self;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "self has dtype int8; expected float32, float16 or bfloat16", {&out});
        c = full(op);
        c.out = int64_out;
        expect_refused(
            op, c, ACLNN_ERR_PARAM_INVALID,
            std::string(output_name(op)) + " has dtype int64; expected float32, float16 or bfloat16");
    }
    for (Op op : kGradients) {
        Call c = full(op);
        c.grad = double_grad;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "gradOutput has dtype float64; expected float32, float16 or bfloat16", {&out});
    }
}

TEST_F(BceWithLogitsChecks, OutputDtypeMustEqualTargetDtype) {
    auto& [g, s, t, w, p, out, loss] = operands();
    DeviceTensor t16(values(20, 0.25f), {4, 5}, ACL_FLOAT16),
        out16(values(20, kSentinel), {4, 5}, ACL_FLOAT16);
    DeviceTensor loss_bf16(values(1, kSentinel), {}, ACL_BF16);
    for (Op op : kAll) {
        Call c = full(op);
        c.target = t16;  // float16 target, float32 output
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       std::string(output_name(op)) +
                           " has dtype float32 but target has dtype float16; they must be "
                           "equal",
                       {&out});
        c = full(op);
        c.out = out16;  // float32 target, float16 output, although float32 casts to float16
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       std::string(output_name(op)) +
                           " has dtype float16 but target has dtype float32; they must be "
                           "equal",
                       {&out16});
    }
    Call c = full(Op::kLoss, 2);
    c.out = loss_bf16;
    expect_refused(Op::kLoss, c, ACLNN_ERR_PARAM_INVALID,
                   "out has dtype bfloat16 but target has dtype float32; they must be equal", {&loss_bf16});
    // Any mix of the inputs is fine while the output follows target.
    DeviceTensor s_bf16(values(20, 0.3f), {4, 5}, ACL_BF16), w16(values(5, 2.0f), {5}, ACL_FLOAT16);
    for (Op op : kAll) {
        c = full(op);
        c.self = s_bf16;
        c.weight = w16;
        c.target = t16;
        c.out = out16;
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(first_phase(op, c, &workspace, &executor), ACLNN_SUCCESS) << message();
        EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    }
}

// --- reduction -----------------------------------------------------------------------

TEST_F(BceWithLogitsChecks, ReductionMustBeNoneMeanOrSum) {
    auto& [g, s, t, w, p, out, loss] = operands();
    for (Op op : kAll) {
        for (int64_t reduction : {int64_t{3}, int64_t{-1}, int64_t{1} << 40}) {
            Call c = full(op);
            c.reduction = reduction;
            expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                           "reduction " + std::to_string(reduction) + " is not 0 (none), 1 (mean) or 2 (sum)",
                           {&out});
        }
    }
}

// --- ranks and shapes ----------------------------------------------------------------

TEST_F(BceWithLogitsChecks, MoreThanEightDimensionsAreInvalid) {
    auto& [g, s, t, w, p, out, loss] = operands();
    const std::vector<int64_t> nine(9, 1);
    DeviceTensor s9(values(1, 0.3f), nine), t9(values(1, 0.25f), nine), out9(values(1, kSentinel), nine);
    DeviceTensor p9(values(1, 3.0f), nine), one(values(1, 1.0f), {1});
    for (Op op : kAll) {
        expect_refused(op, Call{one, s9, t9, nullptr, nullptr, 0, out9}, ACLNN_ERR_PARAM_INVALID,
                       "self has 9 dimensions; at most 8 are supported", {&out9});
        Call c = full(op);
        c.pos_weight = p9;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "posWeightOptional has 9 dimensions; at most 8 are supported", {&out});
    }
    // Eight are fine.
    const std::vector<int64_t> eight = {2, 1, 2, 1, 1, 2, 1, 3};
    DeviceTensor s8(values(24, 0.3f), eight), t8(values(24, 0.25f), eight),
        out8(values(24, kSentinel), eight);
    DeviceTensor p3(values(3, 3.0f), {3});
    for (Op op : kAll) {
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(first_phase(op, Call{one, s8, t8, nullptr, p3, 0, out8}, &workspace, &executor),
                  ACLNN_SUCCESS)
            << message();
        EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    }
}

TEST_F(BceWithLogitsChecks, TargetMustHaveSelfsShape) {
    auto& [g, s, t, w, p, out, loss] = operands();
    DeviceTensor row(values(5, 0.25f), {5}), transposed(values(20, 0.25f), {5, 4});
    for (Op op : kAll) {
        Call c = full(op);
        c.target = row;  // broadcastable, but not self's shape
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID, "target shape [5] must equal self shape [4,5]",
                       {&out});
        c.target = transposed;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID, "target shape [5,4] must equal self shape [4,5]",
                       {&out});
    }
}

TEST_F(BceWithLogitsChecks, WeightAndPosWeightMustBroadcastToSelf) {
    auto& [g, s, t, w, p, out, loss] = operands();
    DeviceTensor column(values(4, 1.0f), {4}), three(values(3, 1.0f), {3}), big(values(40, 1.0f), {2, 4, 5});
    DeviceTensor column_ok(values(4, 1.0f), {4, 1});
    for (Op op : kAll) {
        Call c = full(op);
        c.weight = column;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "weightOptional shape [4] cannot broadcast to self shape [4,5]", {&out});
        c = full(op);
        c.pos_weight = three;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "posWeightOptional shape [3] cannot broadcast to self shape [4,5]", {&out});
        // Broadcasting goes one way: to self's shape, never beyond it.
        c = full(op);
        c.pos_weight = big;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "posWeightOptional shape [2,4,5] cannot broadcast to self shape [4,5]", {&out});
        c = full(op);
        c.weight = column_ok;
        c.pos_weight = column_ok;
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(first_phase(op, c, &workspace, &executor), ACLNN_SUCCESS) << message();
        EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    }
}

TEST_F(BceWithLogitsChecks, GradOutputMustBroadcastToSelf) {
    auto& [g, s, t, w, p, out, loss] = operands();
    DeviceTensor column(values(4, 1.0f), {4}), one(values(1, 1.0f), {1});
    DeviceTensor scalar_self(values(1, 0.3f), {}), scalar_target(values(1, 0.25f), {});
    DeviceTensor scalar_out(values(1, kSentinel), {});
    for (Op op : kGradients) {
        Call c = full(op);
        c.grad = column;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       "gradOutput shape [4] cannot broadcast to self shape [4,5]", {&out});
        // A 0-d self takes only a 0-d gradOutput.
        expect_refused(op, Call{one, scalar_self, scalar_target, nullptr, nullptr, 1, scalar_out},
                       ACLNN_ERR_PARAM_INVALID, "gradOutput shape [1] cannot broadcast to self shape []",
                       {&scalar_out});
    }
}

TEST_F(BceWithLogitsChecks, OutputShapeFollowsTheReduction) {
    auto& [g, s, t, w, p, out, loss] = operands();
    DeviceTensor wrong(values(20, kSentinel), {5, 4}), pair(values(2, kSentinel), {2}),
        one(values(1, kSentinel), {1});
    DeviceTensor one_by_one(values(1, kSentinel), {1, 1});
    for (Op op : kAll) {
        for (int64_t reduction : {0, 1, 2}) {
            if (op == Op::kLoss && reduction != 0) continue;
            Call c = full(op, reduction);
            c.out = wrong;
            expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                           std::string(output_name(op)) + " shape [5,4] must be self's shape [4,5]",
                           {&wrong});
        }
    }
    // The reduced loss: 0-d or [1], nothing else of one element either.
    for (int64_t reduction : {1, 2}) {
        Call c = full(Op::kLoss, reduction);
        c.out = pair;
        expect_refused(Op::kLoss, c, ACLNN_ERR_PARAM_INVALID,
                       "out shape [2] must be [] or [1] for a reduced loss", {&pair});
        c.out = one_by_one;
        expect_refused(Op::kLoss, c, ACLNN_ERR_PARAM_INVALID,
                       "out shape [1,1] must be [] or [1] for a reduced loss", {&one_by_one});
        c.out = out;  // self's shape is not a reduced shape
        expect_refused(Op::kLoss, c, ACLNN_ERR_PARAM_INVALID,
                       "out shape [4,5] must be [] or [1] for a reduced loss", {&out});
        c.out = one;
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(first_phase(Op::kLoss, c, &workspace, &executor), ACLNN_SUCCESS) << message();
        EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    }
    // With none the loss has self's shape.
    Call c = full(Op::kLoss, 0);
    c.out = loss;
    expect_refused(Op::kLoss, c, ACLNN_ERR_PARAM_INVALID, "out shape [] must be self's shape [4,5]", {&loss});
}

// --- formats (the gradients) ---------------------------------------------------------

TEST_F(BceWithLogitsChecks, GradientsWantSelfTargetAndOutputInOneFormat) {
    auto& [g, s, t, w, p, out, loss] = operands();
    RawTensor nchw_target({4, 5}, ACL_FLOAT, ACL_FORMAT_NCHW), nhwc_out({4, 5}, ACL_FLOAT, ACL_FORMAT_NHWC);
    RawTensor nchw_weight({5}, ACL_FLOAT, ACL_FORMAT_NCHW), nchw_grad({4, 5}, ACL_FLOAT, ACL_FORMAT_NCHW);
    for (Op op : kGradients) {
        Call c = full(op);
        c.target = nchw_target;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID, "target has format NCHW but self has format ND",
                       {&out});
        c = full(op);
        c.out = nhwc_out;
        expect_refused(op, c, ACLNN_ERR_PARAM_INVALID,
                       std::string(output_name(op)) + " has format NHWC but self has format ND");
        // gradOutput, weight and posWeight may be in any format.
        c = full(op);
        c.grad = nchw_grad;
        c.weight = nchw_weight;
        c.pos_weight = nchw_weight;
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(first_phase(op, c, &workspace, &executor), ACLNN_SUCCESS) << message();
        EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    }
    // The loss has no format check.
    Call c = full(Op::kLoss);
    c.target = nchw_target;
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(first_phase(Op::kLoss, c, &workspace, &executor), ACLNN_SUCCESS) << message();
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
}

// --- the order of the checks ---------------------------------------------------------

// The loss: null, dtypes, reduction, then ranks and shapes.
TEST_F(BceWithLogitsChecks, TheLossReportsTheFirstFailingCheckInItsOrder) {
    auto& [g, s, t, w, p, out, loss] = operands();
    RawTensor int_target({4, 5}, ACL_INT32), int_nine(std::vector<int64_t>(9, 1), ACL_INT32);
    DeviceTensor nine(values(1, 0.3f), std::vector<int64_t>(9, 1)),
        t16(values(20, 0.25f), {4, 5}, ACL_FLOAT16);
    DeviceTensor wrong(values(20, kSentinel), {5, 4}), row(values(5, 0.25f), {5});
    const Op op = Op::kLoss;
    // null before dtype
    expect_refused(op, Call{nullptr, s, int_target, nullptr, nullptr, 9, nullptr}, ACLNN_ERR_PARAM_NULLPTR,
                   "out is null");
    // dtype before reduction before rank and shape
    expect_refused(op, Call{nullptr, nine, int_target, nullptr, nullptr, 9, wrong}, ACLNN_ERR_PARAM_INVALID,
                   "target has dtype int32; expected float32, float16 or bfloat16", {&wrong});
    expect_refused(op, Call{nullptr, s, t16, nullptr, nullptr, 9, wrong}, ACLNN_ERR_PARAM_INVALID,
                   "out has dtype float32 but target has dtype float16; they must be equal", {&wrong});
    // a 9-d tensor with a valid dtype: the reduction comes first, then the rank
    expect_refused(op, Call{nullptr, nine, row, nullptr, nullptr, 9, wrong}, ACLNN_ERR_PARAM_INVALID,
                   "reduction 9 is not 0 (none), 1 (mean) or 2 (sum)", {&wrong});
    expect_refused(op, Call{nullptr, nine, row, nullptr, nullptr, 0, wrong}, ACLNN_ERR_PARAM_INVALID,
                   "self has 9 dimensions; at most 8 are supported", {&wrong});
    // a 9-d int32 tensor is a dtype error first
    expect_refused(op, Call{nullptr, s, t, int_nine, nullptr, 0, out}, ACLNN_ERR_PARAM_INVALID,
                   "weightOptional has dtype int32; expected float32, float16 or bfloat16", {&out});
    // reduction before shapes
    expect_refused(op, Call{nullptr, s, row, nullptr, nullptr, 5, wrong}, ACLNN_ERR_PARAM_INVALID,
                   "reduction 5 is not 0 (none), 1 (mean) or 2 (sum)", {&wrong});
}

// The gradients: null, ranks, dtypes, formats, shapes, reduction.
TEST_F(BceWithLogitsChecks, TheGradientsReportTheFirstFailingCheckInTheirOrder) {
    auto& [g, s, t, w, p, out, loss] = operands();
    RawTensor int_target({4, 5}, ACL_INT32), int_nine(std::vector<int64_t>(9, 1), ACL_INT32);
    RawTensor nchw_target({4, 5}, ACL_FLOAT, ACL_FORMAT_NCHW), nchw_row({5}, ACL_FLOAT, ACL_FORMAT_NCHW);
    DeviceTensor nine(values(1, 0.3f), std::vector<int64_t>(9, 1)), wrong(values(20, kSentinel), {5, 4});
    DeviceTensor t16(values(20, 0.25f), {4, 5}, ACL_FLOAT16), column(values(4, 1.0f), {4});
    for (Op op : kGradients) {
        const std::string output = output_name(op);
        // null before rank
        expect_refused(op, Call{g, s, int_nine, nullptr, nullptr, 9, nullptr}, ACLNN_ERR_PARAM_NULLPTR,
                       output + " is null");
        // rank before dtype
        expect_refused(op, Call{g, s, int_nine, nullptr, nullptr, 9, wrong}, ACLNN_ERR_PARAM_INVALID,
                       "target has 9 dimensions; at most 8 are supported", {&wrong});
        // dtype before format, shape and reduction
        expect_refused(op, Call{g, s, int_target, nullptr, nullptr, 9, wrong}, ACLNN_ERR_PARAM_INVALID,
                       "target has dtype int32; expected float32, float16 or bfloat16", {&wrong});
        expect_refused(op, Call{g, s, t16, nullptr, nullptr, 9, wrong}, ACLNN_ERR_PARAM_INVALID,
                       output + " has dtype float32 but target has dtype float16; they must be equal",
                       {&wrong});
        // format before shape and reduction
        expect_refused(op, Call{g, s, nchw_target, nullptr, nullptr, 9, wrong}, ACLNN_ERR_PARAM_INVALID,
                       "target has format NCHW but self has format ND", {&wrong});
        expect_refused(op, Call{column, s, nchw_row, nullptr, nullptr, 9, out}, ACLNN_ERR_PARAM_INVALID,
                       "target has format NCHW but self has format ND", {&out});
        // shape before reduction
        expect_refused(op, Call{column, s, t, nullptr, nullptr, 9, out}, ACLNN_ERR_PARAM_INVALID,
                       "gradOutput shape [4] cannot broadcast to self shape [4,5]", {&out});
        expect_refused(op, Call{g, s, t, nullptr, column, 9, out}, ACLNN_ERR_PARAM_INVALID,
                       "posWeightOptional shape [4] cannot broadcast to self shape [4,5]", {&out});
        expect_refused(op, Call{g, s, t, nullptr, nullptr, 9, out}, ACLNN_ERR_PARAM_INVALID,
                       "reduction 9 is not 0 (none), 1 (mean) or 2 (sum)", {&out});
    }
}

// --- empty self ----------------------------------------------------------------------

TEST_F(BceWithLogitsChecks, TheLossChecksTargetsShapeEvenWhenSelfIsEmpty) {
    auto& [g, s, t, w, p, out, loss] = operands();
    DeviceTensor s0(values(0, 0), {0, 3}), t0(values(0, 0), {0, 4}), out0(values(0, 0), {0, 3});
    expect_refused(Op::kLoss, Call{nullptr, s0, t0, nullptr, nullptr, 0, out0}, ACLNN_ERR_PARAM_INVALID,
                   "target shape [0,4] must equal self shape [0,3]");
    expect_refused(Op::kLoss, Call{nullptr, s0, t0, nullptr, nullptr, 1, loss}, ACLNN_ERR_PARAM_INVALID,
                   "target shape [0,4] must equal self shape [0,3]", {&loss});
    // The reduced out is written (NaN or 0), so its shape is checked too.
    DeviceTensor t_ok(values(0, 0), {0, 3}), pair(values(2, kSentinel), {2});
    expect_refused(Op::kLoss, Call{nullptr, s0, t_ok, nullptr, nullptr, 2, pair}, ACLNN_ERR_PARAM_INVALID,
                   "out shape [2] must be [] or [1] for a reduced loss", {&pair});
    // weight and posWeight are never read: their shapes are not checked.
    DeviceTensor seven(values(7, 1.0f), {7});
    uint64_t workspace = 99;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(first_phase(Op::kLoss, Call{nullptr, s0, t_ok, seven, seven, 2, loss}, &workspace, &executor),
              ACLNN_SUCCESS)
        << message();
    EXPECT_EQ(workspace, 0u);
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
}

TEST_F(BceWithLogitsChecks, EmptySelfSucceedsWithNoWorkspace) {
    auto& [g, s, t, w, p, out, loss] = operands();
    DeviceTensor s0(values(0, 0), {0, 5}), t0(values(0, 0), {0, 5}), g0(values(1, 1.0f), {});
    // the output's storage is larger than its empty view: nothing of it may be written
    DeviceTensor out0(values(4, kSentinel), {4}, {0, 5}, {5, 1}, 0, ACL_FLOAT);
    DeviceTensor seven(values(7, 1.0f), {7}), mismatched(values(3, kSentinel), {3});
    DeviceTensor mean_out(values(1, kSentinel), {}),
        sum_out(values(3, kSentinel), {3}, {1}, {1}, 2, ACL_FLOAT);
    const auto run = [](Op op, const Call& c) {
        uint64_t workspace = 99;
        aclOpExecutor* executor = nullptr;
        ASSERT_EQ(first_phase(op, c, &workspace, &executor), ACLNN_SUCCESS) << message();
        EXPECT_EQ(workspace, 0u);
        ASSERT_EQ(second_phase(op, nullptr, 0, executor), ACLNN_SUCCESS) << message();
        ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    };
    for (Op op : kGradients) {
        for (int64_t reduction : {0, 1, 2}) {
            run(op, Call{g0, s0, t0, w, p, reduction, out0});
            // An empty self skips the gradients' shape checks.
            run(op, Call{seven, s0, seven, seven, seven, reduction, mismatched});
        }
    }
    run(Op::kLoss, Call{nullptr, s0, t0, w, p, 0, out0});
    EXPECT_EQ(out0.storage(), values(4, kSentinel)) << "nothing is written";
    EXPECT_EQ(mismatched.storage(), values(3, kSentinel)) << "nothing is written";
    // mean writes NaN, sum writes 0 (into the view of a [1] out at offset 2 only)
    run(Op::kLoss, Call{nullptr, s0, t0, nullptr, nullptr, 1, mean_out});
    EXPECT_TRUE(std::isnan(mean_out.storage()[0])) << mean_out.storage()[0];
    run(Op::kLoss, Call{nullptr, s0, t0, w, nullptr, 2, sum_out});
    EXPECT_EQ(sum_out.storage(), (std::vector<float>{kSentinel, kSentinel, 0.0f}));
}

TEST_F(BceWithLogitsChecks, TheEmptyLossWritesInOutsDtype) {
    for (aclDataType dtype : {ACL_FLOAT16, ACL_BF16}) {
        DeviceTensor s0(values(0, 0), {3, 0}, dtype), t0(values(0, 0), {3, 0}, dtype);
        // 1.5: exact in every dtype
        DeviceTensor mean_out(values(2, 1.5f), {2}, {1}, {1}, 1, dtype), sum_out(values(1, 1.5f), {}, dtype);
        EXPECT_EQ(nnplug::test::run_op(nnplug::test::op_named("binary_cross_entropy_with_logits"),
                                       {s0, t0, nullptr, nullptr, mean_out}, {1}),
                  ACLNN_SUCCESS)
            << message();
        const auto mean = mean_out.storage();
        EXPECT_EQ(mean[0], 1.5f) << "outside the view";
        EXPECT_TRUE(std::isnan(mean[1])) << mean[1];
        EXPECT_EQ(nnplug::test::run_op(nnplug::test::op_named("binary_cross_entropy_with_logits"),
                                       {s0, t0, nullptr, nullptr, sum_out}, {2}),
                  ACLNN_SUCCESS)
            << message();
        EXPECT_EQ(sum_out.storage_bytes(), std::vector<uint8_t>(2, 0)) << "+0 in 16 bits";
    }
}

// --- data ----------------------------------------------------------------------------

TEST_F(BceWithLogitsChecks, ATensorWithoutDataIsANullptrError) {
    auto& [g, s, t, w, p, out, loss] = operands();
    const int64_t dims[] = {4, 5}, strides[] = {5, 1};
    aclTensor* no_data = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, nullptr);
    ASSERT_NE(no_data, nullptr) << message();
    for (Op op : kAll) {
        Call c = full(op);
        c.target = no_data;
        expect_refused(op, c, ACLNN_ERR_PARAM_NULLPTR, "target has no data (tensorData is null)", {&out});
    }
    aclDestroyTensor(no_data);
}

// --- bfloat16 on a SoC without it ----------------------------------------------------

// atlas_emu emulating an Ascend910 (Atlas training), whatever NNPLUG_BACKEND says.
class BceWithLogitsOnAscend910 : public nnplug::test::RuntimeTest {
protected:
    std::string config_text() const override {
        return "backend: atlas_emu\nbackends:\n  atlas_emu:\n    soc: Ascend910\n";
    }
    nnplug::test::ScopedEnvironment no_override_{"NNPLUG_BACKEND", nullptr};
};

TEST_F(BceWithLogitsOnAscend910, Bfloat16IsRefusedAtTheFirstPhase) {
    ASSERT_STREQ(aclrtGetSocName(), "Ascend910");
    const std::vector<float> four = {0.25f, -0.5f, 0.75f, 2.0f};
    DeviceTensor g(four, {4}), s(four, {4}), t(four, {4}), out(values(4, kSentinel), {4}),
        loss(values(1, 0), {});
    DeviceTensor bf16(four, {4}, ACL_BF16), out_bf16(values(4, kSentinel), {4}, ACL_BF16);
    for (Op op : kAll) {
        expect_refused(op, Call{g, bf16, t, nullptr, nullptr, 0, out}, ACLNN_ERR_PARAM_INVALID,
                       "self has dtype bfloat16, which SoC Ascend910 does not support", {&out});
        expect_refused(op, Call{g, s, t, nullptr, bf16, 0, out}, ACLNN_ERR_PARAM_INVALID,
                       "posWeightOptional has dtype bfloat16, which SoC Ascend910 does not support", {&out});
        expect_refused(op, Call{g, s, bf16, nullptr, nullptr, 0, out_bf16}, ACLNN_ERR_PARAM_INVALID,
                       "target has dtype bfloat16, which SoC Ascend910 does not support", {&out_bf16});
        // float16 and float32 are fine there
        DeviceTensor s16(four, {4}, ACL_FLOAT16);
        uint64_t workspace = 0;
        aclOpExecutor* executor = nullptr;
        EXPECT_EQ(first_phase(op, Call{g, s16, t, s16, nullptr, 0, out}, &workspace, &executor),
                  ACLNN_SUCCESS)
            << message();
        EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
    }
    for (Op op : kGradients) {
        expect_refused(op, Call{bf16, s, t, nullptr, nullptr, 0, out}, ACLNN_ERR_PARAM_INVALID,
                       "gradOutput has dtype bfloat16, which SoC Ascend910 does not support", {&out});
    }
}

// --- before aclInit ------------------------------------------------------------------

TEST(BceWithLogitsChecksWithoutRuntime, OpsBeforeAclInitFailCleanly) {
    uint64_t workspace = 0;
    aclOpExecutor* executor = nullptr;
    for (Op op : kAll) {
        EXPECT_EQ(first_phase(op, Call{nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr}, &workspace,
                              &executor),
                  ACLNN_ERR_RUNTIME_ERROR);
        EXPECT_NE(message().find("aclInit has not been called"), std::string::npos) << message();
        EXPECT_EQ(message().rfind(api(op) + ":", 0), 0u) << message();
    }
}

}  // namespace
