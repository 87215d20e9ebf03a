// Walks a linear range of an op's iteration space as runs along the innermost
// dimension, tracking each operand's element offset, so kernels see 1-d runs.
#pragma once

#include <nnplug/plugin.h>

#include <array>
#include <cstdint>

namespace nnplug::cpu {

constexpr int kOperands = 5;  // grad_output, self, target, weight, out
enum Operand { kGrad = 0, kSelf = 1, kTarget = 2, kWeight = 3, kOut = 4 };

inline std::array<const nnplug_tensor*, kOperands> operands_of(const nnplug_op_desc& desc) {
    return {&desc.grad_output, &desc.self, &desc.target, &desc.weight, &desc.out};
}

// Calls run(offsets, inner_strides, length) for every inner run within [begin, end);
// offsets are element offsets of each operand's first element of the run.
template <typename RunFn>
void for_each_run(const nnplug_op_desc& desc, int64_t begin, int64_t end, RunFn&& run) {
    const auto tensors = operands_of(desc);
    const int ndim = desc.ndim;
    std::array<int64_t, kOperands> inner{};
    std::array<int64_t, kOperands> offset{};
    if (ndim == 0) {  // a 0-d iteration space has exactly one element
        for (int o = 0; o < kOperands; ++o) offset[o] = tensors[o]->offset;
        if (begin < end) run(offset, inner, int64_t{1});
        return;
    }
    std::array<int64_t, NNPLUG_MAX_DIMS> index{};
    int64_t remainder = begin;
    for (int k = ndim - 1; k >= 0; --k) {
        index[k] = remainder % desc.dims[k];
        remainder /= desc.dims[k];
    }
    for (int o = 0; o < kOperands; ++o) {
        inner[o] = tensors[o]->strides[ndim - 1];
        offset[o] = tensors[o]->offset;
        for (int k = 0; k < ndim; ++k) offset[o] += index[k] * tensors[o]->strides[k];
    }
    const int64_t inner_size = desc.dims[ndim - 1];
    int64_t position = begin;
    while (position < end) {
        const int64_t length = std::min(inner_size - index[ndim - 1], end - position);
        run(offset, inner, length);
        position += length;
        if (position >= end) break;
        // Step to the start of the next run: carry through the outer dimensions.
        for (int o = 0; o < kOperands; ++o) offset[o] += length * inner[o];
        index[ndim - 1] += length;
        for (int k = ndim - 1; k > 0 && index[k] == desc.dims[k]; --k) {
            index[k] = 0;
            ++index[k - 1];
            for (int o = 0; o < kOperands; ++o)
                offset[o] += tensors[o]->strides[k - 1] - desc.dims[k] * tensors[o]->strides[k];
        }
    }
}

}  // namespace nnplug::cpu
