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

class BroadcastPlan {
public:
    // The iteration space is `shape` (at most NNPLUG_MAX_DIMS dims).
    explicit BroadcastPlan(const std::vector<int64_t>& shape);

    // Adds an operand that broadcasts to the shape; writes its strides into tensor
    // once finish() runs. Null tensor: an absent operand.
    void add(const aclTensor* tensor, nnplug_tensor& out);

    // Coalesces the dimensions and fills dims/ndim/numel of desc and the operands' strides.
    void finish(nnplug_op_desc& desc);

private:
    struct Operand {
        nnplug_tensor* target;
        std::vector<int64_t> strides;  // aligned with shape_
    };
    std::vector<int64_t> shape_;
    std::vector<Operand> operands_;
};

}  // namespace nnplug
