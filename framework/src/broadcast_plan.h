// Lays operands out in an op's iteration space: NumPy broadcasting (right-aligned,
// size-1 and missing dims get stride 0), then coalescing of the dimensions that
// every operand walks contiguously, so that simple calls reach backends as 1-d.
#pragma once

#include <nnplug/plugin.h>

#include <cstdint>
#include <vector>

struct aclTensor;

namespace nnplug {

// Whether a tensor of shape `from` broadcasts to `to` (one-directional).
bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to);

// The shape a and b broadcast to together (NumPy, two-way: right-aligned, a size-1 dim
// takes the other's size); false when some aligned dims differ and neither is 1.
bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>& shape);

class BroadcastPlan {
public:
    // The iteration space is `shape` (at most NNPLUG_MAX_DIMS dims).
    explicit BroadcastPlan(const std::vector<int64_t>& shape);

    // Adds an operand that broadcasts to the shape (at most NNPLUG_MAX_OPERANDS); writes
    // its strides into tensor once finish() runs. Null tensor: an absent operand.
    void add(const aclTensor* tensor, nnplug_tensor& out);

    // Coalesces the dimensions and fills dims/ndim/numel of desc and the operands' strides.
    void finish(nnplug_op_desc& desc);

private:
    // Fixed arrays: the first phase plans every call and allocates nothing for it.
    struct Operand {
        nnplug_tensor* target;
        int64_t strides[NNPLUG_MAX_DIMS];  // aligned with shape_
    };
    int64_t shape_[NNPLUG_MAX_DIMS];
    size_t rank_;
    Operand operands_[NNPLUG_MAX_OPERANDS];
    size_t operand_count_ = 0;
};

}  // namespace nnplug
