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

bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>& shape) {
    const std::vector<int64_t>& longer = a.size() >= b.size() ? a : b;
    const std::vector<int64_t>& shorter = a.size() >= b.size() ? b : a;
    std::vector<int64_t> result(longer);
    const size_t lead = longer.size() - shorter.size();
    for (size_t i = 0; i < shorter.size(); ++i) {
        const int64_t x = longer[lead + i], y = shorter[i];
        if (x != y && x != 1 && y != 1) return false;
        result[lead + i] = x == 1 ? y : x;
    }
    shape = std::move(result);
    return true;
}

BroadcastPlan::BroadcastPlan(const std::vector<int64_t>& shape) : rank_(shape.size()) {
    assert(rank_ <= NNPLUG_MAX_DIMS);
    for (size_t k = 0; k < rank_; ++k) shape_[k] = shape[k];
}

void BroadcastPlan::add(const aclTensor* tensor, nnplug_tensor& out) {
    assert(operand_count_ < NNPLUG_MAX_OPERANDS);
    Operand& operand = operands_[operand_count_++];
    operand.target = &out;
    for (size_t k = 0; k < rank_; ++k) operand.strides[k] = 0;
    if (tensor != nullptr) {
        const size_t lead = rank_ - tensor->view_dims.size();
        for (size_t i = 0; i < tensor->view_dims.size(); ++i)
            operand.strides[lead + i] = tensor->view_dims[i] == 1 ? 0 : tensor->strides[i];
    }
}

void BroadcastPlan::add_aligned(const int64_t* strides, nnplug_tensor& out) {
    assert(operand_count_ < NNPLUG_MAX_OPERANDS);
    Operand& operand = operands_[operand_count_++];
    operand.target = &out;
    for (size_t k = 0; k < rank_; ++k) operand.strides[k] = shape_[k] == 1 ? 0 : strides[k];
}

int32_t BroadcastPlan::append_dim(size_t k, nnplug_op_desc& desc, int32_t ndim) {
    desc.dims[ndim] = shape_[k];
    for (size_t o = 0; o < operand_count_; ++o) operands_[o].target->strides[ndim] = operands_[o].strides[k];
    return ndim + 1;
}

int32_t BroadcastPlan::append_unit_dim(nnplug_op_desc& desc, int32_t ndim) {
    desc.dims[ndim] = 1;
    for (size_t o = 0; o < operand_count_; ++o) operands_[o].target->strides[ndim] = 0;
    return ndim + 1;
}

// Merges dim k into the last one appended where every operand steps through that one
// exactly as a continuation of k.
int32_t BroadcastPlan::coalesce(size_t begin, size_t end, nnplug_op_desc& desc, int32_t ndim) {
    const int32_t first = ndim;
    for (size_t k = begin; k < end; ++k) {
        if (shape_[k] == 1) continue;
        bool mergeable = ndim > first;
        for (size_t o = 0; o < operand_count_ && mergeable; ++o)
            mergeable = operands_[o].target->strides[ndim - 1] == operands_[o].strides[k] * shape_[k];
        if (!mergeable) {
            ndim = append_dim(k, desc, ndim);
            continue;
        }
        desc.dims[ndim - 1] *= shape_[k];
        for (size_t o = 0; o < operand_count_; ++o)
            operands_[o].target->strides[ndim - 1] = operands_[o].strides[k];
    }
    return ndim;
}

void BroadcastPlan::finish(nnplug_op_desc& desc) {
    desc.ndim = coalesce(0, rank_, desc, 0);
    desc.class_axis = -1;
    desc.numel = 1;
    for (int32_t k = 0; k < desc.ndim; ++k) desc.numel *= desc.dims[k];
}

void BroadcastPlan::finish_around(size_t axis, nnplug_op_desc& desc) {
    assert(axis < rank_);  // a side padded with a unit dim had none: at most NNPLUG_MAX_DIMS
    int32_t ndim = coalesce(0, axis, desc, 0);
    if (ndim == 0) ndim = append_unit_dim(desc, ndim);
    desc.class_axis = ndim;
    ndim = append_dim(axis, desc, ndim);
    const int32_t inner = coalesce(axis + 1, rank_, desc, ndim);
    desc.ndim = inner > ndim ? inner : append_unit_dim(desc, ndim);
    desc.numel = 1;
    for (int32_t k = 0; k < desc.ndim; ++k) desc.numel *= desc.dims[k];
}

}  // namespace nnplug
