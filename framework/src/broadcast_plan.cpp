#include "broadcast_plan.h"

#include <cassert>

#include "tensor.h"

namespace nnplug {

bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
    if (from.size() > to.size()) return false;
    const size_t lead = to.size() - from.size();
    for (size_t i = 0; i < from.size(); ++i)
        if (from[i] != 1 && from[i] != to[lead + i]) return false;
    return true;
}

BroadcastPlan::BroadcastPlan(const std::vector<int64_t>& shape) : shape_(shape) {
    assert(shape.size() <= NNPLUG_MAX_DIMS);
}

void BroadcastPlan::add(const aclTensor* tensor, nnplug_tensor& out) {
    std::vector<int64_t> strides(shape_.size(), 0);
    if (tensor != nullptr) {
        const size_t lead = shape_.size() - tensor->view_dims.size();
        for (size_t i = 0; i < tensor->view_dims.size(); ++i)
            strides[lead + i] = tensor->view_dims[i] == 1 ? 0 : tensor->strides[i];
    }
    operands_.push_back({&out, std::move(strides)});
}

void BroadcastPlan::finish(nnplug_op_desc& desc) {
    // Drop size-1 dimensions, then merge dim k into k+1 where every operand steps
    // through k exactly as a continuation of k+1.
    std::vector<int64_t> dims;
    std::vector<std::vector<int64_t>> strides(operands_.size());
    for (size_t k = 0; k < shape_.size(); ++k) {
        if (shape_[k] == 1) continue;
        bool mergeable = !dims.empty();
        for (size_t o = 0; o < operands_.size() && mergeable; ++o)
            mergeable = strides[o].back() == operands_[o].strides[k] * shape_[k];
        if (mergeable) {
            dims.back() *= shape_[k];
            for (size_t o = 0; o < operands_.size(); ++o) strides[o].back() = operands_[o].strides[k];
        } else {
            dims.push_back(shape_[k]);
            for (size_t o = 0; o < operands_.size(); ++o) strides[o].push_back(operands_[o].strides[k]);
        }
    }
    desc.ndim = static_cast<int32_t>(dims.size());
    desc.numel = 1;
    for (size_t k = 0; k < dims.size(); ++k) {
        desc.dims[k] = dims[k];
        desc.numel *= dims[k];
    }
    for (size_t o = 0; o < operands_.size(); ++o)
        for (size_t k = 0; k < dims.size(); ++k) operands_[o].target->strides[k] = strides[o][k];
}

}  // namespace nnplug
