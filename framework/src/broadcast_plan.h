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

    // Adds an operand whose strides are already aligned with the shape (one per dim).
    void add_aligned(const int64_t* strides, nnplug_tensor& out);

    // Coalesces the dimensions and fills dims/ndim/numel of desc and the operands' strides.
    void finish(nnplug_op_desc& desc);

    // The same for an op with a class axis: the dims before `axis` and those after it are
    // coalesced each on their own, the axis is kept whole, and a side with no dim left gets
    // one of size 1, so desc.dims is [outer..., C, inner...] and desc.class_axis its axis.
    void finish_around(size_t axis, nnplug_op_desc& desc);

private:
    // Appends dims [begin, end) to desc from dim `ndim` on, dropping size-1 dims and merging
    // those every operand walks contiguously; returns the new ndim.
    int32_t coalesce(size_t begin, size_t end, nnplug_op_desc& desc, int32_t ndim);
    // Appends one dim of the given size with every operand's stride along it.
    int32_t append_dim(size_t k, nnplug_op_desc& desc, int32_t ndim);
    int32_t append_unit_dim(nnplug_op_desc& desc, int32_t ndim);

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
