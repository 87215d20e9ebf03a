// Broadcasting to the iteration space and coalescing of dimensions.
#include "broadcast_plan.h"

#include <gtest/gtest.h>

#include "tensor.h"

namespace {

// The backward's slots: the plan only needs distinct operands.
enum Slot {
    kGrad = NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT,
    kSelf = NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF,
    kTarget = NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET,
    kWeight = NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT,
    kOut = NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT
};

aclTensor make(std::vector<int64_t> dims, std::vector<int64_t> strides) {
    aclTensor tensor;
    tensor.view_dims = std::move(dims);
    tensor.strides = std::move(strides);
    return tensor;
}

TEST(BroadcastsTo, FollowsNumpyRules) {
    EXPECT_TRUE(nnplug::broadcasts_to({}, {4, 5}));
    EXPECT_TRUE(nnplug::broadcasts_to({1}, {4, 5}));
    EXPECT_TRUE(nnplug::broadcasts_to({5}, {4, 5}));
    EXPECT_TRUE(nnplug::broadcasts_to({4, 1}, {4, 5}));
    EXPECT_FALSE(nnplug::broadcasts_to({3, 5}, {4, 5}));
    EXPECT_FALSE(nnplug::broadcasts_to({4}, {4, 5}));
    EXPECT_FALSE(nnplug::broadcasts_to({1}, {}));
    EXPECT_FALSE(nnplug::broadcasts_to({1, 4, 5}, {4, 5}));
}

std::vector<int64_t> common(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> shape{-1};
    if (!nnplug::broadcast_shapes(a, b, shape)) return {-1};
    return shape;
}

TEST(BroadcastShapes, FollowsNumpyTwoWayRules) {
    using Shape = std::vector<int64_t>;
    EXPECT_EQ(common({}, {}), Shape{});
    EXPECT_EQ(common({}, {4, 5}), (Shape{4, 5}));
    EXPECT_EQ(common({4, 5}, {}), (Shape{4, 5}));
    EXPECT_EQ(common({4, 1}, {1, 5}), (Shape{4, 5}));
    EXPECT_EQ(common({1, 5}, {4, 1}), (Shape{4, 5}));
    EXPECT_EQ(common({3, 1, 5}, {4, 1}), (Shape{3, 4, 5}));
    EXPECT_EQ(common({5}, {2, 3, 1}), (Shape{2, 3, 5}));
    EXPECT_EQ(common({0, 1}, {1, 7}), (Shape{0, 7}));  // a size-1 dim takes the other's 0
    EXPECT_EQ(common({1}, {0}), Shape{0});
    EXPECT_EQ(common({3, 5}, {4, 5}), Shape{-1});
    EXPECT_EQ(common({4}, {4, 5}), Shape{-1});  // right-aligned: 4 meets 5
    EXPECT_EQ(common({0}, {2}), Shape{-1});     // 0 is a size like any other
}

TEST(BroadcastPlan, ContiguousOperandsCoalesceToOneDimension) {
    const aclTensor a = make({2, 3, 4}, {12, 4, 1});
    nnplug_op_desc desc{};
    nnplug::BroadcastPlan plan({2, 3, 4});
    plan.add(&a, desc.operands[kSelf]);
    plan.add(&a, desc.operands[kOut]);
    plan.finish(desc);
    ASSERT_EQ(desc.ndim, 1);
    EXPECT_EQ(desc.dims[0], 24);
    EXPECT_EQ(desc.numel, 24);
    EXPECT_EQ(desc.operands[kSelf].strides[0], 1);
}

TEST(BroadcastPlan, ScalarAndRowBroadcastGetZeroStrides) {
    const aclTensor self = make({4, 5}, {5, 1});
    const aclTensor scalar = make({}, {});
    const aclTensor row = make({5}, {1});
    nnplug_op_desc desc{};
    nnplug::BroadcastPlan plan({4, 5});
    plan.add(&scalar, desc.operands[kGrad]);
    plan.add(&self, desc.operands[kSelf]);
    plan.add(&row, desc.operands[kWeight]);
    plan.finish(desc);
    ASSERT_EQ(desc.ndim, 2);
    EXPECT_EQ(desc.operands[kGrad].strides[0], 0);
    EXPECT_EQ(desc.operands[kGrad].strides[1], 0);
    EXPECT_EQ(desc.operands[kWeight].strides[0], 0);
    EXPECT_EQ(desc.operands[kWeight].strides[1], 1);
    EXPECT_EQ(desc.operands[kSelf].strides[0], 5);
}

TEST(BroadcastPlan, TransposedOperandKeepsBothDimensions) {
    const aclTensor self = make({3, 2}, {2, 1});
    const aclTensor transposed = make({3, 2}, {1, 3});
    nnplug_op_desc desc{};
    nnplug::BroadcastPlan plan({3, 2});
    plan.add(&self, desc.operands[kSelf]);
    plan.add(&transposed, desc.operands[kTarget]);
    plan.finish(desc);
    ASSERT_EQ(desc.ndim, 2);
    EXPECT_EQ(desc.operands[kTarget].strides[0], 1);
    EXPECT_EQ(desc.operands[kTarget].strides[1], 3);
}

TEST(BroadcastPlan, SizeOneDimensionsAreDropped) {
    const aclTensor self = make({1, 4, 1}, {4, 1, 1});
    nnplug_op_desc desc{};
    nnplug::BroadcastPlan plan({1, 4, 1});
    plan.add(&self, desc.operands[kSelf]);
    plan.finish(desc);
    ASSERT_EQ(desc.ndim, 1);
    EXPECT_EQ(desc.dims[0], 4);
}

}  // namespace
